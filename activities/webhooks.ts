// Activities of webhook delivery: one HTTP attempt of a delivery, recorded, and the final failure. Idempotent:
// a delivery that is no longer pending is never sent again.
import { Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { newId } from '../src/domain/ids';
import { webhookHeaders } from '../src/domain/webhook-signature';
import type { EventType } from '../src/events';
import { isSuccessfulDelivery } from '../src/providers/webhook-sender';
import { toWebhookEvent } from '../src/presenters/webhooks';
import type { DeliveryStatus } from '../src/schemas/webhooks';
import type { ActivityServices } from './services';

/** Error type of a failed attempt; the workflow's retry policy retries it. */
export const WEBHOOK_ATTEMPT_FAILED = 'WebhookAttemptFailed';

export function createWebhookActivities({ prisma, webhookSender, logger }: ActivityServices) {
  return {
    /**
     * Sends one attempt of a delivery to the configuration as it is now and records it. Returns the delivery's
     * final status; throws (to be retried) when the receiver did not answer 2xx.
     */
    async attemptWebhookDelivery(deliveryId: string): Promise<DeliveryStatus> {
      const delivery = await prisma.webhookDelivery.findUnique({
        where: { id: deliveryId },
        include: { event: true, config: true },
      });
      if (!delivery) throw ApplicationFailure.nonRetryable(`delivery ${deliveryId} does not exist`, 'DeliveryNotFound');
      if (delivery.status !== 'pending') return delivery.status as DeliveryStatus; // sent already: a duplicate signal
      const { config, event } = delivery;
      const cancelReason = !config.enabled
        ? 'cancelled: the webhook configuration is disabled'
        : delivery.trigger === 'event' && !config.subscriptions.includes(event.eventType as EventType)
          ? `cancelled: the configuration is no longer subscribed to ${event.eventType}`
          : null;
      if (cancelReason) {
        await prisma.webhookDelivery.updateMany({
          where: { id: deliveryId, status: 'pending' },
          data: { status: 'cancelled', lastError: cancelReason, completedAt: new Date() },
        });
        return 'cancelled';
      }

      const attempt = Context.current().info.attempt;
      const body = JSON.stringify(toWebhookEvent(event));
      const result = await webhookSender.send({
        url: config.url,
        headers: webhookHeaders(event.id, body, config.secret),
        body,
      });
      const succeeded = isSuccessfulDelivery(result);
      const recorded = {
        url: config.url,
        statusCode: result.statusCode,
        latencyMs: result.latencyMs,
        error: result.error,
      };
      await prisma.$transaction([
        prisma.webhookDeliveryAttempt.upsert({
          where: { deliveryId_attempt: { deliveryId, attempt } },
          create: { id: newId(), deliveryId, attempt, ...recorded },
          update: recorded,
        }),
        prisma.webhookDelivery.updateMany({
          where: { id: deliveryId, status: 'pending' },
          data: {
            attemptCount: attempt,
            lastStatusCode: result.statusCode,
            lastError: result.error,
            ...(succeeded ? { status: 'succeeded', completedAt: new Date() } : {}),
          },
        }),
      ]);
      if (!succeeded) {
        logger.info({ deliveryId, eventId: event.id, attempt, error: result.error }, 'webhook attempt failed');
        // Benign: a receiver that fails is expected, not a fault of the worker (logged at DEBUG, no failure metrics).
        throw ApplicationFailure.create({
          message: `attempt ${attempt}: ${result.error ?? 'failed'}`,
          type: WEBHOOK_ATTEMPT_FAILED,
          category: ApplicationFailureCategory.BENIGN,
        });
      }
      return 'succeeded';
    },

    /** After the retry window: the delivery failed (unless it finished some other way meanwhile). */
    async markWebhookDeliveryFailed(deliveryId: string): Promise<void> {
      await prisma.webhookDelivery.updateMany({
        where: { id: deliveryId, status: 'pending' },
        data: { status: 'failed', completedAt: new Date() },
      });
    },
  };
}
