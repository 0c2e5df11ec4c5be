// The event log (SPEC 6): what partners read to catch up after an outage, and redelivery on request.
import { z } from 'zod';
import { listSchema, paginationQuerySchema } from '../schemas/pagination';
import { defineRoute, idParam } from '../http/route';
import { toWebhookDelivery, toWebhookEvent } from '../presenters/webhooks';
import { openEventStream } from '../services/event-stream';
import { findEventOrThrow, listEventDeliveries, listEvents, redeliverEvent } from '../services/webhooks';
import { eventListQuerySchema, webhookDeliverySchema, webhookEventSchema } from '../schemas/webhooks';

const tag = 'Events';
const eventIdParam = idParam('id', 'Event id (`event_id`).');

const listEventsRoute = defineRoute({
  method: 'get',
  path: '/v1/events',
  operationId: 'listEvents',
  tag,
  summary: 'List events',
  description:
    'Every event of the partner, newest first, whatever the webhook configuration (events that happened while it ' +
    'was disabled or not subscribed are here too). Items have the shape of the webhook body. Filters: `event_type`, ' +
    '`event_resource_id`, and the creation dates.',
  query: eventListQuerySchema,
  response: {
    status: 200,
    description: 'A page of events.',
    schema: listSchema(webhookEventSchema, 'WebhookEventList'),
  },
  async handler({ query, partner, services }) {
    const { rows, cursor } = await listEvents(services.prisma, partner.id, query, {
      eventType: query.event_type,
      resourceId: query.event_resource_id,
    });
    return { items: rows.map((row) => toWebhookEvent(row, services.config)), cursor };
  },
});

const streamQuerySchema = z
  .object({
    max_seconds: z.coerce
      .number()
      .int()
      .min(1)
      .max(3600)
      .default(3600)
      .meta({ description: 'The stream ends after this many seconds (1-3600, default 3600); reconnect to go on.' }),
    last_event_id: z
      .string()
      .max(100)
      .optional()
      .meta({ description: 'Resume after this event, as the `Last-Event-ID` header does (which wins).' }),
  })
  .strict();

const streamEvents = defineRoute({
  method: 'get',
  path: '/v1/events/stream',
  operationId: 'streamEvents',
  tag,
  summary: 'Stream events live',
  description:
    'Server-sent events (`text/event-stream`): each event of the partner as it is recorded, oldest first, within ' +
    'about a second. Each message has `id:` (the `event_id`), `event:` (the `event_type`) and `data:` (the event, ' +
    'the shape of the webhook body). Without `Last-Event-ID` the stream starts now; with it (the header, or ' +
    '`last_event_id`), it starts after that event of the log, so a client that reconnects misses nothing. A comment ' +
    'line (`: heartbeat`) every 15 seconds of silence keeps proxies from closing it. It ends after `max_seconds`. ' +
    'For development (the `payments listen` command of the SDK forwards it to a local URL); production ' +
    'integrations use webhooks. At most 3 open streams per partner (429 `rate_limited` beyond).',
  query: streamQuerySchema,
  response: {
    status: 200,
    description: 'The stream of events.',
    contentType: 'text/event-stream',
    schema: z.string(),
  },
  errors: ['invalid_cursor', 'rate_limited'],
  async handler({ query, partner, services, koa }) {
    const lastEventId = koa.get('last-event-id') || query.last_event_id;
    const stream = await openEventStream(services, partner.id, { lastEventId, maxSeconds: query.max_seconds });
    koa.req.on('close', () => stream.destroy());
    koa.set('Cache-Control', 'no-cache');
    koa.set('X-Accel-Buffering', 'no'); // nginx would otherwise hold the events back
    koa.type = 'text/event-stream';
    return stream as never;
  },
});

const getEvent = defineRoute({
  method: 'get',
  path: '/v1/events/{id}',
  operationId: 'getEvent',
  tag,
  summary: 'Get an event',
  params: eventIdParam,
  response: { status: 200, description: 'The event.', schema: webhookEventSchema },
  errors: ['not_found'],
  async handler({ params, partner, services }) {
    return toWebhookEvent(await findEventOrThrow(services.prisma, partner.id, params.id as string), services.config);
  },
});

const redeliver = defineRoute({
  method: 'post',
  path: '/v1/events/{id}/redeliver',
  operationId: 'redeliverEvent',
  tag,
  summary: 'Deliver an event again',
  description:
    'Queues one more delivery of the event (the same body and `webhook-id`, a fresh signature) to the configured URL, ' +
    'with the usual retries. It is sent at once, not after pending deliveries of the same resource, and whatever ' +
    'the subscriptions. Needs an enabled configuration. No body.',
  params: eventIdParam,
  response: { status: 202, description: 'The queued delivery.', schema: webhookDeliverySchema },
  errors: ['not_found', 'webhook_config_missing', 'webhook_config_disabled'],
  async handler({ params, partner, services }) {
    const event = await findEventOrThrow(services.prisma, partner.id, params.id as string);
    return redeliverEvent(services, event);
  },
});

const listDeliveries = defineRoute({
  method: 'get',
  path: '/v1/events/{id}/deliveries',
  operationId: 'listEventDeliveries',
  tag,
  summary: "List an event's deliveries",
  description: 'Deliveries of the event (the original one and redeliveries), newest first, each with its attempts.',
  params: eventIdParam,
  query: paginationQuerySchema,
  response: {
    status: 200,
    description: 'A page of deliveries.',
    schema: listSchema(webhookDeliverySchema, 'WebhookDeliveryList'),
  },
  errors: ['not_found'],
  async handler({ params, query, partner, services }) {
    const { rows, cursor } = await listEventDeliveries(services.prisma, partner.id, params.id as string, query);
    return { items: rows.map(toWebhookDelivery), cursor };
  },
});

export const eventRoutes = [listEventsRoute, streamEvents, getEvent, redeliver, listDeliveries];
