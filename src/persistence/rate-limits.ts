// The rate_limits table: the request counters of every API process (rate-limiter-flexible's PostgreSQL store,
// one atomic upsert per request). The table is made by the migrations; expired counters are purged by the
// maintenance schedule, not by a timer in every API process.
import { RateLimiterPostgres, type RateLimiterMemory } from 'rate-limiter-flexible';
import { type DatabaseClient, type Database, sqlPoolOf } from './internal/database';
import { deleteBatchBefore, inBatches, type PurgeLimits } from './purges';

/** One limit's counters: `keyPrefix` names the limit, `points` requests per `duration` seconds. */
export function rateLimitCounters(
  prisma: DatabaseClient,
  limit: { keyPrefix: string; points: number; duration: number; insuranceLimiter: RateLimiterMemory },
): RateLimiterPostgres {
  return new RateLimiterPostgres({
    // The pg pool under Prisma (sqlPoolOf): the library's prepared upsert, without Prisma compiling it on every
    // request (a third of the API's CPU per GET went to that; `npm run bench`).
    storeClient: sqlPoolOf(prisma),
    storeType: 'pool',
    tableName: 'rate_limits',
    tableCreated: true,
    clearExpiredByTimeout: false,
    ...limit,
  });
}

/** Deletes the counters whose window ended before `before` (milliseconds since the epoch), in batches; how many. */
export function deleteRateLimitsExpiredBefore(db: Database, before: number, limits?: PurgeLimits): Promise<number> {
  return inBatches((size) => deleteBatchBefore(db, 'rate_limits', 'expire', before, size), limits);
}
