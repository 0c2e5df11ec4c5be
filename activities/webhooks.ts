// Activities of webhook delivery: one HTTP attempt of a delivery, recorded, and the final failure. Idempotent:
// a delivery that is no longer pending is never sent again.
// Fairness: a worker process has WEBHOOK_PARTNER_CONCURRENCY attempts in flight per partner at most. An attempt
// over that limit gives its activity slot back at once and is retried 1-2 s later without counting as an attempt,
// so a partner whose endpoint hangs holds at most that many of the worker's slots (each for at most
// WEBHOOK_TIMEOUT_SECONDS) and every other partner's deliveries keep the rest.
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { secretBoxOf } from '../src/domain/secret-box';
import { webhookRetryDelayMs } from '../src/domain/webhook-retry';
import { signingSecretsOf, webhookHeaders } from '../src/domain/webhook-signature';
import type { EventType } from '../src/events';
import {
  cancelPendingDelivery,
  failPendingDelivery,
  findDeliveryToAttempt,
  recordDeliveryAttempt,
} from '../src/persistence/webhooks';
import { isSuccessfulDelivery } from '../src/providers/webhook-sender';
import { observeWebhookAttempt, observeWebhookDeliveryEnded } from '../src/observability/observe';
import { inKeptTrace } from '../src/observability/trace-context';
import { toWebhookEvent } from '../src/presenters/webhooks';
import type { DeliveryStatus } from '../src/schemas/webhooks';
import type { ActivityServices } from './services';

/** Error type of a failed attempt; the workflow's retry policy retries it. */
export const WEBHOOK_ATTEMPT_FAILED = 'WebhookAttemptFailed';
/** Error type of an attempt put off because the partner has its limit of attempts in flight. */
export const WEBHOOK_PARTNER_BUSY = 'WebhookPartnerBusy';

export function createWebhookActivities(services: ActivityServices) {
  const { prisma, webhookSender, logger } = services;
  const inFlight = new Map<string, number>();
  const limit = services.config.webhooks.partnerConcurrency;
  return {
    /**
     * Sends one attempt of a delivery to the configuration as it is now and records it. Returns the delivery's
     * final status; throws (to be retried) when the receiver did not answer 2xx.
     */
    async attemptWebhookDelivery(deliveryId: string): Promise<DeliveryStatus> {
      const delivery = await findDeliveryToAttempt(prisma, deliveryId);
      if (!delivery) throw ApplicationFailure.nonRetryable(`delivery ${deliveryId} does not exist`, 'DeliveryNotFound');
      if (delivery.status !== 'pending') return delivery.status; // sent already: a duplicate signal
      const { config, event } = delivery;
      const cancelReason = !config.enabled
        ? 'cancelled: the webhook configuration is disabled'
        : delivery.trigger === 'event' && !config.subscriptions.includes(event.eventType as EventType)
          ? `cancelled: the configuration is no longer subscribed to ${event.eventType}`
          : null;
      if (cancelReason) {
        await cancelPendingDelivery(prisma, deliveryId, cancelReason);
        observeWebhookDeliveryEnded('cancelled');
        return 'cancelled';
      }

      const busy = inFlight.get(delivery.partnerId) ?? 0;
      if (busy >= limit) {
        throw ApplicationFailure.create({
          message: `partner ${delivery.partnerId} has ${busy} webhook attempts in flight`,
          type: WEBHOOK_PARTNER_BUSY,
          category: ApplicationFailureCategory.BENIGN,
          nextRetryDelay: 1000 + Math.floor(Math.random() * 1000),
        });
      }
      // Attempts are counted in the database: put-off tries do not count (Temporal's attempt number does).
      const attempt = delivery.attemptCount + 1;
      const body = JSON.stringify(toWebhookEvent(event, services.config));
      inFlight.set(delivery.partnerId, busy + 1);
      let result;
      try {
        // In the trace of the change that queued the delivery: the partner's request leads to its webhook.
        result = await inKeptTrace(
          delivery.traceParent,
          `WebhookDelivery:${event.eventType}`,
          { 'webhook.delivery_id': deliveryId, 'webhook.event_type': event.eventType, 'webhook.attempt': attempt },
          () =>
            webhookSender.send({
              url: config.url,
              headers: webhookHeaders(event.id, body, signingSecretsOf(secretBoxOf(services.config), config)),
              body,
            }),
        );
      } finally {
        const left = (inFlight.get(delivery.partnerId) ?? 1) - 1;
        if (left > 0) inFlight.set(delivery.partnerId, left);
        else inFlight.delete(delivery.partnerId);
      }
      const succeeded = isSuccessfulDelivery(result);
      const recorded = {
        url: config.url,
        statusCode: result.statusCode,
        latencyMs: result.latencyMs,
        error: result.error,
      };
      await recordDeliveryAttempt(prisma, deliveryId, attempt, recorded, succeeded);
      observeWebhookAttempt(succeeded);
      if (!succeeded) {
        logger.info({ deliveryId, eventId: event.id, attempt, error: result.error }, 'webhook attempt failed');
        // Benign: a receiver that fails is expected, not a fault of the worker (logged at DEBUG, no failure metrics).
        throw ApplicationFailure.create({
          message: `attempt ${attempt}: ${result.error ?? 'failed'}`,
          type: WEBHOOK_ATTEMPT_FAILED,
          category: ApplicationFailureCategory.BENIGN,
          nextRetryDelay: webhookRetryDelayMs(attempt, services.config.webhooks.retry),
        });
      }
      return 'succeeded';
    },

    /** After the retry window: the delivery failed (unless it finished some other way meanwhile). */
    async markWebhookDeliveryFailed(deliveryId: string): Promise<void> {
      await failPendingDelivery(prisma, deliveryId);
      observeWebhookDeliveryEnded('failed');
    },
  };
}
