// Reading Temporal failures in the API: an update refused by a workflow's validator or handler
// arrives as WorkflowUpdateFailedError whose cause is the workflow's ApplicationFailure; an engine
// that cannot be reached (or did not answer within the deadline) is an outage, answered with 503.
import {
  isGrpcServiceError,
  ServiceError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';

/** The ApplicationFailure type a workflow update was refused with, if that is what happened. */
export function updateRefusal(error: unknown): { type: string; message: string } | null {
  if (!(error instanceof WorkflowUpdateFailedError)) return null;
  const cause = error.cause;
  if (cause instanceof ApplicationFailure && cause.type) return { type: cause.type, message: cause.message };
  return null;
}

// gRPC status codes that mean "not now": UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED, RESOURCE_EXHAUSTED, ABORTED.
const unavailableGrpcCodes = new Set([14, 4, 1, 8, 10]);

/** True when a Temporal call failed because the engine (or its worker) could not answer in time. */
export function isTemporalUnavailable(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 6; depth += 1) {
    if (current instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
    if (isGrpcServiceError(current) && unavailableGrpcCodes.has(current.code)) return true;
    // The workflow's last task failed (its worker died mid-task, or is restarting): it cannot take an update
    // until the task is retried. Seen in the worker-kill chaos run, where it answered 500.
    if (isGrpcServiceError(current) && current.code === 9 && /workflow task in failed state/i.test(current.details))
      return true;
    if (current instanceof ServiceError && /deadline|unavailable|connect/i.test(current.message)) return true;
    if (current instanceof Error && /Failed to connect|TransportError|tcp connect error/i.test(current.message))
      return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
