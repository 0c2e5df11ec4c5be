// The api_keys table: partners' keys, stored as their SHA-256 with a display prefix, an optional label and when
// they were created, last used and revoked. The lookup every request makes (with its partner's request count) is
// plain SQL on the pool (sqlPoolOf).
import { type Database, type DatabaseClient, sqlPoolOf, prismaOf } from './internal/database';
import type { Prisma } from './generated/prisma/client';

/** A key as listings show it: with its partner's name. */
export const withPartnerName = { partner: { select: { name: true } } } as const;
export type ApiKeyRow = Prisma.ApiKeyGetPayload<{ include: typeof withPartnerName }>;

/** A new key's columns (its hash, never the key). */
export interface NewApiKey {
  id: string;
  keyHash: string;
  keyPrefix: string;
  label?: string | null;
}

export function insertApiKey(db: DatabaseClient, partnerId: string, key: NewApiKey): Promise<ApiKeyRow> {
  return prismaOf(db).apiKey.create({ data: { ...key, partnerId }, include: withPartnerName });
}

/** Every key (of one partner when given), oldest first. */
export function listApiKeys(db: DatabaseClient, partnerId?: string): Promise<ApiKeyRow[]> {
  return prismaOf(db).apiKey.findMany({
    where: partnerId ? { partnerId } : {},
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    include: withPartnerName,
  });
}

export function findApiKey(db: DatabaseClient, keyId: string): Promise<Pick<ApiKeyRow, 'id' | 'revokedAt'> | null> {
  return prismaOf(db).apiKey.findUnique({ where: { id: keyId }, select: { id: true, revokedAt: true } });
}

export function setApiKeyRevokedAt(db: DatabaseClient, keyId: string, revokedAt: Date): Promise<ApiKeyRow> {
  return prismaOf(db).apiKey.update({ where: { id: keyId }, data: { revokedAt }, include: withPartnerName });
}

/** What authentication reads of a key: whether it is revoked, when it was last used, and its partner. */
/** True when a key with this hash exists and is not revoked (`npm run dev` reuses its saved partner then). */
export async function isApiKeyActive(db: DatabaseClient, keyHash: string): Promise<boolean> {
  const key = await prismaOf(db).apiKey.findUnique({ where: { keyHash }, select: { revokedAt: true } });
  return key !== null && key.revokedAt === null;
}

export interface ApiKeyLookup {
  key_id: string;
  revoked: boolean;
  last_used_at: Date | null;
  id: string;
  name: string;
}

/** A partner's request counter in its fixed window (the rate_limits row): requests so far, and when it ends. */
export interface RequestCount {
  consumed: number;
  /** Epoch milliseconds. */
  expiresAt: number;
}

// The key, and for a key that is not revoked its partner's request counted: the same atomic fixed-window upsert on
// rate_limits as rate-limiter-flexible's PostgreSQL store (src/persistence/rate-limits.ts; key `<prefix>:<partner id>`,
// expire in epoch ms by the API's clock), in the same statement as the lookup, as every request makes both.
const keyLookupAndCount = `WITH k AS (
    SELECT k.id AS key_id, k.revoked_at IS NOT NULL AS revoked, k.last_used_at, p.id, p.name
    FROM api_keys k JOIN partners p ON p.id = k.partner_id WHERE k.key_hash = $1
  ), counted AS (
    INSERT INTO rate_limits (key, points, expire)
    SELECT $2 || k.id, 1, $3::bigint FROM k WHERE NOT k.revoked
    ON CONFLICT (key) DO UPDATE SET
      points = CASE WHEN rate_limits.expire <= $4::bigint THEN 1 ELSE rate_limits.points + 1 END,
      expire = CASE WHEN rate_limits.expire <= $4::bigint THEN $3::bigint ELSE rate_limits.expire END
    RETURNING points, expire
  )
  SELECT k.*, c.points AS consumed, c.expire::text AS expires_at FROM k LEFT JOIN counted c ON true`;

/**
 * The key with this hash and its partner, or null; for a key not revoked, its partner's request counted in
 * `counter` (`keyPrefix` the limit's, a window of `windowMs`). One statement on the pool, not through Prisma.
 */
export async function findApiKeyByHash(
  prisma: DatabaseClient,
  keyHash: string,
  counter: { keyPrefix: string; windowMs: number },
): Promise<(ApiKeyLookup & { requests: RequestCount | null }) | null> {
  const now = Date.now();
  // A named (prepared) statement: parsed and planned once per connection.
  const { rows } = await sqlPoolOf(prisma).query<ApiKeyLookup & { consumed: number | null; expires_at: string | null }>(
    {
      name: 'authenticate-api-key',
      text: keyLookupAndCount,
      values: [keyHash, `${counter.keyPrefix}:`, now + counter.windowMs, now],
    },
  );
  const row = rows[0];
  if (!row) return null;
  const { consumed, expires_at: expiresAt, ...key } = row;
  return {
    ...key,
    requests: consumed === null || expiresAt === null ? null : { consumed, expiresAt: Number(expiresAt) },
  };
}

export async function touchApiKey(prisma: DatabaseClient, keyId: string): Promise<void> {
  await sqlPoolOf(prisma).query({
    name: 'touch-api-key',
    text: 'UPDATE api_keys SET last_used_at = now() WHERE id = $1',
    values: [keyId],
  });
}
