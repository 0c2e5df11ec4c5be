// Request and response schemas of webhook configurations, events and deliveries (SPEC 2.8, 4.6, 6).
import { deliveryStatuses, type DeliveryStatus } from '../domain/webhook-retry';
import { z } from 'zod';
import { eventTypes } from '../events';
import { paginationQuerySchema } from './pagination';
import { PORT_PATTERN, timestampSchema, uuidSchema } from './common';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

export const eventTypeSchema = z
  .enum(eventTypes)
  .meta({ id: 'EventType', description: 'An event type of SPEC section 6, e.g. `customer.approved`.' });

/** Types POST /webhooks/mock can send (SPEC 4.6: payout, payin and walletTransfer types only). */
export const mockEventTypes = eventTypes.filter((type) => /^(payin|payout|walletTransfer)\./.test(type));

/**
 * The URL's shape: http(s), no credentials (`user@`), a host name whose last label starts with a letter or a dotted
 * IPv4 address (what a URL parser takes), an optional port. Whether the host is public is not a matter of shape
 * (422 webhook_url_not_allowed).
 */
const webhookUrlPattern =
  '^[Hh][Tt][Tt][Pp][Ss]?://(([A-Za-z0-9-]+\\.)*[A-Za-z][A-Za-z0-9-]*|((25[0-5]|2[0-4]\\d|1?\\d?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1?\\d?\\d))' +
  `(:${PORT_PATTERN})?([/?#]\\S*)?$`;

const webhookUrlSchema = z
  .url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' })
  .max(MAX_WEBHOOK_URL_LENGTH)
  .regex(new RegExp(webhookUrlPattern), 'must be an http(s) URL with a host name or IPv4 address, without credentials')
  .meta({
    format: 'uri',
    pattern: webhookUrlPattern,
    description:
      'Absolute URL receiving the POSTs: http or https in the sandbox, https only in production. The host must ' +
      'be public: not a private, loopback, link-local or reserved address, `localhost` or a single-label name ' +
      '(a sandbox run locally with WEBHOOK_ALLOW_PRIVATE_URLS=true accepts them). No credentials in the URL. ' +
      `At most ${MAX_WEBHOOK_URL_LENGTH} characters.`,
    example: 'https://partner.example/webhooks/payments',
  });

const subscriptionsSchema = z
  .array(eventTypeSchema)
  .min(1)
  .superRefine((types, ctx) => {
    types.forEach((type, index) => {
      if (types.indexOf(type) !== index)
        ctx.addIssue({ code: 'custom', path: [index], message: `${type} is listed twice` });
    });
  })
  .meta({
    uniqueItems: true,
    description: 'Event types to deliver (SPEC 6), at least one, no duplicates.',
    example: ['customer.approved'],
  });

const enabledDescription =
  'Whether events are delivered. While false, nothing is delivered and events that happen meanwhile are never ' +
  'delivered later (list them with GET /v1/events and redeliver what you need).';

export const createWebhookConfigRequestSchema = z
  .object({
    url: webhookUrlSchema,
    subscriptions: subscriptionsSchema,
    enabled: z
      .boolean()
      .default(false)
      .meta({ description: `${enabledDescription} Default false.` }),
  })
  .strict()
  .meta({ id: 'CreateWebhookConfigRequest' });

