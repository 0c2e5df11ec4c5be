// The one pagination helper. Lists are ordered newest first (created_at, then id, descending) and paged with keyset
// cursors, so pages stay stable while new rows arrive. Cursors are opaque base64url strings; `after` continues to
// older items, `before` goes back to newer ones. The query parameters and the envelope are src/schemas/pagination.ts.
import { z } from 'zod';
import { DomainError } from './errors';

/** Dates outside these bounds cannot name a resource of this service (and some cannot be stored). */
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const storable = (date: Date): Date | null =>
  !Number.isNaN(date.getTime()) && date.getTime() >= EARLIEST && date.getTime() <= LATEST ? date : null;
/** A filter bound outside them selects the same rows as the bound itself. */
export const clampedToStorable = (date: Date): Date | null =>
  Number.isNaN(date.getTime()) ? null : new Date(Math.min(Math.max(date.getTime(), EARLIEST), LATEST));

export interface Position {
  createdAt: Date;
  id: string;
}

function encodeCursor(position: Position): string {
  return Buffer.from(JSON.stringify([position.createdAt.toISOString(), position.id])).toString('base64url');
}

function decodeCursor(cursor: string): Position | null {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(decoded) || decoded.length !== 2) return null;
    const [createdAt, id] = decoded as unknown[];
    if (typeof createdAt !== 'string' || typeof id !== 'string' || !z.uuid().safeParse(id).success) return null;
    const date = storable(new Date(createdAt));
    return date ? { createdAt: date, id } : null;
  } catch {
    return null;
  }
}

/** What a list was asked for (the list query parameters, parsed). */
export interface PageRequest {
  limit: number;
  after?: string;
  before?: string;
  start_date?: Date;
  end_date?: Date;
}

/** The cursor of a page, as the list envelope carries it. */
export interface CursorPage {
  after: string | null;
  before: string | null;
  limit: number;
  page_count: number;
}

/**
 * One page of a list, for the persistence layer to apply (src/persistence/keyset.ts): the rows created within the
 * dates, strictly older than `after` or newer than `before` by (created_at, id), `take` of them in `direction`.
 */
export interface KeysetQuery {
  createdFrom?: Date;
  createdTo?: Date;
  after?: Position;
  before?: Position;
  direction: 'asc' | 'desc';
  take: number;
}

/**
 * Runs a keyset-paginated query. `fetch` applies `where` (together with its own filters, e.g. the
 * partner), `orderBy` and `take` to one table.
 */
export async function paginate<Row extends Position>(
  page: PageRequest,
  fetch: (query: KeysetQuery) => Promise<Row[]>,
): Promise<{ rows: Row[]; cursor: CursorPage }> {
  if (page.after && page.before) {
    throw new DomainError('conflicting_list_filters', 'before cannot be combined with after: page one way at a time.');
  }
  if (page.start_date && page.end_date && page.start_date > page.end_date) {
    throw new DomainError('conflicting_list_filters', 'end_date must not be before start_date.');
  }
  const backwards = page.before !== undefined;
  const given = page.before ?? page.after;
  const anchor = given === undefined ? undefined : decodeCursor(given);
  if (anchor === null) {
    throw new DomainError(
      'invalid_cursor',
      `${backwards ? 'before' : 'after'} is not a cursor this API returned; pass cursor.after or cursor.before back unchanged.`,
    );
  }
  const fetched = await fetch({
    ...(page.start_date && { createdFrom: page.start_date }),
    ...(page.end_date && { createdTo: page.end_date }),
    ...(anchor && (backwards ? { before: anchor } : { after: anchor })),
    direction: backwards ? 'asc' : 'desc',
    take: page.limit + 1,
  });
  const hasMore = fetched.length > page.limit;
  const rows = fetched.slice(0, page.limit);
  if (backwards) rows.reverse();
  const first = rows[0];
  const last = rows[rows.length - 1];
  const cursor: CursorPage = backwards
    ? {
        after: last ? encodeCursor(last) : null,
        before: hasMore && first ? encodeCursor(first) : null,
        limit: page.limit,
        page_count: rows.length,
      }
    : {
        after: hasMore && last ? encodeCursor(last) : null,
        before: anchor && first ? encodeCursor(first) : null,
        limit: page.limit,
        page_count: rows.length,
      };
  return { rows, cursor };
}
