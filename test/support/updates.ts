// Sends a workflow update from a test. Under load the time-skipping test server sometimes answers "update <id> not
// found" for a workflow that an activity woke a moment before: it lost the update, and keeps answering so for that id.
// The update is sent again, a few times at most, under a new id unless the caller named one (a test that checks the
// id in the history); a lost update never reached the workflow, so sending it again does not apply it twice.
import { randomUUID } from 'node:crypto';
import { type WorkflowHandle, WorkflowNotFoundError } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

export async function sendUpdate<Ret, Args extends unknown[]>(
  handle: WorkflowHandle,
  update: UpdateDefinition<Ret, Args>,
  options: { args?: Args; updateId?: string } = {},
): Promise<Ret> {
  for (let attempt = 1; ; attempt += 1) {
    const updateId = options.updateId ?? randomUUID();
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
      if (attempt >= 8) throw await withWorkflowState(handle, error);
      // Five quick resends under new ids still failed in a CI rehearsal: wait past the server's workflow task timeout
      // (10 s), in case the lost update holds a workflow task the server still waits for.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
    }
  }
}

/**
 * The lost update's error with what the server says of the workflow then: the Java test server answers "update <id> not
 * found" both when it dropped an update and when it holds the run as closed, and the two need different fixes.
 */
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
