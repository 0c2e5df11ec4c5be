// Response and query schemas of balance transactions (GET /v1/balance-transactions) and the partner's fee balance
// (GET /v1/partner/balance): the ledger's movements on a partner's money, as a finance team reconciles them.
import { z } from 'zod';
import { allCurrencies } from '../domain/money';
import { balanceSourceTypes } from '../domain/reconciliation';
import { paginationQuerySchema } from './pagination';
import { timestampSchema } from './common';

const currencySchema = z.enum(allCurrencies);

export const balanceTransactionSchema = z
  .object({
    id: z.uuid().meta({ description: 'The ledger entry.' }),
    account: z.enum(['wallet', 'partner_fees']).meta({
      description:
        '`wallet`: a wallet’s spendable balance (`wallet_id`). `partner_fees`: the partner fees the service collected ' +
        'on your behalf and owes you (GET /v1/partner/balance).',
    }),
    wallet_id: z.uuid().nullable().meta({ description: 'The wallet, for `account: wallet`; otherwise null.' }),
    currency: currencySchema,
    amount: z.string().meta({
      description:
        'Signed decimal string at the currency’s decimals: positive credits the account, negative debits it.',
      example: '-25.000000',
    }),
    balance_after: z
      .string()
      .nullable()
      .meta({
        description:
          'The wallet’s balance right after this movement (decimal string). Null for `partner_fees`: that balance ' +
          'is a sum that is never locked, so it has no order of its own (GET /v1/partner/balance has its total).',
        example: '75.000000',
      }),
    source: z
      .object({
        type: z.enum(balanceSourceTypes).meta({
          description:
            '`transaction`: a pay-in, payout or fiat to fiat (`id` its id). `wallet_transfer`: a wallet transfer. ' +
            '`sandbox_funding`: test money (`id` the posting).',
        }),
        id: z.string(),
        step: z
          .string()
          .nullable()
          .meta({
            description:
              'The step of its lifecycle that moved the money: `deposit`, `funding`, `fiat_to_stablecoin`, ' +
              '`delivered`, `stablecoin_to_fiat`, `payout`, `sell_back`, `refund` (transactions); `hold`, `delivered`, ' +
              '`returned` (wallet transfers); null for sandbox funding.',
          }),
      })
      .meta({ description: 'What caused the movement.' }),
    created_at: timestampSchema,
  })
  .meta({ id: 'BalanceTransaction' });

export type BalanceTransactionResource = z.input<typeof balanceTransactionSchema>;

export const listBalanceTransactionsQuerySchema = paginationQuerySchema
  .extend({
    wallet_id: z
      .string()
      .optional()
      .meta({ description: 'Only movements of this wallet; a wallet that is not yours answers 404.' }),
    currency: currencySchema.optional().meta({ description: 'Only movements in this currency.' }),
    source_type: z.enum(balanceSourceTypes).optional().meta({ description: 'Only movements caused by this kind.' }),
  })
  .strict();

export const partnerBalanceSchema = z
  .object({
    partner_fees: z.array(z.object({ currency: currencySchema, amount: z.string().meta({ example: '12.50' }) })).meta({
      description:
        'Partner fees collected on your behalf and owed to you, per currency (those with movements): the sum of ' +
        'your `partner_fees` balance transactions (a refund gives its fee back).',
    }),
  })
  .meta({ id: 'PartnerBalance' });
