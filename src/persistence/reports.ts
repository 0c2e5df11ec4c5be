// Reads of the settlement report (GET /v1/reports/settlements): a partner's transactions that reached a final status
// in a time range, found by their final event (its time is when the status was reached), in batches in keyset order
// of the events index (partner_id, event_type, created_at, id), so a report of any size is read a batch at a time.
// Each batch also reads what its transactions' ledger postings moved (deposit, refund, sell-back), in the same query.
import { sqlOf, type Database } from './internal/database';
import { Prisma } from './generated/prisma/client';
import { sql } from 'kysely';
import type { TransactionStatus, TransactionType } from '../domain/transactions';

export interface SettlementRow {
  eventId: string;
  finalizedAt: Date;
  id: string;
  type: TransactionType;
  status: TransactionStatus;
  failureReason: string | null;
  customerId: string;
  senderCurrency: string;
  senderAmount: Prisma.Decimal;
  senderPaymentRail: string;
  stablecoinCurrency: string | null;
  stablecoinAmount: Prisma.Decimal | null;
  stablecoinPaymentRail: string | null;
  receiverCurrency: string;
  receiverAmount: Prisma.Decimal;
  receiverPaymentRail: string;
  rates: Prisma.Decimal[];
  serviceFee: Prisma.Decimal;
  partnerFee: Prisma.Decimal;
  networkFee: Prisma.Decimal;
  createdAt: Date;
  /** What the `deposit` posting took in from `settlement`; null when none was posted (none came, a wallet's payout). */
  depositReceived: Prisma.Decimal | null;
  /** What the `refund` posting paid out to `settlement`; null when it paid nothing out (or there was no refund). */
  returnedToSender: Prisma.Decimal | null;
  /** What the exchange paid for the stablecoin sold back (the `sell_back` posting's `fx` entry); null without one. */
  sellBackProceeds: Prisma.Decimal | null;
  /** The `sell_back` posting's `fx_gain_loss` entry (negative: a loss), 0 at the locked rate; null without one. */
  fxGainLoss: Prisma.Decimal | null;
}

/** The final events of transactions (SPEC 6 groups: fiat to fiat is announced as a pay-in). */
const finalEventTypes = ['payin', 'payout'].flatMap((group) =>
  ['completed', 'refunded', 'cancelled', 'failed'].map((status) => `${group}.${status}`),
);

/**
 * One batch of the transactions of `partnerId` whose final event is in [from, to), ordered by that event, after
 * `after` (the last row of the previous batch).
 */
export async function settlementBatch(
  db: Database,
  query: {
    partnerId: string;
    from: Date;
    to: Date;
    after: { finalizedAt: Date; eventId: string } | null;
    limit: number;
  },
): Promise<SettlementRow[]> {
  const { after } = query;
  const rows = (
    await sql`
    WITH batch AS (
      SELECT ev.id AS event_id, ev.created_at AS finalized_at, t.id, t.type, t.status, t.failure_reason, t.customer_id,
        t.sender_currency, t.sender_amount, t.sender_payment_rail, t.stablecoin_currency, t.stablecoin_amount,
        t.stablecoin_payment_rail, t.receiver_currency, t.receiver_amount, t.receiver_payment_rail, t.rates,
        t.service_fee, t.partner_fee, t.network_fee, t.created_at
      FROM events ev
      JOIN transactions t ON t.id = ev.resource_id AND t.partner_id = ev.partner_id
      WHERE ev.partner_id = ${query.partnerId}::uuid AND ev.event_type = ANY(${finalEventTypes}::text[])
        AND ev.created_at >= ${query.from} AND ev.created_at < ${query.to}
        AND ${after ? sql`(ev.created_at, ev.id) > (${after.finalizedAt}, ${after.eventId}::uuid)` : sql`true`}
      ORDER BY ev.created_at, ev.id
      LIMIT ${query.limit}
    )
    SELECT b.event_id::text AS event_id, b.finalized_at, b.id::text AS id, b.type::text AS type,
      b.status::text AS status, b.failure_reason, b.customer_id::text AS customer_id, b.sender_currency,
      b.sender_amount, b.sender_payment_rail, b.stablecoin_currency, b.stablecoin_amount, b.stablecoin_payment_rail,
      b.receiver_currency, b.receiver_amount, b.receiver_payment_rail, b.rates::text[] AS rates, b.service_fee,
      b.partner_fee, b.network_fee, b.created_at, moved.deposit_received, moved.returned_to_sender,
      moved.sell_back_proceeds, moved.fx_gain_loss
    FROM batch b
    LEFT JOIN LATERAL (
      -- The entries of the steps that move the sender money (src/domain/ledger.ts, settlementEntries), found by
      -- reference on its unique index, in the sender currency (the stablecoin side of a sell-back left out). A sum
      -- over no entry is null: that step did not move this money.
      SELECT -sum(e.amount) FILTER (WHERE p.step = 'deposit' AND a.system_code = 'settlement') AS deposit_received,
        sum(e.amount) FILTER (WHERE p.step = 'refund' AND a.system_code = 'settlement') AS returned_to_sender,
        -sum(e.amount) FILTER (WHERE p.step = 'sell_back' AND a.system_code = 'fx') AS sell_back_proceeds,
        -- A sell-back at exactly the locked rate posts no fx_gain_loss entry: 0, not null.
        CASE WHEN bool_or(p.step = 'sell_back') THEN
          COALESCE(sum(e.amount) FILTER (WHERE p.step = 'sell_back' AND a.system_code = 'fx_gain_loss'), 0)
        END AS fx_gain_loss
      FROM (VALUES ('deposit'), ('sell_back'), ('refund')) AS p(step)
      JOIN ledger_transactions lt ON lt.reference = 'transaction:' || b.id::text || ':' || p.step
      JOIN ledger_entries e ON e.transaction_id = lt.id AND e.currency = b.sender_currency
      JOIN ledger_accounts a ON a.id = e.account_id
    ) moved ON true
    ORDER BY b.finalized_at, b.event_id`.execute(sqlOf(db))
  ).rows as Array<Omit<SettlementRow, 'rates'> & { rates: string[] }>;
  return rows.map((row) => ({ ...row, rates: row.rates.map((rate) => new Prisma.Decimal(rate)) }));
}
