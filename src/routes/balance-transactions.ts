// HTTP operations on a partner's balance transactions and fee balance (reads of the ledger, docs/reconciliation.md).
import { listSchema } from '../schemas/pagination';
import { defineRoute } from '../http/route';
import {
  balanceTransactionSchema,
  listBalanceTransactionsQuerySchema,
  partnerBalanceSchema,
} from '../schemas/balance-transactions';
import { balanceTransactionsPage, partnerBalance } from '../services/balance-transactions';

const tag = 'Balance transactions';

const listBalanceTransactionsRoute = defineRoute({
  method: 'get',
  path: '/v1/balance-transactions',
  operationId: 'listBalanceTransactions',
  tag,
  summary: 'List balance transactions',
  description:
    'Every movement of your money in the ledger, newest first: on your wallets’ spendable balances (with the balance ' +
    'right after it) and on the partner fees collected for you. Each names the transaction or wallet transfer, and the ' +
    'step, that caused it; the movements of a wallet add up to its balance. Filters: `wallet_id` (404 if not ' +
    'yours), `currency`, `source_type`, and the dates of the movements.',
  query: listBalanceTransactionsQuerySchema,
  response: {
    status: 200,
    description: 'A page of balance transactions.',
    schema: listSchema(balanceTransactionSchema, 'BalanceTransactionList'),
  },
  errors: ['not_found'],
  async handler({ query, partner, services }) {
    return balanceTransactionsPage(services.prisma, partner.id, query);
  },
});

const getPartnerBalance = defineRoute({
  method: 'get',
  path: '/v1/partner/balance',
  operationId: 'getPartnerBalance',
  tag,
  summary: 'Get your fee balance',
  description: 'The partner fees collected on your behalf, per currency (the `partner_fees` balance transactions).',
  response: { status: 200, description: 'Your fee balance.', schema: partnerBalanceSchema },
  async handler({ partner, services }) {
    return partnerBalance(services.prisma, partner.id);
  },
});

export const balanceTransactionRoutes = [listBalanceTransactionsRoute, getPartnerBalance];
