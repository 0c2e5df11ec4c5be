// The typed TypeScript client of the Payments API: openapi-fetch over the types openapi-typescript generates from
// the OpenAPI description (schema.d.ts, `npm run client:generate`), plus Standard Webhooks verification of the
// events the API delivers. Every path, parameter, body and response is typed from the description.
import { randomUUID } from 'node:crypto';
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { Webhook } from 'standardwebhooks';
import type { components, paths } from './schema';

export type { components, operations, paths } from './schema';
export type Schemas = components['schemas'];
export type PaymentsClient = Client<paths>;

export interface ClientOptions {
  /** e.g. `https://api.sandbox.example` (the sandbox) or the production base URL. */
  baseUrl: string;
  /** `sk_sandbox_...` or `sk_live_...`. */
  apiKey: string;
  /** A fetch implementation (tests pass one bound to their server); the global fetch by default. */
  fetch?: typeof fetch;
}

/**
 * A client for the API. POST and PUT requests get an `Idempotency-Key` (a UUID) unless the call sets one: a retry
 * of the same call object is then safe. Errors are returned, not thrown: `{ data }` or `{ error }` (the
 * `{"error": {code, message, details?}}` body), with `response` for the status and headers.
 */
export function createPaymentsClient(options: ClientOptions): PaymentsClient {
  const client = createClient<paths>({ baseUrl: options.baseUrl, fetch: options.fetch });
  const auth: Middleware = {
    onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${options.apiKey}`);
      if ((request.method === 'POST' || request.method === 'PUT') && !request.headers.has('Idempotency-Key')) {
        request.headers.set('Idempotency-Key', randomUUID());
      }
      return request;
    },
  };
  client.use(auth);
  return client;
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
  rawBody: string | Buffer,
  headers: Record<string, string | string[] | undefined>,
): WebhookEvent {
  const single = (name: string): string => {
    const value = headers[name] ?? headers[name.toLowerCase()];
    return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
  };
  return new Webhook(secret).verify(typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8'), {
    'webhook-id': single('webhook-id'),
    'webhook-timestamp': single('webhook-timestamp'),
    'webhook-signature': single('webhook-signature'),
  }) as WebhookEvent;
}
