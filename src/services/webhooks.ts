// Webhook commands: configuration create/update (URL rules), the 404 lookups, redelivery through the
// outbox, and the sandbox's one-off mock send.
import { ownedOrNotFound } from './owned';
import { isUniqueViolation, ownedBy, type Database, type DatabaseClient } from '../persistence/database';
import { EventRow, findEvent, listPartnerEvents } from '../persistence/events';
import { paginate, type PageRequest } from '../domain/pages';
import {
  findWebhookConfig,
  findWebhookConfigOfPartner,
  insertWebhookConfig,
  listEventDeliveries as listDeliveryRows,
  listWebhookConfigsWithLegacySecret,
  lockWebhookConfig,
  queueWebhookRedelivery,
  replaceWebhookSecret,
  sealLegacyWebhookSecret,
  updateWebhookConfigSettings,
  WebhookConfigRow,
} from '../persistence/webhooks';
import { isUuid, newId } from '../domain/ids';
import { SecretBox, secretBoxOf } from '../domain/secret-box';
import {
  generateWebhookSecret,
  signingSecretsOf,
  standardWebhookSecret,
  webhookHeaders,
  webhookSecretContext,
} from '../domain/webhook-signature';
import { webhookUrlProblem } from '../webhooks/destinations';
import { mockResourceFor } from '../domain/mock-events';
import { mockTransactionFor } from '../presenters/transactions';
import { EventType, resourceTypeOf } from '../events';
import { DomainError } from '../domain/errors';
import { isSuccessfulDelivery } from '../providers/webhook-sender';
import { toWebhookConfig, toWebhookDelivery } from '../presenters/webhooks';
import type {
  CreateWebhookConfigRequest,
  MockWebhookResult,
  RotatedWebhookSecret,
  UpdateWebhookConfigRequest,
  WebhookConfigResource,
  WebhookDeliveryResource,
  WebhookEvent,
} from '../schemas/webhooks';
import type { ApiServices } from '../app-services';
import { writeRequest } from '../temporal/write-then-start';

function refuseUnusableUrl(url: string | undefined, services: ApiServices): void {
  if (url === undefined) return;
  const problem = webhookUrlProblem(url, { appEnv: services.config.appEnv, ...services.config.webhooks });
  if (problem) throw new DomainError('webhook_url_not_allowed', `url ${problem}.`);
}

export async function createWebhookConfig(
  services: ApiServices,
  partnerId: string,
  request: CreateWebhookConfigRequest,
): Promise<WebhookConfigResource & { secret: string }> {
  refuseUnusableUrl(request.url, services);
  const id = newId();
  const secret = generateWebhookSecret();
  try {
    // The secret is shown once: the stored response (replayed on a retry) commits with the configuration.
    return await writeRequest(services.prisma, async (tx) => {
      const row = await insertWebhookConfig(tx, {
        id,
        partnerId,
        url: request.url,
        subscriptions: request.subscriptions,
        enabled: request.enabled,
        secretCiphertext: secretBoxOf(services.config).seal(secret, webhookSecretContext(id)),
      });
      return { ...toWebhookConfig(row), secret };
    });
  } catch (error) {
    // The unique partner_id decides between concurrent creates.
    if (isUniqueViolation(error)) {
      throw new DomainError(
        'webhook_config_already_exists',
        'This partner already has a webhook configuration; change it with PUT /v1/webhook-configs/{id}.',
      );
    }
    throw error;
  }
}

export async function findWebhookConfigOrThrow(
  db: Database,
  partnerId: string,
  id?: string,
): Promise<WebhookConfigRow> {
  const row =
    id === undefined
      ? await findWebhookConfigOfPartner(db, partnerId)
      : isUuid(id)
        ? ownedBy(await findWebhookConfig(db, id), partnerId)
        : null;
  if (!row) {
    throw id === undefined
      ? new DomainError('not_found', 'No webhook configuration yet; create one with POST /v1/webhook-configs.')
      : DomainError.notFound('webhook configuration', id);
  }
  return row;
}

export async function updateWebhookConfig(
  services: ApiServices,
  partnerId: string,
  id: string,
  request: UpdateWebhookConfigRequest,
): Promise<WebhookConfigResource> {
  const current = await findWebhookConfigOrThrow(services.prisma, partnerId, id);
  refuseUnusableUrl(request.url, services);
  return writeRequest(services.prisma, async (tx) => {
    const row = await updateWebhookConfigSettings(tx, current.id, request);
    return toWebhookConfig(row);
  });
}

/** Hours a replaced secret keeps signing deliveries after a rotation, unless the request says otherwise. */
export const DEFAULT_ROTATION_OVERLAP_HOURS = 24;

/**
 * Replaces the signing secret. The old one keeps signing (next to the new one) for `overlapHours`, so receivers
 * can switch without losing a delivery; a rotation during an overlap ends the older overlap at once.
 */
