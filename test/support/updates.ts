// Sends a workflow update from a test. Under load the time-skipping test server sometimes answers "update <id> not
// found". Read in its sources (sdk-java's TestWorkflowMutableStateImpl): its first UpdateWorkflowExecution waits at
// most 10 s of wall time, then the client asks again or polls; a poll finds only updates in flight or accepted, and a
// request for a run the server holds as closed answers "update <id> not found" too. So the update may have been
// applied (accepted, completed, and the workflow went on and closed) while the client was told it was not found.
// On that answer the history decides: an update of ours completed there is answered from its recorded outcome; else
// the update never reached the workflow and is sent again (a few times at most, under a new id unless the caller
// named one: a test that checks the id in the history), which cannot apply it twice. One cause is found: the server
// had timed the workflow out after skipping ten years (docs/development.md "Time skipping"), which operator waits'
// reminder timers now prevent; the failure message names the workflow's status, should another show.
import { randomUUID } from 'node:crypto';
import { type WorkflowHandle, WorkflowNotFoundError } from '@temporalio/client';
import { defaultPayloadConverter, type UpdateDefinition } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

export async function sendUpdate<Ret, Args extends unknown[]>(
  handle: WorkflowHandle,
  update: UpdateDefinition<Ret, Args>,
  options: { args?: Args; updateId?: string } = {},
): Promise<Ret> {
  const sent: string[] = [];
  for (let attempt = 1; ; attempt += 1) {
    const updateId = options.updateId ?? randomUUID();
    sent.push(updateId);
    try {
      return await handle.executeUpdate(
        update as unknown as UpdateDefinition<Ret, [unknown]>,
        {
          ...options,
          updateId,
        } as never,
      );
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError) || !/^update .* not found/.test(error.message)) throw error;
      const recorded = await recordedOutcome(handle, sent);
      if (recorded) {
        if ('failure' in recorded) throw new Error(`update ${update.name} failed: ${recorded.failure}`);
        return recorded.value as Ret;
      }
      if (attempt >= 8) throw await withWorkflowState(handle, error);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
    }
  }
}

/** The outcome the history records for one of the updates sent, or null when none of them completed there. */
export async function recordedOutcome(
  handle: WorkflowHandle,
  updateIds: string[],
): Promise<{ value: unknown } | { failure: string } | null> {
  const history = await handle.fetchHistory();
  for (const event of history.events ?? []) {
    const completed = event.workflowExecutionUpdateCompletedEventAttributes;
    if (!completed?.meta?.updateId || !updateIds.includes(completed.meta.updateId)) continue;
    const { outcome } = completed;
    if (outcome?.failure) return { failure: outcome.failure.message ?? 'failed' };
    const payload = outcome?.success?.payloads?.[0];
    return { value: payload ? defaultPayloadConverter.fromPayload(payload) : undefined };
  }
  return null;
}

/** The lost update's error with what the server says of the workflow then (its status, run and last events). */
async function withWorkflowState(handle: WorkflowHandle, error: Error): Promise<Error> {
  try {
    const description = await handle.describe();
    const history = await handle.fetchHistory();
    const lastEvents = (history.events ?? [])
      .slice(-8)
      .map((event) => temporal.api.enums.v1.EventType[event.eventType ?? 0]);
    error.message += ` (workflow ${description.status.name}, run ${description.runId}, last events: ${lastEvents.join(', ')})`;
  } catch (describeError) {
    error.message += ` (the workflow could not be described: ${(describeError as Error).message})`;
  }
  return error;
}
