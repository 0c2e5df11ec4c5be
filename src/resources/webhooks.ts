// Webhook configurations, events and deliveries as the API shows them (the event shape is also the body of every
// webhook POST), and the operations their routes share.
import type { Event, WebhookConfig, WebhookDelivery, WebhookDeliveryAttempt } from '@prisma/client';
import { isUniqueViolation, type Db } from '../db';
import { isUuid, newId } from '../domain/ids';
import { generateWebhookSecret, standardWebhookSecret, webhookHeaders } from '../domain/webhook-signature';
import { webhookUrlProblem } from '../domain/webhook-destinations';
import { mockResourceFor } from '../domain/mock-events';
import { customerFromEvent } from './customers';
import { EventType, resourceTypeOf, wakeOutboxRelay } from '../events';
import { ApiError } from '../http/errors';
import { isSuccessfulDelivery } from '../providers/webhook-sender';
import { SecretBox, secretBoxOf } from '../secrets';
import type { PrismaClient } from '../db';
import type {
  CreateWebhookConfigRequest,
  DeliveryStatus,
  MockWebhookResult,
  RotatedWebhookSecret,
  UpdateWebhookConfigRequest,
  WebhookConfigResource,
  WebhookDeliveryResource,
  WebhookEvent,
} from '../schemas/webhooks';
import type { ApiServices } from '../services';

export function toWebhookConfig(row: WebhookConfig): WebhookConfigResource {
  return {
    id: row.id,
    partner_id: row.partnerId,
    url: row.url,
    subscriptions: row.subscriptions as EventType[],
    enabled: row.enabled,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** The SPEC 6 payload: the body of a webhook POST and an item of GET /v1/events. */
export function toWebhookEvent(row: Event, config: Parameters<typeof customerFromEvent>[0]): WebhookEvent {
  const resource = row.resource as Record<string, unknown>;
  return {
    event: row.event,
    event_id: row.id,
    event_type: row.eventType as EventType,
    event_resource_id: row.resourceId,
    event_resource_status: row.resourceStatus,
    // Customers are stored without their verification link (a secret); it is put back here.
    event_resource: row.event === 'customer' ? customerFromEvent(config, row.resourceId, resource) : resource,
    event_created_at: row.createdAt.toISOString(),
  };
}

export type DeliveryRow = WebhookDelivery & { attempts: WebhookDeliveryAttempt[] };
export const withAttempts = { attempts: { orderBy: { attempt: 'asc' } } } as const;

export function toWebhookDelivery(row: DeliveryRow): WebhookDeliveryResource {
  return {
    id: row.id,
    event_id: row.eventId,
    trigger: row.trigger as 'event' | 'redelivery',
    status: row.status as DeliveryStatus,
    attempts: row.attempts.map((attempt) => ({
      attempt: attempt.attempt,
      url: attempt.url,
      status_code: attempt.statusCode,
      latency_ms: attempt.latencyMs,
      error: attempt.error,
      created_at: attempt.createdAt.toISOString(),
    })),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    completed_at: row.completedAt?.toISOString() ?? null,
  };
}

// ---- signing secrets: encrypted at rest, rotated with an overlap ----

/** Hours a replaced secret keeps signing deliveries after a rotation, unless the request says otherwise. */
export const DEFAULT_ROTATION_OVERLAP_HOURS = 24;

/** Binds a sealed secret to its configuration: a ciphertext copied to another row does not open. */
const secretContext = (configId: string) => `webhook_configs.secret:${configId}`;

type SecretColumns = Pick<
  WebhookConfig,
  'id' | 'secretCiphertext' | 'legacySecret' | 'previousSecretCiphertext' | 'previousSecretExpiresAt'
>;

/** The secrets deliveries are signed with at `now`: the current one, then the previous one during its overlap. */
export function signingSecretsOf(box: SecretBox, row: SecretColumns, now: Date = new Date()): string[] {
  const current = row.secretCiphertext
    ? box.open(row.secretCiphertext, secretContext(row.id))
    : standardWebhookSecret(row.legacySecret ?? '');
  const overlapping =
    row.previousSecretCiphertext && row.previousSecretExpiresAt && row.previousSecretExpiresAt > now
      ? [box.open(row.previousSecretCiphertext, secretContext(row.id))]
      : [];
  return [current, ...overlapping];
}

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
  return services.prisma.$transaction(async (tx) => {
    const current = await findWebhookConfigOrThrow(tx, partnerId, id);
    await tx.$queryRaw`SELECT id FROM webhook_configs WHERE id = ${current.id}::uuid FOR UPDATE`;
    const locked = await tx.webhookConfig.findUniqueOrThrow({ where: { id: current.id } });
    const [currentSecret] = signingSecretsOf(box, locked);
    const secret = generateWebhookSecret();
    const expiresAt = overlapHours > 0 ? new Date(Date.now() + overlapHours * 3_600_000) : null;
    const row = await tx.webhookConfig.update({
      where: { id: locked.id },
      data: {
        secretCiphertext: box.seal(secret, secretContext(locked.id)),
        legacySecret: null,
        previousSecretCiphertext: expiresAt ? box.seal(currentSecret as string, secretContext(locked.id)) : null,
        previousSecretExpiresAt: expiresAt,
      },
    });
    return { ...toWebhookConfig(row), secret, previous_secret_expires_at: expiresAt?.toISOString() ?? null };
  });
}

/**
 * Encrypts the plaintext secrets of configurations made before encryption at rest (the worker runs it at
 * start-up; a no-op once done). Returns how many it encrypted.
 */
export async function encryptLegacyWebhookSecrets(prisma: PrismaClient, box: SecretBox): Promise<number> {
  const legacy = await prisma.webhookConfig.findMany({ where: { legacySecret: { not: null } } });
  for (const row of legacy) {
    const secret = standardWebhookSecret(row.legacySecret as string);
    await prisma.webhookConfig.updateMany({
      where: { id: row.id, legacySecret: row.legacySecret },
      data: { secretCiphertext: box.seal(secret, secretContext(row.id)), legacySecret: null, updatedAt: row.updatedAt },
    });
  }
  return legacy.length;
}

function refuseUnusableUrl(url: string | undefined, services: ApiServices): void {
  if (url === undefined) return;
  const problem = webhookUrlProblem(url, { appEnv: services.config.appEnv, ...services.config.webhooks });
  if (problem) throw ApiError.invalidParam('url', problem);
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
    const row = await services.prisma.webhookConfig.create({
      data: {
        id,
        partnerId,
        url: request.url,
        subscriptions: request.subscriptions,
        enabled: request.enabled,
        secretCiphertext: secretBoxOf(services.config).seal(secret, secretContext(id)),
      },
    });
    return { ...toWebhookConfig(row), secret };
  } catch (error) {
    // The unique partner_id decides between concurrent creates.
    if (isUniqueViolation(error)) {
      throw new ApiError(
        'webhook_config_already_exists',
        'This partner already has a webhook configuration; change it with PUT /v1/webhook-configs/{id}.',
      );
    }
    throw error;
  }
}

