// The Payments API SDK: openapi-fetch over the types openapi-typescript generates from the OpenAPI description
// (schema.d.ts, `npm run client:generate`), with what every partner would otherwise write: retries with backoff
// (429, 503, network errors, timeouts) that reuse one Idempotency-Key per call, auto-pagination, errors typed by
// `code`, the request id of each answer, and Standard Webhooks verification of the events the API delivers.
// It imports nothing of the API's own code: schema.d.ts and error-codes.ts are generated into this folder.
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { Webhook } from 'standardwebhooks';
import { errorStatuses, type ErrorCode } from './error-codes';
import type { components, paths } from './schema';

export type { components, operations, paths } from './schema';
export { errorStatuses, type ErrorCode } from './error-codes';
export type Schemas = components['schemas'];

/** The header the API answers every request with (yours, if you send a valid one). */
export const REQUEST_ID_HEADER = 'X-Request-Id';

export interface ClientOptions {
  /** e.g. `https://api.sandbox.example` (the sandbox) or the production base URL. */
  baseUrl: string;
  /** `sk_sandbox_...` or `sk_live_...`. */
  apiKey: string;
  /** A fetch implementation; the global fetch by default. */
  fetch?: typeof fetch;
  /** Retries after the first attempt on 429, 503, network errors and timeouts (default 3; 0 turns them off). */
  maxRetries?: number;
  /** Milliseconds each attempt may take before it is abandoned (and retried), default 30 000. */
  timeoutMs?: number;
  /** First backoff in milliseconds when the API gives no `Retry-After` (default 500), doubled per retry. */
  retryBaseDelayMs?: number;
  /** The longest wait between attempts, `Retry-After` included (default 30 000); a longer one is not waited. */
  maxRetryDelayMs?: number;
}

/** The `{"error": {...}}` body of a refused request. */
export interface ApiErrorBody {
  error: { code: ErrorCode; message: string; details?: Array<{ code: string; param: string; message: string }> };
}

/** A refused request, thrown by `unwrap` and the list iterators. */
export class PaymentsApiError extends Error {
  override name = 'PaymentsApiError';
  readonly code: ErrorCode | 'unknown';
  readonly details: ApiErrorBody['error']['details'];
  constructor(
    readonly status: number,
    body: unknown,
    /** Quote it to support. */
    readonly requestId: string | null,
  ) {
    const error = (body as Partial<ApiErrorBody> | undefined)?.error;
    super(error?.message ?? `HTTP ${status}`);
    this.code = error && error.code in errorStatuses ? error.code : 'unknown';
    this.details = error?.details;
  }
}

/** The request id the API gave an answer. */
export function requestIdOf(response: Response): string | null {
  return response.headers.get(REQUEST_ID_HEADER);
}

/** The data of a call, or a PaymentsApiError (typed `code`, `status`, `requestId`) when the API refused it. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.response.ok) return result.data as T;
  throw new PaymentsApiError(result.response.status, result.error, requestIdOf(result.response));
}

// ---- auto-pagination ----

type ListBody = { items: unknown[]; cursor: { after: string | null } };
/** The paths whose GET answers a page `{items, cursor}`. */
export type ListPath = {
  [P in keyof paths]: paths[P] extends { get: { responses: { 200: { content: { 'application/json': ListBody } } } } }
    ? P
    : never;
}[keyof paths];
type ListOperation<P extends ListPath> = paths[P] extends { get: infer O } ? O : never;
/** An item of a list. */
export type ListItem<P extends ListPath> =
  ListOperation<P> extends { responses: { 200: { content: { 'application/json': { items: Array<infer I> } } } } }
    ? I
    : never;
type ListParameters<P extends ListPath> = ListOperation<P> extends { parameters: infer T } ? T : never;
/** The filters of a list (its query without the cursors) and its path parameters. */
export interface ListOptions<P extends ListPath> {
  path?: ListParameters<P> extends { path: infer T } ? T : never;
  query?: ListParameters<P> extends { query?: infer Q } ? Omit<NonNullable<Q>, 'after' | 'before'> : never;
}

export interface PaymentsHelpers {
  /**
   * Every item of a list, newest first, page after page (`cursor.after`) as you iterate; `query.limit` is the page
   * size. Throws PaymentsApiError when a page is refused.
   */
  paginate<P extends ListPath>(path: P, options?: ListOptions<P>): AsyncGenerator<ListItem<P>, void, undefined>;
}

export type PaymentsClient = Client<paths> & PaymentsHelpers;

// ---- retries ----

const RETRIED_STATUSES = new Set([429, 503]);
const IDEMPOTENT_METHODS = new Set(['POST', 'PUT', 'DELETE']);

/** Milliseconds `Retry-After` asks for (seconds or an HTTP date), or null without one. */
function retryAfterMs(response: Response): number | null {
  const value = response.headers.get('Retry-After');
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });

/**
 * One attempt's signal: aborted by the caller's signal or once `timeoutMs` has passed (a TimeoutError), whichever
 * comes first, also while the response's body is read. The timer holds the controller (Node's `AbortSignal.timeout`
 * is held only weakly by its timer, and a garbage collection during an attempt could drop it: the attempt then
 * waited for the server however long it took); it does not keep the process alive.
 */
