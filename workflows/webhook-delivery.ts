// Webhook delivery. One workflow per resource of a partner (id webhook-delivery-<partnerId>-<resourceId>) receives
// the ids of that resource's deliveries from the outbox relay by signal, in the order the events happened, and
// delivers them one at a time: the events of one resource keep their order while other resources are not held up.
// Each delivery is one activity whose retry policy does the waiting (exponential backoff over 24 hours); when the
// window is over the delivery is marked failed and the next one starts. The workflow completes when its queue is
// empty (a later signal-with-start begins a new run) and continues as new when its history grows.
// Redeliveries run alone in webhook-redelivery-<deliveryId>, outside the per-resource order.
import {
  ActivityFailure,
  continueAsNew,
  defineQuery,
  defineSignal,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { WEBHOOK_RETRY } from '../src/domain/webhook-retry';

export interface WebhookDeliveryInput {
  partnerId: string;
  resourceId: string;
  /** Deliveries carried over by continue-as-new. */
  queued?: string[];
  /** Deliveries one run handles before it continues as new (default 200). */
  deliveriesPerRun?: number;
  /**
   * The retry schedule configured where the relay runs (WEBHOOK_RETRY_*); default WEBHOOK_RETRY. The attempt
   * activity names its own delay from it; this is the schedule of the failures it cannot name one for (an attempt
   * lost with its worker, timed out at start-to-close), which otherwise waited the production 30 s, 1 min, 2 min...
   * in a configured environment.
   */
  retrySchedule?: { initialIntervalMs: number; maximumIntervalMs: number };
}

export interface WebhookDeliveryState {
  current: string | null;
  queued: string[];
  finished: number;
}

export const deliveriesQueuedSignal = defineSignal<[string[]]>('deliveriesQueued');
export const webhookDeliveryStateQuery = defineQuery<WebhookDeliveryState>('webhookDeliveryState');

function attemptActivity(schedule: { initialIntervalMs: number; maximumIntervalMs: number }) {
  return proxyActivities<Activities>({
    // Longer than the HTTP timeout (WEBHOOK_TIMEOUT_SECONDS, at most 30 s) plus the bookkeeping.
    startToCloseTimeout: '1 minute',
    scheduleToCloseTimeout: WEBHOOK_RETRY.windowMs,
    // The attempt activity names its own next delay (webhookRetryDelayMs, counting only attempts actually sent);
    // this schedule applies to failures it cannot name one for (a worker lost mid-attempt).
    retry: {
      initialInterval: schedule.initialIntervalMs,
      backoffCoefficient: WEBHOOK_RETRY.backoffCoefficient,
      maximumInterval: schedule.maximumIntervalMs,
    },
  }).attemptWebhookDelivery;
}

const { markWebhookDeliveryFailed } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', backoffCoefficient: 2 },
});

/** Deliveries handled by one run before it continues as new, keeping its history small. */
const DEFAULT_DELIVERIES_PER_RUN = 200;

export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<number> {
  const attemptWebhookDelivery = attemptActivity(input.retrySchedule ?? WEBHOOK_RETRY);
  const queue: string[] = [...(input.queued ?? [])];
  // A delivery signalled twice (the relay crashed between signalling and marking it dispatched) runs once;
  // across runs the activity skips deliveries that are no longer pending.
  const seen = new Set<string>(queue);
  let current: string | null = null;
  let finished = 0;

  setHandler(deliveriesQueuedSignal, (deliveryIds) => {
    for (const id of deliveryIds) {
      if (seen.has(id)) continue;
      seen.add(id);
      queue.push(id);
    }
  });
  setHandler(webhookDeliveryStateQuery, () => ({ current, queued: [...queue], finished }));

  while (queue.length > 0) {
    current = queue.shift() as string;
    try {
      await attemptWebhookDelivery(current);
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      // The retry window is over (or the attempt failed for good): give up on this one, go on with the next.
      await markWebhookDeliveryFailed(current);
    }
    current = null;
    finished += 1;
    const perRun = input.deliveriesPerRun ?? DEFAULT_DELIVERIES_PER_RUN;
    if (queue.length > 0 && (finished >= perRun || workflowInfo().continueAsNewSuggested)) {
      await continueAsNew<typeof webhookDeliveryWorkflow>({ ...input, queued: queue });
    }
  }
  return finished;
}
