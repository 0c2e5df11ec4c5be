// Housekeeping that keeps tables from growing without bound: purges expired idempotency keys, the
// workflow-start intents started long ago, expired rate-limit counters and events past their retention (each in
// bounded batches, src/persistence/purges.ts). One run per firing of the `maintenance` Temporal Schedule (created by
// every worker at start-up, idempotently), so operators see it, pause it and trigger it in the UI's Schedules page.
import { patched, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

const { purgeExpiredIdempotencyKeys, purgeStartedWorkflowIntents, purgeExpiredRateLimits, purgeExpiredEvents } =
  proxyActivities<Activities>({
    startToCloseTimeout: '5 minutes',
    // Bounded: a run that keeps failing gives up; the next firing tries again.
    retry: { initialInterval: '10 seconds', maximumInterval: '5 minutes', maximumAttempts: 5 },
  });

export async function maintenanceWorkflow(): Promise<void> {
  await purgeExpiredIdempotencyKeys();
  await purgeStartedWorkflowIntents();
  // Added after runs were recorded (test/histories): a run started before it replays without it.
  if (patched('purge-rate-limits')) await purgeExpiredRateLimits();
  if (patched('purge-events')) await purgeExpiredEvents();
}
