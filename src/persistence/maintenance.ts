// Housekeeping deletes of tables that only grow: `idempotency_keys` past their retention and `rate_limits`
// counters whose window is long over (run by the maintenance workflow's activities).
import type { Db } from './database';

/** Deletes idempotency keys whose retention ended before `now`; returns how many. */
export async function deleteExpiredIdempotencyKeys(db: Db, now: Date): Promise<number> {
  const { count } = await db.idempotencyKey.deleteMany({ where: { expiresAt: { lt: now } } });
  return count;
}

/** Deletes rate-limit counters whose window ended before `before` (milliseconds since the epoch); returns how many. */
export function deleteRateLimitsExpiredBefore(db: Db, before: number): Promise<number> {
  return db.$executeRaw`DELETE FROM rate_limits WHERE expire < ${before}`;
}
