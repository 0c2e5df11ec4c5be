// Sends a workflow update from a test. The time-skipping test server sometimes answers "update <id> not found" for a
// workflow that an activity woke a moment before (seen under load); the same update id again is the same update
// (the server deduplicates by id), so it is sent again, a few times at most.
import { randomUUID } from 'node:crypto';
import { type WorkflowHandle, WorkflowNotFoundError } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';

export async function sendUpdate<Ret, Args extends unknown[]>(
  handle: WorkflowHandle,
  update: UpdateDefinition<Ret, Args>,
  options: { args?: Args; updateId?: string } = {},
): Promise<Ret> {
  const updateId = options.updateId ?? randomUUID();
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await handle.executeUpdate(update as unknown as UpdateDefinition<Ret, [unknown]>, { ...options, updateId } as never);
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError) || !/^update .* not found/.test(error.message) || attempt >= 5)
        throw error;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  }
}
