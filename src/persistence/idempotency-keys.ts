// The idempotency_keys table: one row per partner and Idempotency-Key, claimed by the request processing it (an
// owner token), then holding its stored response until it expires. The rules are in src/http/idempotency.ts.
import { type Database, sqlOf, prismaOf, type DatabaseClient } from './internal/database';
import type { Prisma } from './generated/prisma/client';
import { sql } from 'kysely';
import { deleteBatchBefore, inBatches, type PurgeLimits } from './purges';

export type IdempotencyKeyRow = Prisma.IdempotencyKeyGetPayload<object>;

/** Which key: keys are per partner. */
export interface IdempotencyKeyId {
  partnerId: string;
  key: string;
}

/**
 * Claims the key for `owner`: a new key, an expired one, or a claim of the same request abandoned for longer than
 * `abandonedClaimMs`. True when this request is the one to process it.
 */
export async function claimIdempotencyKey(
  db: Database,
  id: IdempotencyKeyId,
  claim: {
    fingerprint: string;
    method: string;
    path: string;
    owner: string;
    retentionHours: number;
    abandonedClaimMs: number;
  },
): Promise<boolean> {
  const claimed = await sql`
    INSERT INTO idempotency_keys (partner_id, key, fingerprint, method, path, state, owner_token, expires_at)
    VALUES (${id.partnerId}::uuid, ${id.key}, ${claim.fingerprint}, ${claim.method}, ${claim.path}, 'in_progress',
            ${claim.owner}::uuid, now() + make_interval(hours => ${claim.retentionHours}))
    ON CONFLICT (partner_id, key) DO UPDATE
      SET fingerprint = EXCLUDED.fingerprint, method = EXCLUDED.method, path = EXCLUDED.path, state = 'in_progress',
          owner_token = EXCLUDED.owner_token,
          response_status = NULL, response_body = NULL, locked_at = now(), created_at = now(),
          expires_at = EXCLUDED.expires_at, completed_at = NULL
      WHERE idempotency_keys.expires_at < now()
         OR (idempotency_keys.state = 'in_progress'
             AND idempotency_keys.fingerprint = EXCLUDED.fingerprint
             AND idempotency_keys.locked_at < now() - make_interval(secs => ${claim.abandonedClaimMs / 1000}))`.execute(
    sqlOf(db),
  );
  return claimed.numAffectedRows === 1n;
}

export function findIdempotencyKey(db: DatabaseClient, id: IdempotencyKeyId): Promise<IdempotencyKeyRow | null> {
  return prismaOf(db).idempotencyKey.findUnique({ where: { partnerId_key: { partnerId: id.partnerId, key: id.key } } });
}

/** Deletes the owner's claim, only while in progress. */
export async function releaseIdempotencyClaim(db: DatabaseClient, id: IdempotencyKeyId, owner: string): Promise<void> {
  await prismaOf(db).idempotencyKey.deleteMany({
    where: { partnerId: id.partnerId, key: id.key, state: 'in_progress', ownerToken: owner },
  });
}

/** Refreshes the owner's claim, so that it does not count as abandoned. */
export async function refreshIdempotencyClaim(db: DatabaseClient, id: IdempotencyKeyId, owner: string): Promise<void> {
  await prismaOf(db).idempotencyKey.updateMany({
    where: { partnerId: id.partnerId, key: id.key, state: 'in_progress', ownerToken: owner },
    data: { lockedAt: new Date() },
  });
}

/**
 * Stores the response on the owner's claim, only while in progress; false when the claim is no longer the owner's.
 */
export async function completeIdempotencyKey(
  db: Database,
  id: IdempotencyKeyId,
  owner: string,
  response: { status: number; body: object | null },
): Promise<boolean> {
  const count = await sql`UPDATE idempotency_keys
    SET state = 'completed', response_status = ${response.status},
      response_body = ${response.body === null ? null : JSON.stringify(response.body)}::jsonb, completed_at = now()
    WHERE partner_id = ${id.partnerId}::uuid AND key = ${id.key} AND state = 'in_progress'
      AND owner_token = ${owner}::uuid`.execute(sqlOf(db));
  return count.numAffectedRows === 1n;
}

/** Deletes the keys whose retention ended before `now` (the maintenance schedule), in batches; returns how many. */
export function deleteExpiredIdempotencyKeys(db: Database, now: Date, limits?: PurgeLimits): Promise<number> {
  return inBatches((size) => deleteBatchBefore(db, 'idempotency_keys', 'expires_at', now, size), limits);
}
