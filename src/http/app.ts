// The Koa application: request ids, structured logs, the one error mapper, authentication,
// request validation and the route table. Built by src/server.ts and by the tests.
import Router from '@koa/router';
import Koa, { Context } from 'koa';
import { randomUUID } from 'node:crypto';
import { Server, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AppEnvironment } from '../config';
import type { ApiServices } from '../app-services';
import { authenticate } from './auth';
import { ApiError, apiErrorOf } from './errors';
import { acceptsIdempotencyKey, buildOpenApiDocument } from './openapi';
import { mountDocs } from './docs';
import { mountHostedAssets } from './hosted-assets';
import { isCustomBody, RouteDefinition, toKoaPath } from './route';
import { allRoutes } from '../routes';
import { mountPixWebhook } from '../routes/pix-webhook';
import { parseOrThrow } from './validation';
import { readJsonBody, rejectUnexpectedBody } from './json-body';
import { IDEMPOTENCY_HEADER, StoredResponse, withIdempotency } from './idempotency';
import { enforceRateLimit } from './rate-limit';
import { securityHeaders } from './security-headers';
import { secretBoxOf } from '../domain/secret-box';
import { isDatabaseUnavailable } from '../persistence/database';
import { isTemporalUnavailable } from '../temporal/errors';
import { ProviderUnavailableError } from '../providers/unavailable';
import { runInRequestContext } from '../request-context';
import { observeRequest } from '../observability/observe';
import { nameServerSpan } from '../observability/http';

/**
 * Requests node's HTTP parser refuses (broken framing, header syntax, oversized headers, headers too slow) never reach
 * Koa: answer them in the API's error shape too, instead of node's bare `400 Bad Request`.
 */
