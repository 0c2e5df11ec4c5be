// Reads of the settlement report (GET /v1/reports/settlements): a partner's transactions that reached a final status
// in a time range, found by their final event (its time is when the status was reached), in batches in keyset order
// of the events index (partner_id, event_type, created_at, id), so a report of any size is read a batch at a time.
import { Prisma, sql, sqlOf, type SqlDb } from './database';
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
  db: SqlDb,
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
    SELECT ev.id::text AS event_id, ev.created_at AS finalized_at, t.id::text AS id, t.type::text AS type,
      t.status::text AS status, t.failure_reason, t.customer_id::text AS customer_id, t.sender_currency,
      t.sender_amount, t.sender_payment_rail, t.stablecoin_currency, t.stablecoin_amount, t.stablecoin_payment_rail,
      t.receiver_currency, t.receiver_amount, t.receiver_payment_rail, t.rates::text[] AS rates, t.service_fee,
      t.partner_fee, t.network_fee, t.created_at
    FROM events ev
    JOIN transactions t ON t.id = ev.resource_id AND t.partner_id = ev.partner_id
    WHERE ev.partner_id = ${query.partnerId}::uuid AND ev.event_type = ANY(${finalEventTypes}::text[])
      AND ev.created_at >= ${query.from} AND ev.created_at < ${query.to}
      AND ${after ? sql`(ev.created_at, ev.id) > (${after.finalizedAt}, ${after.eventId}::uuid)` : sql`true`}
    ORDER BY ev.created_at, ev.id
    LIMIT ${query.limit}`.execute(sqlOf(db))
  ).rows as Array<Omit<SettlementRow, 'rates'> & { rates: string[] }>;
  return rows.map((row) => ({ ...row, rates: row.rates.map((rate) => new Prisma.Decimal(rate)) }));
}
