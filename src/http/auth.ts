// API keys: random secrets shown once; only their SHA-256 hash is stored (keys carry 256 bits of
// entropy, so a slow password hash adds nothing). Accepted headers: `Authorization: <key>`,
// `Authorization: Bearer <key>` and `api-key: <key>`. A key works only in its environment: `sk_live_` keys in
// production, `sk_sandbox_` keys in the sandbox. Keys are looked up on every request (no cache), so a revocation
// takes effect on the next request; `last_used_at` is refreshed at most once a minute.
import { createHash, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { AppEnvironment } from '../config';
import type { Db } from '../db';
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

export async function authenticate(
  services: { prisma: Db; config: { appEnv: AppEnvironment } },
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
  const db = services.prisma;
  const key = await db.apiKey.findUnique({ where: { keyHash: hashApiKey(apiKey) }, include: { partner: true } });
  if (!key || key.revokedAt) throw new ApiError('unauthorized', 'Invalid API key.');
  if (!key.lastUsedAt || Date.now() - key.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    await db.apiKey.update({ where: { id: key.id }, data: { lastUsedAt: new Date() } });
  }
  return { id: key.partner.id, name: key.partner.name };
}
