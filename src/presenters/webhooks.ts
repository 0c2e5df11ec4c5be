// Webhook configurations, events and deliveries as the API shows them. The event shape is also the
// body of every webhook POST (the delivery activity sends it).
import type { EventRow } from '../persistence/events';
import type { DeliveryRow, WebhookConfigRow } from '../persistence/webhooks';
import type { LinkConfig } from '../domain/verification-links';
import type { EventType } from '../events';
import { customerFromEvent } from './customers';
import type { DeliveryStatus, WebhookConfigResource, WebhookDeliveryResource, WebhookEvent } from '../schemas/webhooks';

export function toWebhookConfig(row: WebhookConfigRow): WebhookConfigResource {
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
export function toWebhookEvent(row: EventRow, config: LinkConfig): WebhookEvent {
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

export function toWebhookDelivery(row: DeliveryRow): WebhookDeliveryResource {
  return {
    id: row.id,
    event_id: row.eventId,
    trigger: row.trigger as 'event' | 'redelivery',
    status: row.status,
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
