// The daily reconciliation's Temporal Schedule (workflows/reconciliation.ts, docs/reconciliation.md), created by every
// worker at start-up like the maintenance schedule: an operator's pause or edit is kept.
import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';

export const RECONCILIATION_SCHEDULE_ID = 'reconciliation';

/** Every day at 02:00 UTC, after the day's settlements; a run still going when the next is due skips it. */
export async function ensureReconciliationSchedule(client: Client, taskQueue: string): Promise<void> {
  try {
    await client.schedule.create({
      scheduleId: RECONCILIATION_SCHEDULE_ID,
      spec: { calendars: [{ hour: 2, minute: 0 }] },
      action: {
        type: 'startWorkflow',
        workflowType: 'reconciliationWorkflow',
        workflowId: 'reconciliation',
        taskQueue,
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' },
      state: { note: 'Proves the ledger, provider operations and transactions agree. Safe to pause or trigger.' },
    });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
  }
}
