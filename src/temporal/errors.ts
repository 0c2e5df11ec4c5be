// Reading Temporal failures in the API: an update refused by a workflow's validator or handler
// arrives as WorkflowUpdateFailedError whose cause is the workflow's ApplicationFailure.
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';

/** The ApplicationFailure type a workflow update was refused with, if that is what happened. */
export function updateRefusal(error: unknown): { type: string; message: string } | null {
  if (!(error instanceof WorkflowUpdateFailedError)) return null;
  const cause = error.cause;
  if (cause instanceof ApplicationFailure && cause.type) return { type: cause.type, message: cause.message };
  return null;
}
