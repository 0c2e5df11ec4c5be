// The Temporal Schedule that refreshes the sanctions lists (workflows/screening.ts screeningListRefreshWorkflow,
// docs/screening.md), created by every worker at start-up when lists are configured, like the maintenance
// schedule: an operator's pause or edit is kept.
import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';

export const SCREENING_LISTS_SCHEDULE_ID = 'screening-lists';

/** Every `refreshMinutes`, and once at once: a new deployment screens against loaded lists as soon as it can. */
export async function ensureScreeningListsSchedule(
  client: Client,
  taskQueue: string,
  refreshMinutes: number,
): Promise<void> {
  try {
    await client.schedule.create({
      scheduleId: SCREENING_LISTS_SCHEDULE_ID,
      spec: { intervals: [{ every: `${refreshMinutes} minutes` }] },
      action: {
        type: 'startWorkflow',
        workflowType: 'screeningListRefreshWorkflow',
        workflowId: 'screening-lists',
        taskQueue,
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
      state: {
        note: 'Loads the configured sanctions lists; a changed version re-screens everyone. Safe to pause or trigger.',
        triggerImmediately: true,
      },
    });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
  }
}

/**
 * What a worker does at start-up: the Schedule when lists are configured (true), nothing without them (the sandbox's
 * deny list, or production, which refuses to start first).
 */
export async function ensureScreeningScheduleAtStart(
  client: Client,
  taskQueue: string,
  screening: { refreshMinutes: number } | null | undefined,
): Promise<boolean> {
  if (!screening) return false;
  await ensureScreeningListsSchedule(client, taskQueue, screening.refreshMinutes);
  return true;
}
