// The live event stream (GET /v1/events/stream): a partner's events as server-sent events, as they are recorded.
// It polls the event log (one indexed range read per second per stream) rather than LISTEN/NOTIFY: a stream then
// holds no database connection of its own between polls, works on any API instance whatever wrote the event, and
// resumes from the log itself (`Last-Event-ID`), so a missed notification can never lose an event. The cost is up
// to one poll interval of latency, which a developer's stream can afford.
import { PassThrough, type Readable } from 'node:stream';
import type { ApiServices } from '../app-services';
import { DomainError } from '../domain/errors';
import { isUuid } from '../domain/uuid';
import {
  type EventStreamPosition,
  latestPartnerEventStreamPosition,
  partnerEventsAfter,
  partnerEventStreamPosition,
} from '../persistence/events';
import { toWebhookEvent } from '../presenters/webhooks';

/** Open streams per partner and API instance: a stream costs a poll a second, so a partner gets a few. */
export const MAX_STREAMS_PER_PARTNER = 3;
const POLL_MS = 1000;
const HEARTBEAT_MS = 15_000;
/** Events per poll: a long backlog after `Last-Event-ID` drains in steps without one large read. */
const BATCH = 100;
/** Events sent ahead of the position at most: beyond, a stream waits for older transactions to end. */
const MAX_SENT_AHEAD = 1000;

const openStreams = new Map<string, number>();
/** How to end each open stream (a stopping API ends them; clients reconnect elsewhere with Last-Event-ID). */
const closers = new Set<() => void>();

/** Ends every open stream of this process: called when the API stops, so that streams do not hold it up. */
export function closeEventStreams(): void {
  for (const close of [...closers]) close();
}

export interface EventStreamOptions {
  /** Resume after this event (the `id:` of the last event received). */
  lastEventId?: string;
  /** The stream ends after this long; clients reconnect with `Last-Event-ID`. */
  maxSeconds: number;
}

/**
 * Opens a stream of the partner's events recorded after `lastEventId` (after now without one). Refuses an event id
 * that is not the partner's (422 invalid_cursor) and a partner already at MAX_STREAMS_PER_PARTNER (429).
 */
export async function openEventStream(
  services: ApiServices,
  partnerId: string,
  options: EventStreamOptions,
): Promise<Readable> {
  let after: EventStreamPosition;
  if (options.lastEventId) {
    const position = isUuid(options.lastEventId)
      ? await partnerEventStreamPosition(services.prisma, partnerId, options.lastEventId)
      : null;
    if (position === null) {
      throw new DomainError(
        'invalid_cursor',
        'Last-Event-ID is not the id of one of your events; omit it to start now.',
      );
    }
    after = position;
  } else {
    after = await latestPartnerEventStreamPosition(services.prisma, partnerId);
  }
  const open = openStreams.get(partnerId) ?? 0;
  if (open >= MAX_STREAMS_PER_PARTNER) {
    const error = new DomainError(
      'rate_limited',
      `At most ${MAX_STREAMS_PER_PARTNER} event streams at a time; close one or wait for one to end.`,
    );
    error.retryAfterSeconds = 5;
    throw error;
  }
  openStreams.set(partnerId, open + 1);

  const stream = new PassThrough();
  let closed = false;
  let wake: (() => void) | undefined;
  const close = () => {
    if (closed) return;
    closed = true;
    closers.delete(close);
    const remaining = (openStreams.get(partnerId) ?? 1) - 1;
    if (remaining > 0) openStreams.set(partnerId, remaining);
    else openStreams.delete(partnerId);
    wake?.();
    stream.end();
  };
  closers.add(close);
  stream.on('close', close);
  stream.on('error', close);

  const run = async () => {
    const endsAt = Date.now() + options.maxSeconds * 1000;
    let lastWrite = Date.now();
    // Ids of events sent ahead of the position (see below), so that the position passing them does not send them again.
    const sentAhead = new Set<string>();
    const write = (event: Awaited<ReturnType<typeof partnerEventsAfter>>[number]) => {
      const body = JSON.stringify(toWebhookEvent(event, services.config));
      stream.write(`id: ${event.id}\nevent: ${event.eventType}\ndata: ${body}\n\n`);
      lastWrite = Date.now();
    };
    // Tells EventSource clients to reconnect after a second.
    stream.write('retry: 1000\n\n');
    while (!closed && Date.now() < endsAt) {
      // Events no running transaction can precede any more: the position moves over them.
      const settled = await partnerEventsAfter(services.prisma, partnerId, after, { settled: true, limit: BATCH });
      for (const event of settled) {
        if (!sentAhead.delete(event.id)) write(event);
        after = { transactionXid: event.transactionXid, sequence: event.sequence };
      }
      if (settled.length === BATCH) continue;
      // Committed events of younger transactions, sent now rather than when every older transaction has ended.
      if (sentAhead.size < MAX_SENT_AHEAD) {
        const ahead = await partnerEventsAfter(services.prisma, partnerId, after, {
          settled: false,
          limit: BATCH,
          except: [...sentAhead],
        });
        for (const event of ahead) {
          write(event);
          sentAhead.add(event.id);
        }
      }
      // Proxies drop a connection that says nothing for a while; a comment line keeps it open.
      if (Date.now() - lastWrite >= HEARTBEAT_MS) {
        stream.write(': heartbeat\n\n');
        lastWrite = Date.now();
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, Math.max(0, Math.min(POLL_MS, endsAt - Date.now()))).unref();
      });
    }
  };
  run()
    .catch((error: unknown) => {
      // The client reconnects with Last-Event-ID: nothing is lost, so ending the stream is enough.
      services.logger.warn({ err: error, partner_id: partnerId }, 'event stream ended on an error');
    })
    .finally(close);
  return stream;
}
