// The quotes table: a quote's row and its status changes (active, used by one consumer, expired), which the
// quote's lifetime workflow decides.
import type { Quote as QuoteRow } from '@prisma/client';
import { sqlPoolOf, type Db, type Prisma, type PrismaClient, type SqlTransaction } from './database';
import { insertRow, readRowById, rowByIdQuery } from './sql-rows';

export type { QuoteRow };

const quoteById = rowByIdQuery<QuoteRow>('Quote');

/** Any partner's quote by id, or null. In SQL (sql-rows.ts): every quote-based transaction reads its quote first. */
export async function findQuote(db: Db, id: string): Promise<QuoteRow | null> {
  return readRowById(db, quoteById, id);
}

/**
 * Inserts a quote in the caller's transaction and answers it as stored. In SQL (sql-rows.ts): every quote makes
 * this insert, which Prisma would compile on each call.
 */
export async function insertQuote(tx: SqlTransaction, quote: Prisma.QuoteUncheckedCreateInput): Promise<QuoteRow> {
  return insertRow<QuoteRow>(tx, 'Quote', quote);
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
