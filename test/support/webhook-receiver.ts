// A real HTTP server standing in for a partner's webhook endpoint. It records every request (raw body included)
// and answers as the test says; tests wait for requests with promises that the server resolves, never with sleeps.
import http, { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: Record<string, unknown>;
  receivedAt: Date;
}

/** What to answer: a status code, or 'drop' to close the connection without an answer. */
export type Answer = number | 'drop';
export type Responder = (request: ReceivedWebhook, index: number) => Answer | Promise<Answer>;

interface Waiter {
  predicate: (requests: ReceivedWebhook[]) => boolean;
  resolve: (requests: ReceivedWebhook[]) => void;
  /** Resolve as soon as requests arrive, before they are answered (for receivers that never answer). */
  onArrival: boolean;
}

/** A failure guard only: a test waiting this long has failed (deliveries arrive in milliseconds). */
const WAIT_LIMIT_MS = 15_000;

export class WebhookReceiver {
  readonly requests: ReceivedWebhook[] = [];
  private responder: Responder = () => 200;
  private waiters: Waiter[] = [];

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(responder?: Responder): Promise<WebhookReceiver> {
    let receiver: WebhookReceiver | undefined;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => void (receiver as WebhookReceiver).handle(req, res, Buffer.concat(chunks).toString('utf8')));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    receiver = new WebhookReceiver(server, `http://127.0.0.1:${port}/webhooks`);
    if (responder) receiver.respondWith(responder);
    return receiver;
  }

  respondWith(responder: Responder): void {
    this.responder = responder;
  }

  /** Resolves with all requests once the predicate holds (checked when a request has been answered). */
  waitFor(
    predicate: (requests: ReceivedWebhook[]) => boolean,
    what = 'webhooks',
    onArrival = false,
  ): Promise<ReceivedWebhook[]> {
    if (predicate(this.requests)) return Promise.resolve([...this.requests]);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        onArrival,
        predicate,
        resolve: (requests) => {
          clearTimeout(guard);
          resolve(requests);
        },
      };
      const guard = setTimeout(() => {
        this.waiters = this.waiters.filter((other) => other !== waiter);
        reject(new Error(`timed out waiting for ${what}; received ${this.requests.length}: ${this.describe()}`));
      }, WAIT_LIMIT_MS);
      this.waiters.push(waiter);
    });
  }

  waitForCount(count: number): Promise<ReceivedWebhook[]> {
    return this.waitFor((requests) => requests.length >= count, `${count} webhook(s)`);
  }

  /** Resolves once `count` requests have arrived, answered or not (a receiver that hangs). */
  waitForArrivals(count: number): Promise<ReceivedWebhook[]> {
    return this.waitFor((requests) => requests.length >= count, `${count} webhook(s) to arrive`, true);
  }

  /** The requests carrying this event id (`Webhook-Id`). */
  forEvent(eventId: string): ReceivedWebhook[] {
    return this.requests.filter((request) => request.headers['webhook-id'] === eventId);
  }

  describe(): string {
    return this.requests
      .map((request) => `${String(request.body.event_type)}(${String(request.headers['webhook-id'])})`)
      .join(', ');
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse, rawBody: string): Promise<void> {
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(rawBody) as Record<string, unknown>;
    } catch {
      // Recorded as received; the test's assertions on the body will say what was wrong.
    }
    const received: ReceivedWebhook = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      rawBody,
      body,
      receivedAt: new Date(),
    };
    const index = this.requests.push(received) - 1;
    this.notify((waiter) => waiter.onArrival);
    let answer: Answer;
    try {
      answer = await this.responder(received, index);
    } catch {
      answer = 500;
    }
    if (answer === 'drop') {
      req.socket.destroy();
    } else {
      res.writeHead(answer, { 'Content-Type': 'text/plain' }).end(answer < 300 ? 'ok' : 'nope');
    }
    this.notify(() => true);
  }

  private notify(eligible: (waiter: Waiter) => boolean): void {
    const satisfied = this.waiters.filter((waiter) => eligible(waiter) && waiter.predicate(this.requests));
    this.waiters = this.waiters.filter((waiter) => !satisfied.includes(waiter));
    for (const waiter of satisfied) waiter.resolve([...this.requests]);
  }
}
