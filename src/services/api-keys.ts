// API key management (npm run partner:keys): create, list, revoke. A key is shown once, at creation; the database
// keeps its SHA-256, a display prefix, an optional label, when it was created, last used and revoked.
// Keys are bound to the environment that creates them (sk_live_ in production, sk_sandbox_ in the sandbox).
import type { AppEnvironment } from '../config';
import type { Database, DatabaseClient } from '../persistence/database';
import {
  ApiKeyRow,
  findApiKey,
  insertApiKey,
  listApiKeys as listApiKeyRows,
  setApiKeyRevokedAt,
} from '../persistence/api-keys';
import { findPartner } from '../persistence/partners';
import { newId } from '../domain/ids';
import { displayPrefixOf, generateApiKey, hashApiKey } from '../domain/api-keys';

export interface ApiKeyListing {
  key_id: string;
  partner_id: string;
  partner_name: string;
  prefix: string;
  label: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface CreatedApiKey extends ApiKeyListing {
  /** Shown only here. */
  api_key: string;
}

function toListing(row: ApiKeyRow): ApiKeyListing {
  return {
    key_id: row.id,
    partner_id: row.partnerId,
    partner_name: row.partner.name,
    prefix: row.keyPrefix,
    label: row.label,
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
  };
}

export class ApiKeyCommandError extends Error {}

export async function createApiKey(
  db: DatabaseClient,
  appEnv: AppEnvironment,
  partnerId: string,
  label?: string,
): Promise<CreatedApiKey> {
  const partner = await findPartner(db, partnerId);
  if (!partner) throw new ApiKeyCommandError(`no partner ${partnerId}`);
  const apiKey = generateApiKey(appEnv);
  const row = await insertApiKey(db, partnerId, {
    id: newId(),
    keyHash: hashApiKey(apiKey),
    keyPrefix: displayPrefixOf(apiKey),
    label: label ?? null,
  });
  return { ...toListing(row), api_key: apiKey };
}

/** Every key (of one partner when given), oldest first; never the key itself. */
export async function listApiKeys(db: DatabaseClient, partnerId?: string): Promise<ApiKeyListing[]> {
  return (await listApiKeyRows(db, partnerId)).map(toListing);
}

/** Revokes a key by id; the next request with it answers 401 (keys are not cached). Revoking twice is a no-op. */
export async function revokeApiKey(db: DatabaseClient, keyId: string): Promise<ApiKeyListing> {
  const found = await findApiKey(db, keyId).catch(() => null);
  if (!found) throw new ApiKeyCommandError(`no API key ${keyId}`);
  return toListing(await setApiKeyRevokedAt(db, keyId, found.revokedAt ?? new Date()));
}