export async function findWebhookConfigOrThrow(db: Db, partnerId: string, id?: string): Promise<WebhookConfig> {
  const row =
    id === undefined
      ? await db.webhookConfig.findUnique({ where: { partnerId } })
      : isUuid(id)
        ? await db.webhookConfig.findFirst({ where: { id, partnerId } })
        : null;
  if (!row) {
    throw id === undefined
      ? new ApiError('not_found', 'No webhook configuration yet; create one with POST /v1/webhook-configs.')
      : ApiError.notFound('webhook configuration', id);
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
  const row = await services.prisma.webhookConfig.update({
    where: { id: current.id },
    data: {
      ...(request.url !== undefined ? { url: request.url } : {}),
      ...(request.subscriptions !== undefined ? { subscriptions: request.subscriptions } : {}),
      ...(request.enabled !== undefined ? { enabled: request.enabled } : {}),
    },
  });
  return toWebhookConfig(row);
}

/** The configuration explicit sends (redeliveries, mocks) go to: it must exist and be enabled. */
async function requireEnabledConfig(db: Db, partnerId: string): Promise<WebhookConfig> {
  const config = await db.webhookConfig.findUnique({ where: { partnerId } });
  if (!config) {
    throw new ApiError('webhook_config_missing', 'No webhook configuration; create one with POST /v1/webhook-configs.');
  }
  if (!config.enabled) {
    throw new ApiError(
      'webhook_config_disabled',
      'The webhook configuration is disabled; enable it with PUT /v1/webhook-configs/{id} first.',
    );
  }
  return config;
}

export async function findEventOrThrow(db: Db, partnerId: string, id: string): Promise<Event> {
  const row = isUuid(id) ? await db.event.findFirst({ where: { id, partnerId } }) : null;
  if (!row) throw ApiError.notFound('event', id);
  return row;
}

/** Queues one more delivery of an event; the outbox relay sends it at once, outside the per-resource order. */
export async function redeliverEvent(services: ApiServices, event: Event): Promise<WebhookDeliveryResource> {
  return services.prisma.$transaction(async (tx) => {
    const config = await requireEnabledConfig(tx, event.partnerId);
    const row = await tx.webhookDelivery.create({
      data: {
        id: newId(),
        partnerId: event.partnerId,
        eventId: event.id,
        configId: config.id,
        trigger: 'redelivery',
        status: 'pending',
      },
      include: withAttempts,
    });
    await wakeOutboxRelay(tx);
    return toWebhookDelivery(row);
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
  const mocked = mockResourceFor(eventType, now);
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
