// The query parameters and the envelope of every list (src/domain/pages.ts pages them). Lists are ordered newest
// first (created_at, then id, descending) and paged with keyset cursors, so pages stay stable while new rows arrive.
// Cursors are opaque base64url strings; `after` continues to older items, `before` goes back to newer ones.
import { z } from 'zod';
import { clampedToStorable } from '../domain/pages';

export const DEFAULT_PAGE_LIMIT = 10;
export const MAX_PAGE_LIMIT = 100;

const datePattern = /^\d{4}-\d{2}-\d{2}$/;
/** The date-times a date filter takes (seconds optional). */
const dateBoundPattern =
  '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])(T([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d(\\.\\d{1,9})?)?(Z|[+-]([01]\\d|2[0-3]):[0-5]\\d))?$';
/** What the description states: a calendar date, or a date-time with seconds (a subset of what is accepted). */
const describedDateBound = {
  pattern: '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}:[0-5]\\d(\\.\\d{1,9})?(Z|[+-]\\d{2}:\\d{2}))?$',
  anyOf: [{ format: 'date' }, { format: 'date-time' }],
};

/** YYYY-MM-DD (a whole UTC day) or an ISO 8601 date-time with offset. */
const dateBound = (bound: 'start' | 'end') =>
  z
    .string()
    .refine(
      (value) => parseDateBound(value, bound) !== null,
      'must be a date (YYYY-MM-DD) or an ISO 8601 date-time (YYYY-MM-DDThh:mm[:ss[.fff]] with Z or an offset)',
    )
    .transform((value) => parseDateBound(value, bound) as Date)
    .meta(describedDateBound);

function parseDateBound(value: string, bound: 'start' | 'end'): Date | null {
  if (datePattern.test(value)) {
    const date = new Date(`${value}T00:00:00.000Z`);
    if (Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value) return null;
    return clampedToStorable(bound === 'start' ? date : new Date(date.getTime() + 24 * 3600 * 1000 - 1));
  }
  if (!new RegExp(dateBoundPattern).test(value)) return null;
  const date = new Date(value);
  // A calendar day that does not exist (2026-02-30T10:00Z) is refused, as for a bare date.
  if (Number.isNaN(date.getTime()) || !isCalendarDay(value.slice(0, 10))) return null;
  return clampedToStorable(date);
}

function isCalendarDay(day: string): boolean {
  const date = new Date(`${day}T00:00:00.000Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === day;
}

/**
 * A cursor's shape is stated (base64url); whether this API issued it is not a matter of shape, so an unknown cursor
 * answers 422 invalid_cursor from paginate, not 400.
 */
const cursorParam = z.string().regex(/^[A-Za-z0-9_-]{1,512}$/, 'must be a cursor from a previous response (base64url)');

/** Query parameters shared by every list; list routes extend it with their own filters. */
export const paginationQuerySchema = z
  .object({
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_PAGE_LIMIT)
      .default(DEFAULT_PAGE_LIMIT)
      .meta({ description: `Page size, 1-${MAX_PAGE_LIMIT} (default ${DEFAULT_PAGE_LIMIT}).` }),
    after: cursorParam.optional().meta({ description: 'Cursor from `cursor.after`: the next (older) page.' }),
    before: cursorParam.optional().meta({ description: 'Cursor from `cursor.before`: the previous (newer) page.' }),
    start_date: dateBound('start')
      .optional()
      .meta({ description: 'Only items created at or after this instant; a bare date starts at 00:00 UTC.' }),
    end_date: dateBound('end')
      .optional()
      .meta({ description: 'Only items created at or before this instant; a bare date includes the whole UTC day.' }),
  })
  .strict();

export type PageQuery = z.output<typeof paginationQuerySchema>;

export const cursorSchema = z
  .object({
    after: z.string().nullable().meta({ description: 'Pass as `after` for the next page; null on the last page.' }),
    before: z.string().nullable().meta({ description: 'Pass as `before` for the previous page; null on the first.' }),
    limit: z.number().int().meta({ description: 'Page size used.' }),
    page_count: z.number().int().meta({ description: 'Number of items in this page.' }),
  })
  .meta({ id: 'Cursor' });

export type CursorBody = z.infer<typeof cursorSchema>;

/** The list envelope `{items, cursor}` for an item schema. */
export function listSchema<T extends z.ZodType>(item: T, id: string) {
  return z.object({ items: z.array(item), cursor: cursorSchema }).meta({ id });
}
