// The quotes table: a quote's row and its status changes (active, used by one consumer, expired), which the
// quote's lifetime workflow decides.
import type { Quote as QuoteRow } from '@prisma/client';
import { sqlPoolOf, type Db, type Prisma, type PrismaClient, type SqlTransaction } from './database';
import { insertRow, readRowById, rowByIdQuery, type TableMap } from './sql-rows';

export type { QuoteRow };

/** The columns of a quote, read and written in SQL (sql-rows.ts). */
export const quoteTable: TableMap<QuoteRow> = {
  table: 'quotes',
  columns: {
    id: ['id'],
    partnerId: ['partner_id'],
    type: ['type'],
    status: ['status'],
    senderCurrency: ['sender_currency'],
    senderPaymentRail: ['sender_payment_rail'],
    stablecoinCurrency: ['stablecoin_currency'],
    stablecoinPaymentRail: ['stablecoin_payment_rail'],
    receiverCurrency: ['receiver_currency'],
    receiverPaymentRail: ['receiver_payment_rail'],
    fixedSide: ['fixed_side'],
    senderAmount: ['sender_amount', 'decimal'],
    stablecoinAmount: ['stablecoin_amount', 'decimal'],
    receiverAmount: ['receiver_amount', 'decimal'],
    rates: ['rates', 'decimals'],
    serviceFeeBps: ['service_fee_bps'],
    partnerFeeBps: ['partner_fee_bps'],
    partnerFlatFee: ['partner_flat_fee', 'decimal'],
    networkFee: ['network_fee', 'decimal'],
    serviceFeeAmount: ['service_fee_amount', 'decimal'],
    partnerFeeAmount: ['partner_fee_amount', 'decimal'],
    expiresAt: ['expires_at', 'date'],
    usedBy: ['used_by'],
    usedAt: ['used_at', 'date'],
    createdAt: ['created_at', 'date'],
    updatedAt: ['updated_at', 'date'],
  },
};

const quoteById = rowByIdQuery<QuoteRow>(quoteTable);

/** Any partner's quote by id, or null. In SQL (sql-rows.ts): every quote-based transaction reads its quote first. */
export async function findQuote(db: Db, id: string): Promise<QuoteRow | null> {
  return readRowById(db, quoteById, id);
}

/**
 * Inserts a quote in the caller's transaction and answers it as stored. In SQL (sql-rows.ts): every quote makes
 * this insert, which Prisma would compile on each call.
 */
export async function insertQuote(tx: SqlTransaction, quote: Prisma.QuoteUncheckedCreateInput): Promise<QuoteRow> {
  return insertRow(tx, quoteTable, quote);
}

/** What decides whether a quote may change hands: its status and who used it. */
export async function findQuoteUse(db: Db, id: string): Promise<{ status: string; usedBy: string | null } | null> {
  return db.quote.findUnique({ where: { id }, select: { status: true, usedBy: true } });
}

/**
 * active -> used by `consumerId`; false when the quote was not active. On the pool: every settlement makes this
 * step, and Prisma would compile the update on each call.
 */
export async function recordQuoteUse(
  prisma: PrismaClient,
  id: string,
  consumerId: string,
  usedAt: Date,
): Promise<boolean> {
  const updated = await sqlPoolOf(prisma).query({
    name: 'mark-quote-used',
    text: `UPDATE quotes SET status = 'used', used_by = $2, used_at = $3, updated_at = $3
      WHERE id = $1 AND status = 'active'`,
    values: [id, consumerId, usedAt],
  });
  return updated.rowCount === 1;
}

/** used by `consumerId` -> active; false when it was not used by that consumer. */
export async function clearQuoteUse(db: Db, id: string, consumerId: string): Promise<boolean> {
  const updated = await db.quote.updateMany({
    where: { id, status: 'used', usedBy: consumerId },
    data: { status: 'active', usedBy: null, usedAt: null },
  });
  return updated.count === 1;
}

/** active -> expired; nothing for a quote in another status or without a row. */
export async function expireActiveQuote(db: Db, id: string): Promise<void> {
  await db.quote.updateMany({ where: { id, status: 'active' }, data: { status: 'expired' } });
}

/** used by `consumerId` -> expired, the use cleared; nothing for a quote used by another consumer. */
export async function expireUsedQuote(db: Db, id: string, consumerId: string): Promise<void> {
  await db.quote.updateMany({
    where: { id, status: 'used', usedBy: consumerId },
    data: { status: 'expired', usedBy: null, usedAt: null },
  });
}
