// API keys: random secrets shown once; only their SHA-256 hash is stored (keys carry 256 bits of
// entropy, so a slow password hash adds nothing). Accepted headers: `Authorization: <key>`,
// `Authorization: Bearer <key>` and `api-key: <key>`. A key works only in its environment: `sk_live_` keys in
// production, `sk_sandbox_` keys in the sandbox. Keys are looked up on every request (no cache), so a revocation
// takes effect on the next request; `last_used_at` is refreshed at most once a minute. The lookup is one prepared
// SQL statement on the Prisma client's pool (src/persistence/api-keys.ts) that also counts the request against the
// partner's rate limit: every request makes it, and through Prisma it cost four times the CPU (`npm run bench`).
// Failed lookups are limited per client address (AUTH_FAILURE_LIMIT): over the limit the
// address is answered 429 rate_limited before its key is looked up.
import type { Context } from 'koa';
import type { AppConfig, AppEnvironment } from '../config';
import type { DatabaseClient } from '../persistence/database';
import { findApiKeyByHash, touchApiKey } from '../persistence/api-keys';
import { apiKeyPrefixOf, hashApiKey } from '../domain/api-keys';
import { ApiError } from './errors';
import { countAuthFailure, partnerRequestCounter, refuseAddressOverAuthFailureLimit } from './rate-limit';
import type { Authentication } from './route';

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

/**
 * The partner of the request's API key, with the request counted against the partner's rate limit (the limit itself
 * is enforced by enforceRateLimit). A client address over its limit of failed authentications is refused (429)
 * before anything else, without a query; an unknown or revoked key counts as a failure of its address
 * (src/http/rate-limit.ts).
 */
export async function authenticate(
  services: { prisma: DatabaseClient; config: { appEnv: AppEnvironment } & Pick<AppConfig, 'rateLimits'> },
  ctx: Context,
): Promise<Authentication> {
  refuseAddressOverAuthFailureLimit(services, ctx);
  const apiKey = presentedApiKey(ctx, services.config.appEnv);
  const key = await findApiKeyByHash(
    services.prisma,
    hashApiKey(apiKey),
    partnerRequestCounter(services.config.rateLimits),
  );
  if (key && !key.revoked && key.requests) {
    if (!key.last_used_at || Date.now() - key.last_used_at.getTime() > LAST_USED_RESOLUTION_MS) {
      await touchApiKey(services.prisma, key.key_id);
    }
    return { partner: { id: key.id, name: key.name }, requests: key.requests };
  }
  await countAuthFailure(services, ctx); // throws 429 instead when the address is over the limit
  throw new ApiError('unauthorized', 'Invalid API key.');
}

/** The key the request presents, for this environment; 401 (no query made) when there is none or it is of the other. */
function presentedApiKey(ctx: Context, appEnv: AppEnvironment): string {
  const apiKey = apiKeyFromHeaders(ctx);
  if (!apiKey) {
    throw new ApiError(
      'unauthorized',
      'Missing API key: send it as `Authorization: <API_KEY>` or `api-key: <API_KEY>`.',
    );
  }
  if (!apiKey.startsWith(apiKeyPrefixOf(appEnv))) {
    throw new ApiError(
      'unauthorized',
      appEnv === 'production'
        ? 'This is the production API: use a live key (sk_live_...).'
        : 'This is the sandbox API: use a sandbox key (sk_sandbox_...).',
    );
  }
  return apiKey;
}