export const updateWebhookConfigRequestSchema = z
  .object({
    url: webhookUrlSchema.optional(),
    subscriptions: subscriptionsSchema.optional(),
    enabled: z.boolean().optional().meta({ description: enabledDescription }),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, 'give at least one of url, subscriptions, enabled')
  .meta({ id: 'UpdateWebhookConfigRequest', description: 'Fields left out keep their value.', minProperties: 1 });

export type CreateWebhookConfigRequest = z.output<typeof createWebhookConfigRequestSchema>;
export type UpdateWebhookConfigRequest = z.output<typeof updateWebhookConfigRequestSchema>;

export const webhookConfigSchema = z
  .object({
    id: z.uuid(),
    partner_id: z.uuid(),
    url: z.string(),
    subscriptions: z.array(eventTypeSchema),
    enabled: z.boolean(),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'WebhookConfig' });

const secretField = z.string().meta({
  description:
    'Standard Webhooks signing secret (`whsec_<base64>`) behind the `webhook-signature` header. Returned only in ' +
    'this response (stored encrypted): keep it in your secret store.',
  example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw9F5jzFjyq1c=',
});

export const createdWebhookConfigSchema = webhookConfigSchema
  .extend({ secret: secretField })
  .meta({ id: 'CreatedWebhookConfig' });

export const MAX_ROTATION_OVERLAP_HOURS = 168;

export const rotateWebhookSecretRequestSchema = z
  .object({
    overlap_hours: z
      .number()
      .int()
      .min(0)
      .max(MAX_ROTATION_OVERLAP_HOURS)
      .default(24)
      .meta({
        description:
          'Hours the old secret keeps signing deliveries next to the new one (two signatures in ' +
          '`webhook-signature`), so receivers can switch without losing one. 0 ends it at once. Default 24.',
      }),
  })
  .strict()
  .meta({ id: 'RotateWebhookSecretRequest', description: 'Optional; an empty body takes the defaults.' });

export const rotatedWebhookSecretSchema = webhookConfigSchema
  .extend({
    secret: secretField,
    previous_secret_expires_at: timestampSchema.nullable().meta({
      description: 'Until when the old secret also signs deliveries; null when overlap_hours was 0.',
    }),
  })
  .meta({ id: 'RotatedWebhookSecret' });

export type RotatedWebhookSecret = z.input<typeof rotatedWebhookSecretSchema>;

export type WebhookConfigResource = z.input<typeof webhookConfigSchema>;

export const webhookEventSchema = z
  .object({
    event: z.string().meta({
      description: 'Resource type: payin, payout, walletTransfer, customer, external_account, virtual_account.',
    }),
    event_id: z
      .uuid()
      .meta({ description: 'Unique event id; also sent as the `webhook-id` header. Use it to drop duplicates.' }),
    event_type: eventTypeSchema,
    event_resource_id: z.string().meta({ description: 'Id of the changed resource.' }),
    event_resource_status: z.string().meta({ description: 'Status of the resource after the change.' }),
    event_resource: z
      .record(z.string(), z.unknown())
      .meta({ description: 'The complete resource, as the API returned it at the time of the event.' }),
    event_created_at: timestampSchema,
  })
  .meta({ id: 'WebhookEvent', description: 'The body of every webhook POST and of every item of GET /v1/events.' });

export type WebhookEvent = z.input<typeof webhookEventSchema>;

export const eventListQuerySchema = paginationQuerySchema
  .extend({
    event_type: eventTypeSchema.optional().meta({ description: 'Only events of this type.' }),
    event_resource_id: uuidSchema.optional().meta({ description: 'Only events about this resource.' }),
  })
  .strict();

export { deliveryStatuses, type DeliveryStatus };

export const webhookDeliveryAttemptSchema = z
  .object({
    attempt: z.number().int().meta({ description: '1 for the first attempt.' }),
    url: z.string().meta({ description: 'Where this attempt was sent.' }),
    status_code: z.number().int().nullable().meta({ description: 'HTTP status answered; null when none arrived.' }),
    latency_ms: z.number().int(),
    error: z
      .string()
      .nullable()
      .meta({ description: 'Why the attempt failed (e.g. `HTTP 500`, a timeout); null on success.' }),
    created_at: timestampSchema,
  })
  .meta({ id: 'WebhookDeliveryAttempt' });

export const webhookDeliverySchema = z
  .object({
    id: z.uuid(),
    event_id: z.uuid(),
    trigger: z.enum(['event', 'redelivery']).meta({
      description:
        '`event`: sent because the event happened; `redelivery`: asked for with POST /v1/events/{id}/redeliver.',
    }),
    status: z.enum(deliveryStatuses).meta({
      description:
        '`pending`: queued or retrying; `succeeded`: a 2xx answer; `failed`: no 2xx within the retry window; ' +
        '`cancelled`: the configuration was disabled (or, for `event` deliveries, unsubscribed from the type) before it could be sent.',
    }),
    attempts: z.array(webhookDeliveryAttemptSchema),
    created_at: timestampSchema,
    updated_at: timestampSchema,
    completed_at: timestampSchema.nullable(),
  })
  .meta({ id: 'WebhookDelivery' });

export type WebhookDeliveryResource = z.input<typeof webhookDeliverySchema>;

export const mockWebhookRequestSchema = z
  .object({
    event_type: z
      .enum(mockEventTypes as [string, ...string[]])
      .meta({ description: 'A payin.*, payout.* or walletTransfer.* type.' }),
  })
  .strict()
  .meta({ id: 'MockWebhookRequest' });

export const mockWebhookResultSchema = z
  .object({
    event: webhookEventSchema,
    delivery: z.object({
      url: z.string(),
      succeeded: z.boolean().meta({ description: 'True when the receiver answered 2xx.' }),
      status_code: z.number().int().nullable(),
      latency_ms: z.number().int(),
      error: z.string().nullable(),
    }),
  })
  .meta({ id: 'MockWebhookResult' });

export type MockWebhookResult = z.input<typeof mockWebhookResultSchema>;
