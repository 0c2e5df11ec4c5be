// API keys: random secrets shown once; only their SHA-256 hash is stored (keys carry 256 bits of
// entropy, so a slow password hash adds nothing). Accepted headers: `Authorization: <key>`,
// `Authorization: Bearer <key>` and `api-key: <key>`. A key works only in its environment: `sk_live_` keys in
// production, `sk_sandbox_` keys in the sandbox. Keys are looked up on every request (no cache), so a revocation
// takes effect on the next request; `last_used_at` is refreshed at most once a minute. The lookup is one prepared
// SQL statement on the Prisma client's pool (sqlPoolOf): every request makes it, and through Prisma it cost four
// times the CPU (`npm run bench`).
import { createHash, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { AppEnvironment } from '../config';
import { PrismaClient, sqlPoolOf } from '../db';
import { ApiError } from './errors';
import type { AuthenticatedPartner } from './route';

export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
}

/** `sk_sandbox_...` or `sk_live_...` followed by 43 base64url characters (32 random bytes). */
export function generateApiKey(appEnv: AppEnvironment): string {
  return `${apiKeyPrefixOf(appEnv)}${randomBytes(32).toString('base64url')}`;
}

export function apiKeyPrefixOf(appEnv: AppEnvironment): string {
  return appEnv === 'production' ? 'sk_live_' : 'sk_sandbox_';
}

/** The first characters of a key, kept to recognise it in listings (its environment and 6 random characters). */
export function displayPrefixOf(apiKey: string): string {
  return apiKey.slice(0, apiKey.startsWith('sk_live_') ? 14 : 17);
}

const LAST_USED_RESOLUTION_MS = 60_000;

export function apiKeyFromHeaders(ctx: Context): string | null {
  const authorization = ctx.get('authorization').trim();
  const fromAuthorization = authorization.replace(/^Bearer\s+/i, '').trim();
  const fromApiKeyHeader = ctx.get('api-key').trim();
  if (fromAuthorization && fromApiKeyHeader && fromAuthorization !== fromApiKeyHeader) {
    throw new ApiError('unauthorized', 'The Authorization and api-key headers carry different keys; send one.');
  }
  return fromAuthorization || fromApiKeyHeader || null;
}

const keyLookup = `SELECT k.id AS key_id, k.revoked_at IS NOT NULL AS revoked, k.last_used_at, p.id, p.name
  FROM api_keys k JOIN partners p ON p.id = k.partner_id WHERE k.key_hash = $1`;

export async function authenticate(
  services: { prisma: PrismaClient; config: { appEnv: AppEnvironment } },
  ctx: Context,
): Promise<AuthenticatedPartner> {
  const apiKey = apiKeyFromHeaders(ctx);
  if (!apiKey) {
    throw new ApiError(
      'unauthorized',
      'Missing API key: send it as `Authorization: <API_KEY>` or `api-key: <API_KEY>`.',
    );
  }
  const appEnv = services.config.appEnv;
  if (!apiKey.startsWith(apiKeyPrefixOf(appEnv))) {
    throw new ApiError(
      'unauthorized',
      appEnv === 'production'
        ? 'This is the production API: use a live key (sk_live_...).'
        : 'This is the sandbox API: use a sandbox key (sk_sandbox_...).',
    );
  }
  const pool = sqlPoolOf(services.prisma);
  // A named (prepared) statement: parsed and planned once per connection.
  const { rows } = await pool.query<{
    key_id: string;
    revoked: boolean;
    last_used_at: Date | null;
    id: string;
    name: string;
  }>({
    name: 'authenticate-api-key',
    text: keyLookup,
    values: [hashApiKey(apiKey)],
  });
  const key = rows[0];
  if (!key || key.revoked) throw new ApiError('unauthorized', 'Invalid API key.');
  if (!key.last_used_at || Date.now() - key.last_used_at.getTime() > LAST_USED_RESOLUTION_MS) {
    await pool.query({
      name: 'touch-api-key',
      text: 'UPDATE api_keys SET last_used_at = now() WHERE id = $1',
      values: [key.key_id],
    });
  }
  return { id: key.id, name: key.name };
}
