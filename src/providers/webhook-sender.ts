// Sends one webhook HTTP request and reports what happened; it never throws. Redirects are not followed (a 3xx
// is a failed attempt) and the response body is read and discarded. In production every address a host name
// resolves to must be public (src/webhooks/destinations.ts), checked when the connection is made.
import dns, { LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { isPublicAddress } from '../webhooks/destinations';

export interface WebhookRequest {
  url: string;
  /** Extra headers (signature, id); Content-Type and User-Agent are added. */
  headers: Record<string, string>;
  body: string;
}

export interface WebhookResult {
  /** HTTP status of the answer; null when none arrived (connection refused, timeout, refused address...). */
  statusCode: number | null;
  latencyMs: number;
  /** Why the attempt failed (no answer, or a non-2xx answer); null on success. */
  error: string | null;
}

export interface WebhookSender {
  send(request: WebhookRequest): Promise<WebhookResult>;
}

export const WEBHOOK_USER_AGENT = 'PaymentsAPI-Webhooks/1.0';

export function isSuccessfulDelivery(result: WebhookResult): boolean {
  return result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
}

class RefusedDestinationError extends Error {}

/** dns.lookup that refuses names resolving to any non-public address. */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    const refused = addresses.find((entry) => !isPublicAddress(entry.address));
    if (refused || addresses.length === 0) {
      return callback(new RefusedDestinationError(`${hostname} resolves to a non-public address`), '', 0);
    }
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const first = addresses[0] as LookupAddress;
    return callback(null, first.address, first.family);
  });
};

export class HttpWebhookSender implements WebhookSender {
  constructor(private readonly options: { timeoutMs: number; publicAddressesOnly: boolean }) {}

  send(request: WebhookRequest): Promise<WebhookResult> {
    const started = process.hrtime.bigint();
    const elapsed = () => Math.round(Number(process.hrtime.bigint() - started) / 1e6);
    return new Promise<WebhookResult>((resolve) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const finish = (statusCode: number | null, error: string | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ statusCode, latencyMs: elapsed(), error });
      };
      let url: URL;
      try {
        url = new URL(request.url);
      } catch {
        return finish(null, 'invalid URL');
      }
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (this.options.publicAddressesOnly && isIP(host) && !isPublicAddress(host)) {
        return finish(null, 'refused: destination is not a public address');
      }
      const body = Buffer.from(request.body, 'utf8');
      const transport = url.protocol === 'https:' ? https : http;
      const outgoing = transport.request(url, {
        method: 'POST',
        agent: false,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': String(body.length),
          'User-Agent': WEBHOOK_USER_AGENT,
          ...request.headers,
        },
        ...(this.options.publicAddressesOnly ? { lookup: publicOnlyLookup } : {}),
      });
      timer = setTimeout(() => {
        finish(null, `timed out after ${this.options.timeoutMs} ms`);
        outgoing.destroy();
      }, this.options.timeoutMs);
      outgoing.on('response', (response) => {
        const status = response.statusCode ?? null;
        response.resume();
        const done = () =>
          finish(status, status !== null && status >= 200 && status < 300 ? null : `HTTP ${String(status)}`);
        response.on('end', done);
        response.on('close', done);
        response.on('error', done);
      });
      outgoing.on('error', (error: NodeJS.ErrnoException) => {
        if (error instanceof RefusedDestinationError) return finish(null, `refused: ${error.message}`);
        finish(null, error.code ? `${error.code}: ${error.message}` : error.message);
      });
      outgoing.end(body);
    });
  }
}
