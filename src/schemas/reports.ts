// The settlement report (GET /v1/reports/settlements): its query, and its columns with what each means (the route's
// description lists them; docs/reconciliation.md has the same table).
import { z } from 'zod';

export const settlementReportQuerySchema = z
  .object({
    date: z.iso
      .date()
      .meta({ description: 'The UTC day (00:00 to 24:00 UTC) the transactions reached their final status.' }),
    format: z
      .enum(['csv', 'json'])
      .optional()
      .meta({ description: '`csv` (the default) or `json`; without it, `Accept: application/json` asks for JSON.' }),
  })
  .strict();

/**
 * The report's columns, in order (CSV header = JSON keys), and what each holds. The `sender_amount`,
 * `stablecoin_amount` and `receiver_amount` columns stay the quote's (renaming them would break the files partners
 * already read by header); what really moved is in the four money columns after the fees, read from the ledger, and
 * the legs' executions at a liquidity provider's firm quotes in the last four (appended, so existing readers keep
 * their columns).
 */
export const settlementReportColumns = {
  transaction_id: 'The transaction.',
  type: '`fiat_to_fiat`, `payin` or `payout`.',
  customer_id: 'The customer the transaction is for.',
  status: 'Its final status: `completed`, `refunded`, `cancelled` or `failed`.',
  failure_reason: 'Why it was refunded or failed; null when completed or cancelled.',
  sender_currency: 'The currency the sender pays in; also the currency of the fee columns and of the four below.',
  sender_amount: 'The amount the quote asked of the sender, fees included (not necessarily what arrived).',
  sender_payment_rail: 'The rail the sender pays on.',
  stablecoin_currency: 'The stablecoin the transaction carries (a pay-in’s received, a payout’s sent).',
  stablecoin_amount: 'The stablecoin amount of the quote.',
  stablecoin_payment_rail: 'The chain of that stablecoin.',
  receiver_currency: 'The currency the receiver gets.',
  receiver_amount: 'The amount the quote promised the receiver (paid out only when `completed`).',
  receiver_payment_rail: 'The rail the receiver is paid on.',
  sender_quotation: 'The locked rate sender currency -> stablecoin; null for a payout.',
  receiver_quotation: 'The locked rate stablecoin -> receiver currency; null for a pay-in.',
  fee_currency: 'The currency of the fees (the sender currency).',
  service_fee: 'The service fee kept: the quote’s when completed, 0 otherwise (a refund gives it back).',
  partner_fee: 'Your fee kept: the quote’s when completed, 0 otherwise.',
  network_fee: 'The network fee kept: the quote’s when completed, 0 otherwise.',
  deposit_received:
    'What the deposit that funded the transaction brought in (a deposit of another amount than `sender_amount` is ' +
    'taken and refunded in full); null when none came (cancelled, failed, a payout from a wallet).',
  returned_to_sender:
    'What the refund paid back to the sender’s account: the whole deposit, fees included; null when nothing was ' +
    'paid back (not refunded, or a refunded payout from a wallet, whose amount went back to the wallet’s balance).',
  sell_back_proceeds:
    'A refund after the stablecoin was bought: what the exchange paid for it when it was sold back, at its rate ' +
    'of the moment; null when nothing was sold back.',
  fx_gain_loss:
    'The service’s gain (positive) or loss (negative) on that sell-back against the locked rate; it is not charged ' +
    'to the sender (`returned_to_sender` is the whole deposit). Null when nothing was sold back.',
  created_at: 'When the transaction was created.',
  finalized_at: 'When it reached its final status (its final event).',
  sender_executed_rate:
    'With a liquidity provider: the firm price leg 1 (sender currency -> stablecoin) executed at, to compare with ' +
    '`sender_quotation`; null when leg 1 was not executed at a firm quote.',
  sender_fx_result:
    'The service’s FX gain (positive) or loss (negative) on leg 1, in the stablecoin: what the firm quote bought ' +
    'minus what the locked rate promised (not charged to you or the sender); null with `sender_executed_rate`.',
  receiver_executed_rate:
    'With a liquidity provider: the firm price leg 2 (stablecoin -> receiver currency) executed at, to compare with ' +
    '`receiver_quotation`; null when leg 2 was not executed at a firm quote.',
  receiver_fx_result:
    'The service’s FX gain or loss on leg 2, in the receiver currency; null with `receiver_executed_rate`.',
} as const;

export type SettlementReportColumn = keyof typeof settlementReportColumns;
