// The chaos runner's HTTP client: plain node:http on loopback, so that a request can carry any bytes and headers a
// partner's client could send, every request is bounded in time, and a killed server shows up as a network error
// (never as an exception thrown through a scenario).
import http, { IncomingHttpHeaders } from 'node:http';
import net from 'node:net';
import { errorCatalogue, ErrorCode } from '../../src/http/error-codes';

export interface HttpRequest {
  method: string;
  /** Path and query, sent as given (already encoded). */
  path: string;
  headers?: Record<string, string>;
  /** A JSON value (sent with Content-Type application/json unless the headers say otherwise) or raw bytes. */
  json?: unknown;
  body?: Buffer | string;
  timeoutMs?: number;
}

export interface HttpResponse {
  kind: 'response';
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  body: unknown;
  ms: number;
}

export interface NetworkFailure {
  kind: 'network';
  /** ECONNREFUSED, ECONNRESET, TIMEOUT ... */
  code: string;
  message: string;
  ms: number;
}

export type HttpOutcome = HttpResponse | NetworkFailure;

/** Bound on one request of the runner unless it says otherwise: far above the API's own deadline. */
export const DEFAULT_TIMEOUT_MS = 60_000;

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

export function describe(outcome: HttpOutcome): string {
  return outcome.kind === 'network'
    ? `network ${outcome.code} after ${outcome.ms} ms`
    : `${outcome.status} ${outcome.text.slice(0, 300)}`;
}

export class HttpClient {
  constructor(
    readonly port: number,
    private readonly defaultHeaders: Record<string, string> = {},
  ) {}

  /** The same server, with these headers on every request (e.g. a partner's API key). */
  with(headers: Record<string, string>): HttpClient {
    return new HttpClient(this.port, { ...this.defaultHeaders, ...headers });
  }

  send(given: HttpRequest): Promise<HttpOutcome> {
    const request = boundedStream(given);
    const started = Date.now();
    const headers: Record<string, string> = { ...this.defaultHeaders, ...request.headers };
    let payload: Buffer | undefined;
    if (request.json !== undefined) {
      payload = Buffer.from(JSON.stringify(request.json));
      if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type'))
        headers['Content-Type'] = 'application/json';
    } else if (request.body !== undefined) {
      payload = Buffer.isBuffer(request.body) ? request.body : Buffer.from(request.body, 'latin1');
    }
    if (payload && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-length'))
      headers['Content-Length'] = String(payload.length);
    const timeoutMs = request.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return new Promise((resolve) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const finish = (outcome: HttpOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      const failed = (code: string, message: string) =>
        finish({ kind: 'network', code, message, ms: Date.now() - started });
      let req: http.ClientRequest;
      try {
        req = http.request(
          { host: '127.0.0.1', port: this.port, method: request.method, path: request.path, headers, agent },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('error', (error: NodeJS.ErrnoException) => failed(error.code ?? 'ERESPONSE', error.message));
            res.on('end', () => {
              const text = Buffer.concat(chunks).toString('utf8');
              let body: unknown;
              try {
                body = text === '' ? undefined : JSON.parse(text);
              } catch {
                body = undefined;
              }
              finish({
                kind: 'response',
                status: res.statusCode ?? 0,
                headers: res.headers,
                text,
                body,
                ms: Date.now() - started,
              });
            });
          },
        );
      } catch (error) {
        // node refuses header values it cannot send (control characters): the case never left the runner.
        failed('ECLIENT', (error as Error).message);
        return;
      }
      timer = setTimeout(() => {
        failed('TIMEOUT', `no answer within ${timeoutMs} ms`);
        req.destroy();
      }, timeoutMs);
      req.on('error', (error: NodeJS.ErrnoException) => failed(error.code ?? 'EREQUEST', error.message));
      req.end(payload);
    });
  }

