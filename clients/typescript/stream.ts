// Reads the live event stream (GET /v1/events/stream, server-sent events) and reconnects after the last event
// received (`Last-Event-ID`), so the log is followed without gaps across disconnections and the stream's end.
import type { WebhookEvent } from './index';

export interface EventStreamOptions {
  baseUrl: string;
  apiKey: string;
  /** Start after this event (by default: from now). */
  lastEventId?: string;
  signal?: AbortSignal;
  fetch?: typeof fetch;
  /** Told about each (re)connection failure before the next try. */
  onError?: (error: unknown) => void;
  /** Told each time the stream is open: every event recorded from then on comes (the first call: "from now"). */
  onOpen?: () => void;
}

/** Every event recorded from now on (or after `lastEventId`), until `signal` aborts. */
export async function* streamEvents(options: EventStreamOptions): AsyncGenerator<WebhookEvent, void, undefined> {
  const fetcher = options.fetch ?? globalThis.fetch;
  let lastEventId = options.lastEventId;
  let failures = 0;
  while (!options.signal?.aborted) {
    try {
      const response = await fetcher(new URL('/v1/events/stream', options.baseUrl), {
        headers: {
          Authorization: `Bearer ${options.apiKey}`,
          Accept: 'text/event-stream',
          ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}),
        },
        signal: options.signal,
      });
      if (!response.ok || !response.body) {
        const text = await response.text();
        // A refused key or event id will not get better by retrying.
        if (response.status === 401 || response.status === 422) throw new FatalStreamError(response.status, text);
        throw new Error(`stream answered ${response.status}: ${text}`);
      }
      failures = 0;
      options.onOpen?.();
      for await (const message of messages(response.body)) {
        if (message.id) lastEventId = message.id;
        if (message.data) yield JSON.parse(message.data) as WebhookEvent;
      }
    } catch (error) {
      if (options.signal?.aborted || error instanceof FatalStreamError) throw error;
      options.onError?.(error);
      failures += 1;
      await new Promise((resolve) => setTimeout(resolve, Math.min(30_000, 500 * 2 ** Math.min(failures, 6))));
    }
  }
}

export class FatalStreamError extends Error {
  constructor(
    readonly status: number,
    body: string,
  ) {
    super(`event stream refused (${status}): ${body}`);
  }
}

/** The messages of a text/event-stream body (fields id, event, data; comments and retry ignored). */
async function* messages(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<{ id?: string; event?: string; data?: string }> {
  const decoder = new TextDecoder();
  let buffer = '';
  let message: { id?: string; event?: string; data?: string } = {};
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffer.search(/\r?\n/)) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer[newline] === '\r' ? 2 : 1));
      if (line === '') {
        if (message.data !== undefined || message.id !== undefined) yield message;
        message = {};
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') message.data = message.data === undefined ? value : `${message.data}\n${value}`;
      else if (field === 'id') message.id = value;
      else if (field === 'event') message.event = value;
    }
  }
}
