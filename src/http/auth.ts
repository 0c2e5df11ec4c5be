// API keys: random secrets shown once; only their SHA-256 hash is stored (keys carry 256 bits of
// entropy, so a slow password hash adds nothing). Accepted headers: `Authorization: <key>`,
// `Authorization: Bearer <key>` and `api-key: <key>`.
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
  return `sk_${appEnv === 'production' ? 'live' : 'sandbox'}_${randomBytes(32).toString('base64url')}`;
}

export function apiKeyFromHeaders(ctx: Context): string | null {
  const authorization = ctx.get('authorization').trim();
  const fromAuthorization = authorization.replace(/^Bearer\s+/i, '').trim();
  const fromApiKeyHeader = ctx.get('api-key').trim();
  if (fromAuthorization && fromApiKeyHeader && fromAuthorization !== fromApiKeyHeader) {
    throw new ApiError('unauthorized', 'The Authorization and api-key headers carry different keys; send one.');
  }
  return fromAuthorization || fromApiKeyHeader || null;
}

export async function authenticate(db: Db, ctx: Context): Promise<AuthenticatedPartner> {
  const apiKey = apiKeyFromHeaders(ctx);
  if (!apiKey) {
    throw new ApiError(
      'unauthorized',
      'Missing API key: send it as `Authorization: <API_KEY>` or `api-key: <API_KEY>`.',
    );
  }
  const key = await db.apiKey.findUnique({ where: { keyHash: hashApiKey(apiKey) }, include: { partner: true } });
  if (!key || key.revokedAt) throw new ApiError('unauthorized', 'Invalid API key.');
  return { id: key.partner.id, name: key.partner.name };
}
