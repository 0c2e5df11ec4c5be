// HTTP operations on transactions (SPEC 4.4, 3.3): fiat to fiat, view, cancel, list, and the
// sandbox's simulated deposit.
import { listSchema, paginate } from '../http/pagination';
import { defineRoute, idParam } from '../http/route';
import { toTransaction, withReceiverAccount } from '../presenters/transactions';
import { ownedCustomerFilter } from '../services/customers';
import {
  cancelTransaction,
  createFiatToFiat,
  findTransactionOrThrow,
  receiveSandboxDeposit,
} from '../services/transactions';
import {
  createFiatToFiatRequestSchema,
  depositSchema,
  listTransactionsQuerySchema,
  sandboxDepositRequestSchema,
  transactionSchema,
  updateTransactionRequestSchema,
} from '../schemas/transactions';

const tag = 'Transactions';

const lifecycle = `
**Lifecycle**: \`awaiting_deposit\` (the sender pays per \`sender_deposit_instructions\`, with the reference, before
\`deposit_deadline\`) -> \`processing\` (deposit received; the fiat becomes the stablecoin in the wallet, then the
receiver's fiat paid to the external account) -> \`completed\`. Also: \`cancelled\` (PUT, only while awaiting the
deposit), \`failed\` (no deposit by the deadline: pix, pix_account, spei and cvu 30 minutes; sepa and wire 2 days; ach
3 days), \`refunded\` (the money went back to the sender in full, fees included: the payout was rejected, the deposit
was not the expected amount, or an operator refunded), \`error\` (a step kept failing; an operator retries it or
refunds, and the transaction goes back to \`processing\`). A transaction never goes backwards.

**Events** (the full transaction as \`event_resource\`): payin.created, payin.processing, payin.completed,
payin.cancelled, payin.failed, payin.refunded, payin.error. Fiat to fiat is a pay-in to partners: its internal payout
leg sends no payout.* events.

**Deposits**: only exactly the sender amount settles. Another amount is returned in full and the transaction ends
\`refunded\` (failure_reason \`deposit_amount_mismatch\`). A deposit after a cancellation or the deadline, or a second
one, is returned in full and the transaction does not change.`.trim();

const createFiatToFiatRoute = defineRoute({
  method: 'post',
  path: '/v1/fiat-to-fiat',
  operationId: 'createFiatToFiat',
  tag,
  summary: 'Initiate a fiat-to-fiat transaction',
  description:
    'Uses a fiat-to-fiat quote (once) to move fiat from a sender to the customer’s external account in another ' +
    'currency; the stablecoin in between is held on `wallet_id`. Answers 201 with the transaction in ' +
    '`awaiting_deposit` and its `sender_deposit_instructions`; event payin.created.\n\n' +
    '**Checks**, each refusing with nothing created and the quote still usable: the quote is a fiat-to-fiat quote of ' +
    'yours (404; another type: 400 on quote_id), not expired (`quote_expired`), not used (`quote_already_used`); the ' +
    'customer is yours and approved (`customer_not_approved`); wallet and external account are yours (404) and the ' +
    'customer’s (`customer_mismatch`); the wallet is on the quote’s stablecoin chain and the external account on its ' +
    'receiver rail (`quote_currency_mismatch`); the external account is not rejected (`external_account_rejected`); ' +
    'a rate-only quote needs `sender.amount` or `receiver.amount` (priced with the locked rates; ' +
    '`amount_out_of_range`), a quote with amounts takes none.\n\n' +
    lifecycle,
  body: createFiatToFiatRequestSchema,
  response: { status: 201, description: 'The transaction, awaiting the deposit.', schema: transactionSchema },
  errors: [
    'not_found',
    'quote_expired',
    'quote_already_used',
    'customer_not_approved',
    'customer_mismatch',
    'quote_currency_mismatch',
    'external_account_rejected',
    'amount_out_of_range',
    'service_unavailable',
  ],
  async handler({ body, partner, services }) {
    return createFiatToFiat(services, partner.id, body);
  },
});

