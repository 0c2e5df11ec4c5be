// The retry schedule of one webhook delivery: 30 s, 1 min, 2 min ... at most 1 h apart, for 24 h (about 30 attempts).
// The delivery workflow's retry policy and the attempt activity (which counts only attempts actually sent, see
// activities/webhooks.ts) both read it from here.
export const WEBHOOK_RETRY = {
  initialIntervalMs: 30_000,
  backoffCoefficient: 2,
  maximumIntervalMs: 3_600_000,
  windowMs: 24 * 3_600_000,
} as const;

/** Wait before the attempt after attempt number `attempt` (1 for the first). */
export function webhookRetryDelayMs(attempt: number): number {
  return Math.min(
    WEBHOOK_RETRY.initialIntervalMs * WEBHOOK_RETRY.backoffCoefficient ** (attempt - 1),
    WEBHOOK_RETRY.maximumIntervalMs,
  );
}
