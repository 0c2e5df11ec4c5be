// HTTP operations on the webhook configuration (SPEC 2.8, 4.6) and the sandbox mock trigger.
import { defineRoute, idParam } from '../http/route';
import { toWebhookConfig } from '../presenters/webhooks';
import {
  createWebhookConfig,
  DEFAULT_ROTATION_OVERLAP_HOURS,
  findWebhookConfigOrThrow,
  rotateWebhookSecret,
  sendMockWebhook,
  updateWebhookConfig,
} from '../services/webhooks';
import type { EventType } from '../events';
import {
  createdWebhookConfigSchema,
  createWebhookConfigRequestSchema,
  mockWebhookRequestSchema,
  mockWebhookResultSchema,
  rotatedWebhookSecretSchema,
  rotateWebhookSecretRequestSchema,
  updateWebhookConfigRequestSchema,
  webhookConfigSchema,
} from '../schemas/webhooks';

const tag = 'Webhooks';
const configIdParam = idParam('id', 'Webhook configuration id.');

const deliveryRules =
  'Deliveries: an HTTP POST of the event (schema WebhookEvent) as JSON, signed with the Standard Webhooks scheme ' +
  '(headers `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256>`; verify them with the ' +
  'standardwebhooks library of your language and the `whsec_` secret). `webhook-id` is the event id: drop ' +
  'duplicates by it (delivery is at least once). Any 2xx answer within the timeout (WEBHOOK_TIMEOUT_SECONDS, ' +
  'default 10 s) is a success; anything else (other statuses, redirects, timeouts, connection errors) is retried ' +
  'with exponential backoff (30 s, doubling, at most 1 h apart) for 24 hours, then the delivery is marked failed. ' +
  'Events of one resource are delivered in the order they happened, each after the previous one succeeded or failed. ' +
  'The URL, subscriptions and enabled flag are read at each attempt. An event is delivered when the configuration ' +
  'is enabled and subscribed to its type at the moment the event happens; events that happen while it is disabled ' +
  'are never delivered later (catch up with GET /v1/events and POST /v1/events/{id}/redeliver). Disabling it (or, ' +
  'for a type, unsubscribing) cancels deliveries that have not succeeded yet at their next attempt. ' +
  'Events are delivered in the sandbox too.';

const createConfig = defineRoute({
  method: 'post',
  path: '/v1/webhook-configs',
  operationId: 'createWebhookConfig',
  tag,
  summary: 'Create the webhook configuration',
  description:
    'One configuration per partner: a second one answers 422 `webhook_config_already_exists` (also for ' +
    'concurrent requests). `enabled` defaults to false. The response carries the signing `secret`, shown only ' +
    `here. ${deliveryRules}`,
  body: createWebhookConfigRequestSchema,
  response: {
    status: 201,
    description: 'The configuration, with its signing secret.',
    schema: createdWebhookConfigSchema,
  },
  errors: ['webhook_config_already_exists', 'webhook_url_not_allowed'],
  async handler({ body, partner, services }) {
    return createWebhookConfig(services, partner.id, body);
  },
});

const getConfig = defineRoute({
  method: 'get',
  path: '/v1/webhook-configs',
  operationId: 'getWebhookConfig',
  tag,
  summary: 'Get the webhook configuration',
  description:
    'The configuration of the partner (a single object, without the secret); 404 `not_found` when there is none yet.',
  response: { status: 200, description: 'The configuration.', schema: webhookConfigSchema },
  errors: ['not_found'],
  async handler({ partner, services }) {
    return toWebhookConfig(await findWebhookConfigOrThrow(services.prisma, partner.id));
  },
});

const updateConfig = defineRoute({
  method: 'put',
  path: '/v1/webhook-configs/{id}',
  operationId: 'updateWebhookConfig',
  tag,
  summary: 'Change the webhook configuration',
  description:
    'Changes the url, subscriptions or enabled flag; fields left out keep their value (at least one is needed). ' +
    '`enabled: false` pauses delivery without deleting the configuration. The secret does not change (see ' +
    'rotate-secret).',
  params: configIdParam,
  body: updateWebhookConfigRequestSchema,
  response: { status: 200, description: 'The updated configuration.', schema: webhookConfigSchema },
  errors: ['not_found', 'webhook_url_not_allowed'],
  async handler({ params, body, partner, services }) {
    return updateWebhookConfig(services, partner.id, params.id as string, body);
  },
});

const rotateSecret = defineRoute({
  method: 'post',
  path: '/v1/webhook-configs/{id}/rotate-secret',
  operationId: 'rotateWebhookSecret',
  tag,
  summary: 'Rotate the signing secret',
  description:
    'Replaces the signing secret and returns the new one (shown only here). For `overlap_hours` (default ' +
    `${DEFAULT_ROTATION_OVERLAP_HOURS}) every delivery carries two signatures, one per secret, so a receiver ` +
    'verifying with either accepts it: deploy the new secret, then let the old one expire. After the overlap ' +
    'only the new secret signs. Rotating again during an overlap drops the older secret at once.',
  params: configIdParam,
  body: rotateWebhookSecretRequestSchema,
  response: { status: 200, description: 'The configuration with its new secret.', schema: rotatedWebhookSecretSchema },
  errors: ['not_found'],
  async handler({ params, body, partner, services }) {
    return rotateWebhookSecret(services, partner.id, params.id as string, body.overlap_hours);
  },
});

const mockWebhook = defineRoute({
  method: 'post',
  path: '/webhooks/mock',
  operationId: 'sendMockWebhook',
  tag: 'Sandbox',
  environments: ['sandbox'],
  summary: 'Sandbox: send a mocked event',
  description:
    'Sandbox only (absent in production). Signs and POSTs a mocked payin.*, payout.* or walletTransfer.* event ' +
    "to the configured URL once (no retries, whatever the configuration's subscriptions) and answers with what the " +
    'receiver did. Needs an enabled configuration. The mocked resource is illustrative: its ids name nothing, its ' +
    'amounts are fixed and its status follows the type (`*.created` of pay-ins and payouts: awaiting_deposit; ' +
    'walletTransfer.created: pending). The mock is not recorded in GET /v1/events.',
  body: mockWebhookRequestSchema,
  response: {
    status: 200,
    description: 'The event sent and the answer of the receiver.',
    schema: mockWebhookResultSchema,
  },
  errors: ['webhook_config_missing', 'webhook_config_disabled'],
  async handler({ body, partner, services }) {
    return sendMockWebhook(services, partner.id, body.event_type as EventType);
  },
});

export const webhookRoutes = [createConfig, getConfig, updateConfig, rotateSecret, mockWebhook];
