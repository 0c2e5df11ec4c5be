// The quotes table: a quote's row and its status changes (active, used by one consumer, expired), which the
// quote's lifetime workflow decides.
import type { Quote as QuoteRow } from './generated/prisma/client';
import type { Insertable } from 'kysely';
import {
  type DatabaseTransaction,
  type DB,
  decimalOf,
  type DecimalText,
  sqlOf,
  type Database,
} from './internal/database';

export type { QuoteRow };

/** Any partner's quote by id, or null: every quote-based transaction reads its quote first. */
export async function findQuote(db: Database, id: string): Promise<QuoteRow | null> {
  const row = await sqlOf(db).selectFrom('quotes').selectAll().where('id', '=', id).executeTakeFirst();
  return row ?? null;
}

/** A quote as written by its create. */
export type NewQuote = Omit<Insertable<DB['quotes']>, 'createdAt' | 'updatedAt' | 'rates'> & { createdAt?: Date } & {
  rates: DecimalText[];
};

/** Inserts a quote in the caller's database transaction and answers it as stored. */
export async function insertQuote(tx: DatabaseTransaction, quote: NewQuote): Promise<QuoteRow> {
  const now = quote.createdAt ?? new Date();
  return sqlOf(tx)
    .insertInto('quotes')
    .values({ ...quote, rates: quote.rates.map(decimalOf), createdAt: now, updatedAt: now })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** What decides whether a quote may change hands: its status and who used it. */
export async function findQuoteUse(
  db: Database,
  id: string,
): Promise<{ status: string; usedBy: string | null } | null> {
  const row = await sqlOf(db).selectFrom('quotes').select(['status', 'usedBy']).where('id', '=', id).executeTakeFirst();
  return row ?? null;
}

// The quote's four moves below are one conditional UPDATE each (status, and the consumer where it matters, in the
// WHERE), so a move made twice, or raced by another, changes nothing the second time.

/** active -> used by `consumerId`; false when the quote was not active (every settlement makes this step). */
export async function recordQuoteUse(db: Database, id: string, consumerId: string, usedAt: Date): Promise<boolean> {
  const updated = await sqlOf(db)
    .updateTable('quotes')
    .set({ status: 'used', usedBy: consumerId, usedAt, updatedAt: usedAt })
    .where('id', '=', id)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return updated.numUpdatedRows === 1n;
}

/** used by `consumerId` -> active; false when it was not used by that consumer. */
export async function clearQuoteUse(db: Database, id: string, consumerId: string): Promise<boolean> {
  const updated = await sqlOf(db)
    .updateTable('quotes')
    .set({ status: 'active', usedBy: null, usedAt: null, updatedAt: new Date() })
    .where('id', '=', id)
    .where('status', '=', 'used')
    .where('usedBy', '=', consumerId)
    .executeTakeFirst();
  return updated.numUpdatedRows === 1n;
}

/** active -> expired; nothing for a quote in another status or without a row. */
export async function expireActiveQuote(db: Database, id: string): Promise<void> {
  await sqlOf(db)
    .updateTable('quotes')
    .set({ status: 'expired', updatedAt: new Date() })
    .where('id', '=', id)
    .where('status', '=', 'active')
    .execute();
}

/** used by `consumerId` -> expired, the use cleared; nothing for a quote used by another consumer. */
export async function expireUsedQuote(db: Database, id: string, consumerId: string): Promise<void> {
  await sqlOf(db)
    .updateTable('quotes')
    .set({ status: 'expired', usedBy: null, usedAt: null, updatedAt: new Date() })
    .where('id', '=', id)
    .where('status', '=', 'used')
    .where('usedBy', '=', consumerId)
    .execute();
}
