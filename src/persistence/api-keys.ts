// The api_keys table: partners' keys, stored as their SHA-256 with a display prefix, an optional label and when
// they were created, last used and revoked. The lookup every request makes is plain SQL on the pool (sqlPoolOf).
import { type Db, type Prisma, type PrismaClient, sqlPoolOf } from './database';

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

export function insertApiKey(db: Db, partnerId: string, key: NewApiKey): Promise<ApiKeyRow> {
  return db.apiKey.create({ data: { ...key, partnerId }, include: withPartnerName });
}

/** Every key (of one partner when given), oldest first. */
export function listApiKeys(db: Db, partnerId?: string): Promise<ApiKeyRow[]> {
  return db.apiKey.findMany({
    where: partnerId ? { partnerId } : {},
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    include: withPartnerName,
  });
}

export function findApiKey(db: Db, keyId: string): Promise<Pick<ApiKeyRow, 'id' | 'revokedAt'> | null> {
  return db.apiKey.findUnique({ where: { id: keyId }, select: { id: true, revokedAt: true } });
}

export function setApiKeyRevokedAt(db: Db, keyId: string, revokedAt: Date): Promise<ApiKeyRow> {
  return db.apiKey.update({ where: { id: keyId }, data: { revokedAt }, include: withPartnerName });
}

/** What authentication reads of a key: whether it is revoked, when it was last used, and its partner. */
export interface ApiKeyLookup {
  key_id: string;
  revoked: boolean;
  last_used_at: Date | null;
  id: string;
  name: string;
}

const keyLookup = `SELECT k.id AS key_id, k.revoked_at IS NOT NULL AS revoked, k.last_used_at, p.id, p.name
  FROM api_keys k JOIN partners p ON p.id = k.partner_id WHERE k.key_hash = $1`;

/** The key with this hash and its partner, or null: on the pool, not through Prisma (every request makes it). */
export async function findApiKeyByHash(prisma: PrismaClient, keyHash: string): Promise<ApiKeyLookup | null> {
  // A named (prepared) statement: parsed and planned once per connection.
  const { rows } = await sqlPoolOf(prisma).query<ApiKeyLookup>({
    name: 'authenticate-api-key',
    text: keyLookup,
    values: [keyHash],
  });
  return rows[0] ?? null;
}

export async function touchApiKey(prisma: PrismaClient, keyId: string): Promise<void> {
  await sqlPoolOf(prisma).query({
    name: 'touch-api-key',
    text: 'UPDATE api_keys SET last_used_at = now() WHERE id = $1',
    values: [keyId],
  });
}
