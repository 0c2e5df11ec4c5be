// An operator's decision awaited without a deadline, as one timer a day: each that passes with no decision logs a
// reminder (with what to run), so a wait of weeks keeps showing in the workers' logs beside its search attribute.
// A wait with no timer at all is also what Temporal's time-skipping test server ends: with nothing else due, it skips
// straight to the execution timeout it gives a workflow started without one (ten years) and times the workflow
// out; a daily timer is always due first.
import { condition, log, patched } from '@temporalio/workflow';

export const OPERATOR_REMINDER = '1 day';

/**
 * Resolves once `decided()` holds, logging `reminder` with `fields` each day it does not. Workflows that waited
 * without reminders before pass `patch`: histories started before it keep their single wait.
 */
export async function waitForOperator(
  decided: () => boolean,
  reminder: string,
  fields: Record<string, unknown>,
  patch?: 'operator-wait-reminders',
): Promise<void> {
  if (patch && !patched(patch)) {
    await condition(decided);
    return;
  }
  while (!(await condition(decided, OPERATOR_REMINDER))) log.warn(reminder, fields);
}
