// Rate limits: RATE_LIMIT_PARTNER_REQUESTS per partner on the API, RATE_LIMIT_PUBLIC_REQUESTS per client address
// on the unauthenticated routes that opt in (the hosted verification pages and uploads; not health checks), per
// RATE_LIMIT_WINDOW_SECONDS (fixed windows). The counters live in PostgreSQL (table rate_limits, rate-limiter-flexible's PostgreSQL store, one
// atomic upsert per request, a prepared statement on the pool under Prisma), so the limits hold across every API process. Should the database not answer, a
// per-process counter with the same limits stands in (the library's insurance limiter).
// Every limited response carries the IETF draft headers (draft-ietf-httpapi-ratelimit-headers):
//   RateLimit-Policy: "partner";q=<limit>;w=<window seconds>
//   RateLimit: "partner";r=<remaining>;t=<seconds until the window resets>
// and a refusal is 429 rate_limited with Retry-After (seconds).
import type { Context } from 'koa';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { AppConfig } from '../config';
import { sqlPoolOf, type PrismaClient } from '../db';
import { ApiError } from './errors';
import type { AuthenticatedPartner, RouteDefinition } from './route';

type Policy = 'partner' | 'address';

interface Limiters {
  partner: RateLimiterPostgres;
  address: RateLimiterPostgres;
}

function createLimiters(prisma: PrismaClient, limits: AppConfig['rateLimits']): Limiters {
  const make = (policy: Policy, points: number) =>
    new RateLimiterPostgres({
      // The pg pool under Prisma (sqlPoolOf): the library's prepared upsert, without Prisma compiling it on every
      // request (a third of the API's CPU per GET went to that; `npm run bench`).
      storeClient: sqlPoolOf(prisma),
      storeType: 'pool',
      tableName: 'rate_limits',
      tableCreated: true, // by the migrations
      // Expired counters are purged by the maintenance schedule, not by a timer in every API process.
      clearExpiredByTimeout: false,
      keyPrefix: policy,
      points,
      duration: limits.windowSeconds,
      insuranceLimiter: new RateLimiterMemory({ keyPrefix: policy, points, duration: limits.windowSeconds }),
    });
  return { partner: make('partner', limits.partnerRequests), address: make('address', limits.publicRequests) };
}

const limitersOf = new WeakMap<PrismaClient, Map<string, Limiters>>();

function limiters(prisma: PrismaClient, limits: AppConfig['rateLimits']): Limiters {
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

/** Counts the request against its limit; sets the RateLimit headers and throws 429 rate_limited when over. */
export async function enforceRateLimit(
  services: { prisma: PrismaClient; config: Pick<AppConfig, 'rateLimits'> },
  ctx: Context,
  route: Pick<RouteDefinition, 'auth' | 'rateLimit'>,
  partner: AuthenticatedPartner | undefined,
): Promise<void> {
  if (!isRateLimited(route)) return;
  const limits = services.config.rateLimits;
  const policy: Policy = partner ? 'partner' : 'address';
  const subject = partner ? partner.id : clientAddress(ctx, limits.trustProxyHops);
  const quota = partner ? limits.partnerRequests : limits.publicRequests;
  let result: RateLimiterRes;
  let refused = false;
  try {
    result = await limiters(services.prisma, limits)[policy].consume(subject);
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    result = rejection;
    refused = true;
  }
  const resetSeconds = Math.max(1, Math.ceil(result.msBeforeNext / 1000));
  ctx.set('RateLimit-Policy', `"${policy}";q=${quota};w=${limits.windowSeconds}`);
  ctx.set('RateLimit', `"${policy}";r=${result.remainingPoints};t=${resetSeconds}`);
  if (refused) {
    const error = new ApiError(
      'rate_limited',
      `Too many requests: at most ${quota} per ${limits.windowSeconds} s per ${partner ? 'partner' : 'client address'}. ` +
        `Retry in ${resetSeconds} s.`,
    );
    error.retryAfterSeconds = resetSeconds; // sent as Retry-After by the error mapper
    throw error;
  }
}