export async function rotateWebhookSecret(
  services: ApiServices,
  partnerId: string,
  id: string,
  overlapHours: number,
): Promise<RotatedWebhookSecret> {
  const box = secretBoxOf(services.config);
  // The new secret is shown once: the stored response (replayed on a retry) commits with it.
  return writeRequest(services.prisma, async (tx) => {
    const found = await findWebhookConfigOrThrow(tx, partnerId, id);
    const locked = await lockWebhookConfig(tx, found.id);
    const [currentSecret] = signingSecretsOf(box, locked);
    const secret = generateWebhookSecret();
    const expiresAt = overlapHours > 0 ? new Date(Date.now() + overlapHours * 3_600_000) : null;
    const row = await replaceWebhookSecret(tx, locked.id, {
      secretCiphertext: box.seal(secret, webhookSecretContext(locked.id)),
      previousSecretCiphertext: expiresAt ? box.seal(currentSecret as string, webhookSecretContext(locked.id)) : null,
      previousSecretExpiresAt: expiresAt,
    });
    return { ...toWebhookConfig(row), secret, previous_secret_expires_at: expiresAt?.toISOString() ?? null };
  });
}

/**
 * Encrypts the plaintext secrets of configurations saved before encryption at rest (the worker runs it at
 * start-up; a no-op once done). Returns how many it encrypted.
 */
export async function encryptLegacyWebhookSecrets(prisma: DatabaseClient, box: SecretBox): Promise<number> {
  const legacy = await listWebhookConfigsWithLegacySecret(prisma);
  for (const row of legacy) {
    const secret = standardWebhookSecret(row.legacySecret as string);
    await sealLegacyWebhookSecret(prisma, row, box.seal(secret, webhookSecretContext(row.id)));
  }
  return legacy.length;
}

/** The configuration explicit sends (redeliveries, mocks) go to: it must exist and be enabled. */
async function requireEnabledConfig(db: Database, partnerId: string): Promise<WebhookConfigRow> {
  const config = await findWebhookConfigOfPartner(db, partnerId);
  if (!config) {
    throw new DomainError(
      'webhook_config_missing',
      'No webhook configuration; create one with POST /v1/webhook-configs.',
    );
  }
  if (!config.enabled) {
    throw new DomainError(
      'webhook_config_disabled',
      'The webhook configuration is disabled; enable it with PUT /v1/webhook-configs/{id} first.',
    );
  }
  return config;
}

export async function findEventOrThrow(db: DatabaseClient, partnerId: string, id: string): Promise<EventRow> {
  return ownedOrNotFound('event', findEvent, db, partnerId, id);
}

/** Queues one more delivery of an event; the outbox relay sends it at once, outside the per-resource order. */
export async function redeliverEvent(services: ApiServices, event: EventRow): Promise<WebhookDeliveryResource> {
  return writeRequest(services.prisma, async (tx) => {
    const config = await requireEnabledConfig(tx, event.partnerId);
    return toWebhookDelivery(await queueWebhookRedelivery(tx, event, config.id));
  });
}

/** Sandbox: signs and sends one mocked event to the configured URL, once, and reports the answer. */
export async function sendMockWebhook(
  services: ApiServices,
  partnerId: string,
  eventType: EventType,
): Promise<MockWebhookResult> {
  const config = await requireEnabledConfig(services.prisma, partnerId);
  const now = new Date();
  // Pay-ins and payouts are transactions: their mocks have exactly the shape of the real resource.
  const group = eventType.split('.')[0];
  const mocked =
    group === 'payin' || group === 'payout'
      ? mockTransactionFor(eventType, now, newId)
      : mockResourceFor(eventType, now);
  const event: WebhookEvent = {
    event: resourceTypeOf(eventType),
    event_id: newId(),
    event_type: eventType,
    event_resource_id: mocked.id,
    event_resource_status: mocked.status,
    event_resource: mocked,
    event_created_at: now.toISOString(),
  };
  const body = JSON.stringify(event);
  const result = await services.webhookSender.send({
    url: config.url,
    headers: webhookHeaders(event.event_id, body, signingSecretsOf(secretBoxOf(services.config), config)),
    body,
  });
  return {
    event,
    delivery: {
      url: config.url,
      succeeded: isSuccessfulDelivery(result),
      status_code: result.statusCode,
      latency_ms: result.latencyMs,
      error: result.error,
    },
  };
}

/** A page of the partner's events. */
export function listEvents(
  db: DatabaseClient,
  partnerId: string,
  page: PageRequest,
  filter: Parameters<typeof listPartnerEvents>[2],
) {
  return paginate(page, (keyset) => listPartnerEvents(db, partnerId, filter, keyset));
}

/** A page of the deliveries of one of the partner's events. */
export async function listEventDeliveries(db: DatabaseClient, partnerId: string, eventId: string, page: PageRequest) {
  const event = await findEventOrThrow(db, partnerId, eventId);
  return paginate(page, (keyset) => listDeliveryRows(db, event.id, keyset));
}