const getTransaction = defineRoute({
  method: 'get',
  path: '/v1/transactions/{id}',
  operationId: 'getTransaction',
  tag,
  summary: 'Get a transaction',
  description: lifecycle,
  params: idParam('id', 'Transaction id.'),
  response: { status: 200, description: 'The transaction.', schema: transactionSchema },
  errors: ['not_found'],
  async handler({ params, partner, services }) {
    return toTransaction(await findTransactionOrThrow(services.prisma, partner.id, params.id as string));
  },
});

const updateTransaction = defineRoute({
  method: 'put',
  path: '/v1/transactions/{id}',
  operationId: 'cancelTransaction',
  tag,
  summary: 'Cancel a transaction',
  description:
    'Body `{"status": "cancelled"}`. Only a transaction in `awaiting_deposit` can be cancelled (otherwise 422 ' +
    '`payin_cannot_be_cancelled` naming its status); answers 200 with the cancelled transaction (event ' +
    'payin.cancelled). A cancellation and a deposit arriving together have exactly one outcome: whichever the ' +
    'transaction’s workflow takes first; the other is refused (the deposit is then returned to the sender).',
  params: idParam('id', 'Transaction id.'),
  body: updateTransactionRequestSchema,
  response: { status: 200, description: 'The cancelled transaction.', schema: transactionSchema },
  errors: ['not_found', 'payin_cannot_be_cancelled', 'service_unavailable'],
  async handler({ params, partner, services }) {
    return cancelTransaction(services, partner.id, params.id as string);
  },
});

const listTransactions = defineRoute({
  method: 'get',
  path: '/v1/transactions',
  operationId: 'listTransactions',
  tag,
  summary: 'List transactions',
  description:
    'Newest first; filters `customer_id` (404 if the customer is not yours), `type`, `status`, `start_date`, `end_date`.',
  query: listTransactionsQuerySchema,
  response: {
    status: 200,
    description: 'A page of transactions.',
    schema: listSchema(transactionSchema, 'TransactionList'),
  },
  errors: ['not_found'],
  async handler({ query, partner, services }) {
    const byCustomer = await ownedCustomerFilter(services.prisma, partner.id, query.customer_id);
    const { rows, cursor } = await paginate(query, (keyset) =>
      services.prisma.transaction.findMany({
        where: {
          partnerId: partner.id,
          ...byCustomer,
          ...(query.type ? { type: query.type } : {}),
          ...(query.status ? { status: query.status } : {}),
          ...keyset.where,
        },
        orderBy: keyset.orderBy,
        take: keyset.take,
        include: withReceiverAccount,
      }),
    );
    return { items: rows.map(toTransaction), cursor };
  },
});

const simulateDeposit = defineRoute({
  method: 'post',
  path: '/v1/sandbox/transactions/{id}/deposit',
  operationId: 'simulateTransactionDeposit',
  tag,
  environments: ['sandbox'],
  summary: 'Simulate the sender’s deposit (sandbox)',
  description:
    'As if the sender’s bank credited `amount` (in the sender currency) with the transaction’s reference. Answers 201 ' +
    'with the deposit: `accepted` (it funds the transaction, now `processing`; settlement then runs by itself), or ' +
    '`returning` (not the expected amount: the transaction is refunded; or the transaction no longer awaits a deposit: ' +
    'it is sent back and the transaction does not change). `simulate` makes this transaction fail later on purpose: ' +
    '`payout_rejected` (ends `refunded`), `conversion_error` or `payout_error` (ends in `error`, waiting for an ' +
    'operator; a retry then succeeds). Production receives deposits from the banks, with the same effect.',
  params: idParam('id', 'Transaction id.'),
  body: sandboxDepositRequestSchema,
  response: { status: 201, description: 'The deposit and what became of it.', schema: depositSchema },
  errors: ['not_found', 'service_unavailable'],
  async handler({ params, body, partner, services }) {
    return receiveSandboxDeposit(services, partner.id, params.id as string, body);
  },
});

export const transactionRoutes = [
  createFiatToFiatRoute,
  listTransactions,
  getTransaction,
  updateTransaction,
  simulateDeposit,
];
