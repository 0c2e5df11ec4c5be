// Retention purges in bounded batches: each batch deletes at most `batchSize` rows in one short statement (or one
// short transaction), so a purge of a large backlog never holds its locks for long nor blocks the writers of the
// table; a run stops after `maxBatches` and the next run of the maintenance schedule goes on.
import { sql } from 'kysely';
import { type Database, sqlOf } from './internal/database';

export interface PurgeLimits {
  batchSize: number;
  maxBatches: number;
}

export const defaultPurgeLimits: PurgeLimits = { batchSize: 1_000, maxBatches: 100 };

/** Runs `deleteBatch(limit)` until it deletes fewer than a batch or the run's batches are used up; how many in all. */
export async function inBatches(
  deleteBatch: (batchSize: number) => Promise<number>,
  limits: PurgeLimits = defaultPurgeLimits,
): Promise<number> {
  let deleted = 0;
  for (let batch = 0; batch < limits.maxBatches; batch += 1) {
    const count = await deleteBatch(limits.batchSize);
    deleted += count;
    if (count < limits.batchSize) break;
  }
  return deleted;
}

/** Deletes up to `batchSize` rows of `table` whose `column` is before `before` (found through that column's index). */
export async function deleteBatchBefore(
  db: Database,
  table: string,
  column: string,
  before: Date | number,
  batchSize: number,
): Promise<number> {
  const deleted = await sql`
    DELETE FROM ${sql.table(table)} WHERE ctid IN (
      SELECT ctid FROM ${sql.table(table)} WHERE ${sql.ref(column)} < ${before} LIMIT ${batchSize})`.execute(sqlOf(db));
  return Number(deleted.numAffectedRows ?? 0);
}
