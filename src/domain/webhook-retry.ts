// The retry schedule of one webhook delivery: 30 s, 1 min, 2 min ... at most 1 h apart, for 24 h (about 30 attempts).
// The delivery workflow's retry policy and the attempt activity (which counts only attempts actually sent, see
// activities/webhooks.ts) both read it from here.
/** Why a delivery exists: an event, or a partner's redelivery of one. */
export const webhookDeliveryTriggers = ['event', 'redelivery'] as const;
export type WebhookDeliveryTrigger = (typeof webhookDeliveryTriggers)[number];

export const WEBHOOK_RETRY = {
  initialIntervalMs: 30_000,
  backoffCoefficient: 2,
  maximumIntervalMs: 3_600_000,
  windowMs: 24 * 3_600_000,
} as const;

/**
 * Wait before the attempt after attempt number `attempt` (1 for the first). `schedule` comes from
 * WEBHOOK_RETRY_INITIAL_SECONDS and WEBHOOK_RETRY_MAX_INTERVAL_SECONDS (defaults: the values above).
 */
export function webhookRetryDelayMs(
  attempt: number,
  schedule: { initialIntervalMs: number; maximumIntervalMs: number } = WEBHOOK_RETRY,
): number {
  return Math.min(
    schedule.initialIntervalMs * WEBHOOK_RETRY.backoffCoefficient ** (attempt - 1),
    schedule.maximumIntervalMs,
  );
}

/** A webhook delivery's statuses (the schema's enum is cross-checked against them, src/persistence/enums.ts). */
export const deliveryStatuses = ['pending', 'succeeded', 'failed', 'cancelled'] as const;
export type DeliveryStatus = (typeof deliveryStatuses)[number];