function attemptSignal(callerSignal: AbortSignal, timeoutMs: number): AbortSignal {
  const controller = new AbortController();
  const onCallerAbort = () => {
    clearTimeout(timer);
    controller.abort(callerSignal.reason);
  };
  const timer = setTimeout(() => {
    callerSignal.removeEventListener('abort', onCallerAbort);
    controller.abort(new DOMException('The attempt timed out.', 'TimeoutError'));
  }, timeoutMs);
  (timer as { unref?: () => void }).unref?.();
  if (callerSignal.aborted) onCallerAbort();
  else callerSignal.addEventListener('abort', onCallerAbort, { once: true });
  return controller.signal;
}

/**
 * A fetch that retries one request: every attempt is a copy of the same request, headers included, so the
 * Idempotency-Key set before it is the same on each (the API replays a request that did complete, never does it
 * twice). The caller's own abort signal is never retried.
 */
function retryingFetch(options: ClientOptions): (input: Request) => Promise<Response> {
  const base = options.fetch ?? globalThis.fetch;
  const maxRetries = options.maxRetries ?? 3;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const baseDelay = options.retryBaseDelayMs ?? 500;
  const maxDelay = options.maxRetryDelayMs ?? 30_000;
  return async (request: Request) => {
    const callerSignal = request.signal;
    const template = request.clone();
    for (let attempt = 0; ; attempt += 1) {
      const last = attempt >= maxRetries;
      let wait: number;
      try {
        // The signal goes to fetch itself: a Request made around it only to carry it was garbage once fetch had
        // copied it, and undici's copy follows a signal through the original's weakly held controller.
        const response = await base(template.clone(), { signal: attemptSignal(callerSignal, timeoutMs) });
        if (last || !RETRIED_STATUSES.has(response.status)) return response;
        const asked = retryAfterMs(response);
        wait = asked ?? baseDelay * 2 ** attempt * (0.5 + Math.random() / 2);
        if (wait > maxDelay) return response; // longer than the caller wants to wait: the answer is theirs
        await response.body?.cancel();
      } catch (error) {
        if (callerSignal.aborted || last) throw error;
        // A network error or a timed-out attempt: the request may or may not have arrived; the key makes it safe.
        wait = Math.min(maxDelay, baseDelay * 2 ** attempt * (0.5 + Math.random() / 2));
      }
      await sleep(wait, callerSignal);
    }
  };
}

/**
 * A client for the API. POST, PUT and DELETE requests get an `Idempotency-Key` (a UUID) unless the call sets one,
 * the same on every retry of that call. Errors are returned, not thrown: `{ data }` or `{ error }` (the
 * `{"error": {code, message, details?}}` body), with `response` for the status and headers (`requestIdOf`);
 * `unwrap` turns them into a thrown PaymentsApiError.
 */
export function createPaymentsClient(options: ClientOptions): PaymentsClient {
  const client = createClient<paths>({ baseUrl: options.baseUrl, fetch: retryingFetch(options) });
  const auth: Middleware = {
    onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${options.apiKey}`);
      if (IDEMPOTENT_METHODS.has(request.method) && !request.headers.has('Idempotency-Key')) {
        request.headers.set('Idempotency-Key', globalThis.crypto.randomUUID());
      }
      return request;
    },
  };
  client.use(auth);
  const helpers: PaymentsHelpers = {
    async *paginate(path, listOptions) {
      let after: string | undefined;
      do {
        const get = client.GET as unknown as (
          path: string,
          init: object,
        ) => Promise<{ data?: ListBody; error?: unknown; response: Response }>;
        const page = unwrap(
          await get(path, { params: { path: listOptions?.path, query: { ...listOptions?.query, after } } }),
        );
        for (const item of page.items) yield item as never;
        after = page.cursor.after ?? undefined;
      } while (after);
    },
  };
  return Object.assign(client, helpers);
}

export type WebhookEvent = Schemas['WebhookEvent'];

/**
 * Verifies an incoming webhook (Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature`) with the
 * `whsec_...` secret of your webhook configuration, and returns the event. Throws when the signature does not match
 * or the timestamp is more than 5 minutes away. Pass the raw body exactly as received (not re-serialised JSON).
 * During a secret rotation either secret verifies: try the new one, then the old one.
 */
export function verifyWebhook(
  secret: string,
  rawBody: string | Uint8Array,
  headers: Record<string, string | string[] | undefined>,
): WebhookEvent {
  const single = (name: string): string => {
    const value = headers[name] ?? headers[name.toLowerCase()];
    return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
  };
  return new Webhook(secret).verify(typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody), {
    'webhook-id': single('webhook-id'),
    'webhook-timestamp': single('webhook-timestamp'),
    'webhook-signature': single('webhook-signature'),
  }) as WebhookEvent;
}

/** The Standard Webhooks headers of a body signed with a `whsec_...` secret, as the API sends them (`listen`). */
export function signWebhook(secret: string, eventId: string, body: string, now = new Date()): Record<string, string> {
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(eventId, now, body),
  };
}