export function answerUnparsableRequests(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const apiError =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? new ApiError('request_headers_too_large', 'The request headers exceed 16 KB.')
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? new ApiError('request_timeout', 'The request headers did not arrive in time.')
          : new ApiError('malformed_request', 'The request is not valid HTTP/1.1; nothing was done.');
    const body = JSON.stringify(apiError.toBody());
    socket.end(
      `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}

const requestIdPattern = /^[A-Za-z0-9._:-]{1,100}$/;

export interface AppHooks {
  /** Called once per finished request (tests check every response against the OpenAPI document). */
  onResponse?(ctx: Context): void;
  /**
   * The OpenAPI document of these routes and this configuration, built already (test harnesses share one per jest
   * run instead of building it in every file); built here when absent, as in production.
   */
  openApiDocument?: object;
}

export function createApp(
  services: ApiServices,
  allRouteDefinitions: RouteDefinition[] = allRoutes,
  hooks: AppHooks = {},
): Koa {
  // X-Forwarded-* are believed only behind as many proxies as configured (TRUST_PROXY_HOPS), as for rate limits.
  const hops = services.config.rateLimits.trustProxyHops;
  const app = new Koa({ proxy: hops > 0, maxIpsCount: hops });
  // Koa reports errors of a streamed body here. A client that leaves mid-stream (the live event stream, a report
  // download) is how such a response normally ends, not a fault of the service.
  app.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'ERR_STREAM_PREMATURE_CLOSE') return;
    services.logger.error({ err: error }, 'response failed');
  });
  const routes = routesOf(allRouteDefinitions, services.config.appEnv);
  const router = new Router();
  const openApiDocument = hooks.openApiDocument ?? buildOpenApiDocument(routes, services.config);

  app.use(async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = requestIdPattern.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.log = services.logger.child({ request_id: requestId });
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await withinDeadline(services.config.requestTimeoutMs, next);
      if (ctx.body == null && ctx.status === 404)
        throw new ApiError('not_found', `No route ${ctx.method} ${ctx.path}.`);
      if (ctx.body == null && (ctx.status === 405 || ctx.status === 501)) {
        // The router set the Allow header; keep it and answer in the API's error shape.
        throw new ApiError('method_not_allowed', `${ctx.method} is not supported on ${ctx.path}.`);
      }
    } catch (error) {
      respondWithError(ctx, error);
    } finally {
      hooks.onResponse?.(ctx);
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const template = routeTemplateOf(ctx);
      observeRequest({
        method: ctx.method,
        route: template,
        status: ctx.status,
        durationSeconds: durationMs / 1000,
        replayed: ctx.response.get('Idempotent-Replayed') === 'true',
      });
      nameServerSpan(ctx.method, template);
      ctx.state.log.info(
        {
          method: ctx.method,
          // The route template when one matched, never a path holding a secret (hosted verification tokens).
          path: ctx.state.route
            ? undefined
            : ctx.path
                .replace(/^\/verify\/[^/]+/, '/verify/{token}')
                .replace(/^\/providers\/api-pix\/webhook\/[^/]+/, '/providers/api-pix/webhook/{secret}'),
          route: ctx.state.route ?? null,
          status: ctx.status,
          duration_ms: durationMs,
          partner_id: ctx.state.partner?.id,
        },
        'request',
      );
    }
  });

  app.use(securityHeaders());

  router.get('/openapi.json', (ctx) => {
    ctx.body = openApiDocument;
  });
  mountDocs(router);
  mountHostedAssets(router);
  mountPixWebhook(router, services);

  for (const route of routes) mountRoute(router, route, services);

  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

/**
 * The path template of the route that answered (`/v1/customers/{customer_id}`), for metrics and span names: an API
 * route's declared path, or the router's pattern for the others (/openapi.json, /docs); null when none matched.
 */
function routeTemplateOf(ctx: Context): string | null {
  const declared = ctx.state.route as string | undefined;
  if (declared) return declared.slice(declared.indexOf(' ') + 1);
  return (ctx as Context & { _matchedRoute?: string })._matchedRoute ?? null;
}

function mountRoute(router: Router, route: RouteDefinition, services: ApiServices): void {
  router[route.method](toKoaPath(route.path), async (ctx: Context) => {
    ctx.state.route = `${route.method.toUpperCase()} ${route.path}`;
    const authentication = route.auth === 'partner' ? await authenticate(services, ctx) : undefined;
    await enforceRateLimit(services, ctx, route, authentication); // before any body is read
    const partner = authentication?.partner;
    if (partner) {
      ctx.state.partner = partner;
      ctx.state.log = ctx.state.log.child({ partner_id: partner.id });
    }
    const params = route.params ? parseOrThrow(route.params, { ...ctx.params }) : {};
    const query = route.query ? parseOrThrow(route.query, normaliseQuery(ctx.query)) : {};
    let body: unknown;
    let rawBody: unknown;
    if (isCustomBody(route.body)) {
      body = rawBody = await route.body.read(ctx, services);
    } else if (route.body) {
      rawBody = await readJsonBody(ctx);
      body = parseOrThrow(route.body, rawBody);
    } else {
      await rejectUnexpectedBody(ctx);
    }
    const execute = async (): Promise<StoredResponse> => {
      const result = await route.handler({
        params,
        query,
        body,
        partner: partner as NonNullable<typeof partner>,
        services,
        log: ctx.state.log,
        koa: ctx,
      });
      return { status: route.response.status, body: route.response.status === 204 ? undefined : result };
    };
    const idempotencyKey = ctx.get(IDEMPOTENCY_HEADER);
    let response: StoredResponse;
    if (idempotencyKey && partner && acceptsIdempotencyKey(route)) {
      const outcome = await withIdempotency(
        services.prisma,
        {
          partnerId: partner.id,
          key: idempotencyKey,
          method: ctx.method,
          path: ctx.path,
          payload: { query: ctx.query, body: rawBody },
        },
        route.response.status,
        execute,
        secretBoxOf(services.config),
        services.config.idempotencyAbandonedClaimMs,
      );
      if (outcome.replayed) ctx.set('Idempotent-Replayed', 'true');
      response = outcome;
    } else {
      response = await execute();
    }
    ctx.status = response.status;
    if (route.response.contentType && !ctx.type) ctx.type = route.response.contentType; // unless the handler chose
    if (response.status !== 204 && response.body !== undefined && response.body !== null) ctx.body = response.body;
  });
}

/**
 * Runs the rest of the request under its deadline (docs/write-path.md "Bounded waits"): the deadline is visible to every
 * Temporal call (src/temporal/calls.ts), and a request still running when it passes answers 503. Work already
 * past its commit finishes in the background; a retry with the same Idempotency-Key then gets its result.
 */
async function withinDeadline(timeoutMs: number, next: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let timer: NodeJS.Timeout | undefined;
  const work = runInRequestContext({ deadline }, next);
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          ApiError.unavailable(
            `The request did not complete within ${timeoutMs / 1000} s. Retry shortly (with the same Idempotency-Key).`,
          ),
        ),
      timeoutMs,
    );
  });
  work.catch(() => undefined); // answered by the deadline; its own failure is no longer anyone's to see
  try {
    await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** The operations that exist in an environment (sandbox-only ones are absent in production). */
export function routesOf(routes: RouteDefinition[], appEnv: AppEnvironment): RouteDefinition[] {
  return routes.filter((route) => !route.environments || route.environments.includes(appEnv));
}

/** Repeated query parameters are not supported: keep them as arrays so validation rejects them. */
function normaliseQuery(query: Context['query']): Record<string, unknown> {
  return Object.fromEntries(Object.entries(query));
}

/** The answer for a failure that is neither an ApiError nor a DomainError: an outage, or a bug. */
function unknownFailure(ctx: Context, error: unknown): ApiError {
  if (isDatabaseUnavailable(error) || isTemporalUnavailable(error) || error instanceof ProviderUnavailableError) {
    // An outage, not a bug: retryable, in the error shape, never a 500.
    ctx.state.log.warn({ err: error }, 'dependency unavailable');
    return ApiError.unavailable(
      error instanceof ProviderUnavailableError
        ? `A provider this operation needs is unavailable (${error.message}). Retry later.`
        : 'A dependency of the service is unavailable. Retry shortly (with the same Idempotency-Key).',
    );
  } else {
    ctx.state.log.error({ err: error }, 'unhandled error');
    return new ApiError(
      'internal_error',
      `An unexpected error occurred. Quote request id ${String(ctx.state.requestId)} when contacting support.`,
    );
  }
}

/** The one error mapper: every failure leaves as `{error: {code, message, details?}}`. */
function respondWithError(ctx: Context, error: unknown): void {
  const apiError = apiErrorOf(error) ?? unknownFailure(ctx, error);
  ctx.status = apiError.status;
  if (apiError.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(apiError.retryAfterSeconds));
  ctx.body = apiError.toBody();
}