  /**
   * Writes raw bytes to a new connection and returns what came back (malformed framing that no HTTP client would
   * produce). Resolves with the response's status line and body once the server closes or `timeoutMs` passes.
   */
  raw(bytes: Buffer, timeoutMs = 10_000): Promise<HttpOutcome> {
    const started = Date.now();
    return new Promise((resolve) => {
      const socket = net.connect(this.port, '127.0.0.1');
      const chunks: Buffer[] = [];
      let settled = false;
      const finish = () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.destroy();
        const text = Buffer.concat(chunks).toString('latin1');
        const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
        if (!match) {
          resolve({ kind: 'network', code: 'ENORESPONSE', message: text.slice(0, 200), ms: Date.now() - started });
          return;
        }
        const separator = text.indexOf('\r\n\r\n');
        const head = text.slice(0, separator < 0 ? text.length : separator);
        const bodyText = separator < 0 ? '' : text.slice(separator + 4);
        const headers: IncomingHttpHeaders = {};
        for (const line of head.split('\r\n').slice(1)) {
          const colon = line.indexOf(':');
          if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
        }
        let body: unknown;
        try {
          body = JSON.parse(bodyText);
        } catch {
          body = undefined;
        }
        resolve({
          kind: 'response',
          status: Number(match[1]),
          headers,
          text: bodyText,
          body,
          ms: Date.now() - started,
        });
      };
      const timer = setTimeout(finish, timeoutMs);
      socket.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        // One response is all we asked for: stop once its body is complete.
        const text = Buffer.concat(chunks).toString('latin1');
        const separator = text.indexOf('\r\n\r\n');
        const length = /\r\ncontent-length:\s*(\d+)/i.exec(text.slice(0, separator));
        if (separator >= 0 && length && Buffer.byteLength(text.slice(separator + 4), 'latin1') >= Number(length[1]))
          finish();
      });
      socket.on('end', finish);
      socket.on('close', finish);
      socket.on('error', finish);
      socket.write(bytes);
    });
  }
}

/**
 * What is wrong with an error answer, or null: the body must be `{error: {code, message, details?}}` with a code of
 * the catalogue whose status is the one answered, validation errors carry details naming parameters, and 503s carry
 * a numeric Retry-After.
 */
export function errorShapeProblem(response: HttpResponse): string | null {
  const body = response.body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined;
  const error = body?.error;
  if (!error || typeof error !== 'object') return `not in the error shape: ${response.text.slice(0, 200)}`;
  if (typeof error.code !== 'string' || typeof error.message !== 'string' || error.message === '')
    return `error without code or message: ${response.text.slice(0, 200)}`;
  const entry = errorCatalogue[error.code as ErrorCode];
  if (!entry) return `undocumented error code ${error.code}`;
  if (entry.status !== response.status)
    return `code ${error.code} answered with ${response.status}, documented ${entry.status}`;
  if (error.code === 'validation_error') {
    const details = error.details as Array<{ code?: unknown; param?: unknown }> | undefined;
    if (!Array.isArray(details) || details.length === 0) return 'validation_error without details';
    if (details.some((detail) => typeof detail.param !== 'string' || typeof detail.code !== 'string'))
      return `validation_error details without param/code: ${JSON.stringify(details).slice(0, 200)}`;
  }
  if (response.status === 503 && !/^\d+$/.test(String(response.headers['retry-after'] ?? '')))
    return '503 without a numeric Retry-After';
  return null;
}

export function isResponse(outcome: HttpOutcome): outcome is HttpResponse {
  return outcome.kind === 'response';
}

/** The live event stream answers until its `max_seconds`: every chaos request to it asks for the shortest (1 s). */
const STREAM_PATH = '/v1/events/stream';

function boundedStream(request: HttpRequest): HttpRequest {
  if (!request.path.startsWith(STREAM_PATH)) return request;
  const [pathname, query = ''] = request.path.split(/\?(.*)/s, 2) as [string, string?];
  if (pathname !== STREAM_PATH) return request;
  const kept = query.split('&').filter((pair) => pair !== '' && !/^max_seconds(=|$)/i.test(pair));
  return { ...request, path: `${pathname}?${[...kept, 'max_seconds=1'].join('&')}` };
}
