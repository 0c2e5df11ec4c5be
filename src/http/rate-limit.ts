// Rate limits: RATE_LIMIT_PARTNER_REQUESTS per partner on the API, RATE_LIMIT_PUBLIC_REQUESTS per client address
// on the unauthenticated routes that opt in (the hosted verification pages and uploads; not health checks), per
// RATE_LIMIT_WINDOW_SECONDS (fixed windows). The counters live in PostgreSQL (table rate_limits, rate-limiter-flexible's
// PostgreSQL store, src/persistence/rate-limits.ts: one atomic upsert per request), so the limits hold across every API
// process. A partner's request is counted by the API key lookup itself, the same upsert in the same statement
// (src/persistence/api-keys.ts), as every authenticated request makes both. Should the database not answer, a public
// route's address is counted per process with the same limits (the library's insurance limiter); a partner's request
// cannot be authenticated then and answers 503.
// Failed authentications: AUTH_FAILURE_LIMIT failed key lookups (unknown or revoked keys) per client address per
// AUTH_FAILURE_WINDOW_SECONDS, counted in the same table (only failures are counted: a valid key costs nothing more).
// The process that counts the last allowed failure remembers the address as blocked until its window ends, and
// refuses it from memory, before the key is read or looked up; another process learns it at its first failure
// there (the shared count is over the limit: 429 instead of 401).
// Every limited response carries the IETF draft headers (draft-ietf-httpapi-ratelimit-headers):
//   RateLimit-Policy: "partner";q=<limit>;w=<window seconds>
//   RateLimit: "partner";r=<remaining>;t=<seconds until the window resets>
// (policy "address" on the hosted pages, "auth" on the answers to failed authentications), and a refusal is 429
// rate_limited with Retry-After (seconds).
import type { Context } from 'koa';
import { RateLimiterMemory, type RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { AppConfig } from '../config';
import type { DatabaseClient } from '../persistence/database';
import { rateLimitCounters } from '../persistence/rate-limits';
import { ApiError } from './errors';
import type { Authentication, RouteDefinition } from './route';

type Policy = 'partner' | 'address' | 'auth';

/** Addresses this process knows to be over their limit of failed authentications, until when (epoch ms). */
class BlockedAddresses {
  /** Bound on what an attacker with many addresses can make a process remember (expired entries go first). */
  private static readonly MAX_ENTRIES = 100_000;
  private readonly until = new Map<string, number>();

  remainingMs(address: string): number {
    const until = this.until.get(address);
    if (until === undefined) return 0;
    const remaining = until - Date.now();
    if (remaining <= 0) this.until.delete(address);
    return Math.max(0, remaining);
  }

  block(address: string, ms: number): void {
    this.until.delete(address); // re-inserted last: the map stays in order of blocking
    this.until.set(address, Date.now() + ms);
    if (this.until.size <= BlockedAddresses.MAX_ENTRIES) return;
    const now = Date.now();
    for (const [key, until] of this.until) if (until <= now) this.until.delete(key);
    for (const key of this.until.keys()) {
      if (this.until.size <= BlockedAddresses.MAX_ENTRIES) break;
      this.until.delete(key);
    }
  }
}

interface Limiters {
  address: RateLimiterPostgres;
  authFailures: RateLimiterPostgres;
  blockedAddresses: BlockedAddresses;
}

function createLimiters(prisma: DatabaseClient, limits: AppConfig['rateLimits']): Limiters {
  const make = (policy: Policy, points: number, windowSeconds = limits.windowSeconds) =>
    rateLimitCounters(prisma, {
      keyPrefix: policy,
      points,
      duration: windowSeconds,
      insuranceLimiter: new RateLimiterMemory({ keyPrefix: policy, points, duration: windowSeconds }),
    });
  return {
    address: make('address', limits.publicRequests),
    authFailures: make('auth', limits.authFailures, limits.authFailureWindowSeconds),
    blockedAddresses: new BlockedAddresses(),
  };
}

const limitersOf = new WeakMap<DatabaseClient, Map<string, Limiters>>();

function limiters(prisma: DatabaseClient, limits: AppConfig['rateLimits']): Limiters {
  const byLimits = limitersOf.get(prisma) ?? new Map<string, Limiters>();
  limitersOf.set(prisma, byLimits);
  const key = JSON.stringify(limits);
  let found = byLimits.get(key);
  if (!found) {
    found = createLimiters(prisma, limits);
    byLimits.set(key, found);
  }
  return found;
}

/**
 * The client's address: the connection's peer, or with TRUST_PROXY_HOPS=n the n-th address from the right of
 * X-Forwarded-For (what the last of n trusted proxies saw; entries further left are the client's to invent).
 */
export function clientAddress(ctx: Pick<Context, 'get' | 'req'>, trustProxyHops: number): string {
  const peer = ctx.req.socket.remoteAddress ?? 'unknown';
  if (trustProxyHops === 0) return peer;
  const forwarded = ctx
    .get('x-forwarded-for')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  return forwarded[forwarded.length - trustProxyHops] ?? forwarded[0] ?? peer;
}

/** True when the route counts against a limit: every partner route, and the public routes that opt in. */
export function isRateLimited(route: Pick<RouteDefinition, 'auth' | 'rateLimit'>): boolean {
  return route.auth === 'partner' || route.rateLimit === 'client-address';
}

/**
 * Where the partner limit counts (the key lookup counts every authenticated request in the same statement:
 * src/persistence/api-keys.ts), in the store's key format, so both kinds of counter share the table and its purge.
 */
export function partnerRequestCounter(limits: AppConfig['rateLimits']): { keyPrefix: Policy; windowMs: number } {
  return { keyPrefix: 'partner', windowMs: limits.windowSeconds * 1_000 };
}

/**
 * Enforces the request's limit: a partner's request was counted by authenticate, a public route's request is counted
 * here by its client address. Sets the RateLimit headers and throws 429 rate_limited when over.
 */
export async function enforceRateLimit(
  services: LimitsOf,
  ctx: Context,
  route: Pick<RouteDefinition, 'auth' | 'rateLimit'>,
  authentication: Authentication | undefined,
): Promise<void> {
  if (!isRateLimited(route)) return;
  const limits = services.config.rateLimits;
  const policy: Policy = authentication ? 'partner' : 'address';
  const quota = authentication ? limits.partnerRequests : limits.publicRequests;
  let remaining: number;
  let resetMs: number;
  let refused: boolean;
  if (authentication) {
    const { consumed, expiresAt } = authentication.requests;
    remaining = Math.max(0, quota - consumed);
    resetMs = expiresAt - Date.now();
    refused = consumed > quota;
  } else {
    let result: RateLimiterRes;
    try {
      result = await limiters(services.prisma, limits).address.consume(clientAddress(ctx, limits.trustProxyHops));
      refused = false;
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      result = rejection;
      refused = true;
    }
    remaining = result.remainingPoints;
    resetMs = result.msBeforeNext;
  }
  const resetSeconds = setHeaders(ctx, policy, quota, limits.windowSeconds, remaining, resetMs);
  if (refused) {
    const error = new ApiError(
      'rate_limited',
      `Too many requests: at most ${quota} per ${limits.windowSeconds} s ` +
        `per ${authentication ? 'partner' : 'client address'}. Retry in ${resetSeconds} s.`,
    );
    error.retryAfterSeconds = resetSeconds; // sent as Retry-After by the error mapper
    throw error;
  }
}

type LimitsOf = { prisma: DatabaseClient; config: Pick<AppConfig, 'rateLimits'> };

function setHeaders(
  ctx: Context,
  policy: Policy,
  quota: number,
  windowSeconds: number,
  remaining: number,
  resetMs: number,
) {
  const resetSeconds = Math.max(1, Math.ceil(resetMs / 1000));
  ctx.set('RateLimit-Policy', `"${policy}";q=${quota};w=${windowSeconds}`);
  ctx.set('RateLimit', `"${policy}";r=${remaining};t=${resetSeconds}`);
  return resetSeconds;
}

function tooManyAuthFailures(ctx: Context, limits: AppConfig['rateLimits'], msLeft: number): ApiError {
  const retryAfter = setHeaders(ctx, 'auth', limits.authFailures, limits.authFailureWindowSeconds, 0, msLeft);
  const error = new ApiError(
    'rate_limited',
    `Too many failed authentications from this client address: at most ${limits.authFailures} per ` +
      `${limits.authFailureWindowSeconds} s. Retry in ${retryAfter} s with a valid API key.`,
  );
  error.retryAfterSeconds = retryAfter;
  return error;
}

/**
 * Throws 429 rate_limited while this process knows the request's client address to be over its limit of failed
 * authentications: no query at all, the key is neither read nor looked up.
 */
export function refuseAddressOverAuthFailureLimit(services: LimitsOf, ctx: Context): void {
  const limits = services.config.rateLimits;
  const address = clientAddress(ctx, limits.trustProxyHops);
  const blockedMs = limiters(services.prisma, limits).blockedAddresses.remainingMs(address);
  if (blockedMs > 0) throw tooManyAuthFailures(ctx, limits, blockedMs);
}

/**
 * Counts one failed authentication (an unknown or revoked key) of the request's client address. Sets the "auth"
 * RateLimit headers; throws 429 rate_limited when the shared count is already over the limit (failures counted by
 * other processes), and from the last allowed failure on remembers the address as blocked until the window ends.
 */
export async function countAuthFailure(services: LimitsOf, ctx: Context): Promise<void> {
  const limits = services.config.rateLimits;
  const address = clientAddress(ctx, limits.trustProxyHops);
  const { authFailures, blockedAddresses } = limiters(services.prisma, limits);
  let result: RateLimiterRes;
  try {
    result = await authFailures.consume(address);
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    blockedAddresses.block(address, rejection.msBeforeNext);
    throw tooManyAuthFailures(ctx, limits, rejection.msBeforeNext);
  }
  if (result.remainingPoints === 0) blockedAddresses.block(address, result.msBeforeNext);
  setHeaders(
    ctx,
    'auth',
    limits.authFailures,
    limits.authFailureWindowSeconds,
    result.remainingPoints,
    result.msBeforeNext,
  );
}
