// One long-running workflow (id `maintenance`) that keeps tables from growing without bound: every
// hour it purges expired idempotency keys. The worker starts it at start-up (an existing run is kept).
import { continueAsNew, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';

export const MAINTENANCE_INTERVAL = '1 hour';
/** Runs per workflow execution before continuing as new, so its history stays small. */
const ROUNDS_PER_RUN = 24;

const { purgeExpiredIdempotencyKeys } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '10 seconds', maximumInterval: '10 minutes' },
});

export async function maintenanceWorkflow(): Promise<void> {
  for (let round = 0; round < ROUNDS_PER_RUN; round += 1) {
    await purgeExpiredIdempotencyKeys();
    await sleep(MAINTENANCE_INTERVAL);
  }
  await continueAsNew<typeof maintenanceWorkflow>();
}
