// Lists in keyset order (src/schemas/pagination.ts): newest first by (created_at, id), a page starting strictly after
// its cursor by a row comparison, so each list is one index range scan on an index ending in (created_at, id) after
// its equality filters, whatever the page's depth and the partner's total rows (test/list-plans.test.ts).
import { type SelectQueryBuilder, sql } from 'kysely';
import type { KeysetQuery } from '../domain/pages';

/** `query` (a list of table alias `alias`) limited to the page `keyset` describes, in its order. */
export function keysetPage<Tables, TB extends keyof Tables, O>(
  query: SelectQueryBuilder<Tables, TB, O>,
  alias: string & TB,
  keyset: KeysetQuery,
): SelectQueryBuilder<Tables, TB, O> {
  const createdAt = sql.ref(`${alias}.createdAt`);
  const id = sql.ref(`${alias}.id`);
  let page = query;
  if (keyset.createdFrom) page = page.where(sql<boolean>`${createdAt} >= ${keyset.createdFrom}`);
  if (keyset.createdTo) page = page.where(sql<boolean>`${createdAt} <= ${keyset.createdTo}`);
  if (keyset.after) {
    page = page.where(sql<boolean>`(${createdAt}, ${id}) < (${keyset.after.createdAt}, ${keyset.after.id}::uuid)`);
  }
  if (keyset.before) {
    page = page.where(sql<boolean>`(${createdAt}, ${id}) > (${keyset.before.createdAt}, ${keyset.before.id}::uuid)`);
  }
  const direction = keyset.direction === 'asc' ? sql`asc` : sql`desc`;
  return page
    .orderBy(sql`${createdAt} ${direction}`)
    .orderBy(sql`${id} ${direction}`)
    .limit(keyset.take);
}

/**
 * The to-many rows of a page (read in one statement for all its items), grouped by the item they belong to: each
 * item's in the order they were read, none for an item without any.
 */
export function childrenByParent<Child, Key extends keyof Child>(
  children: Child[],
  parentKey: Key,
): (parentId: Child[Key]) => Child[] {
  const grouped = new Map<Child[Key], Child[]>();
  for (const child of children) {
    const siblings = grouped.get(child[parentKey]);
    if (siblings) siblings.push(child);
    else grouped.set(child[parentKey], [child]);
  }
  return (parentId) => grouped.get(parentId) ?? [];
}
