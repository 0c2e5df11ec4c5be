// TEMPORARY (issue-12 branch): the lead's issue-11 work replaces this file with the real one (same name and
// signature), bounded by the request's deadline. Every Temporal call made while serving a request goes through
// withTemporalDeadline, and an engine that cannot answer in time becomes 503 service_unavailable.
import type { Client } from '@temporalio/client';
import { isGrpcServiceError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { ApiError } from '../http/errors';

/** How long one Temporal call made from HTTP may take. */
const CALL_TIMEOUT_MS = 10_000;

export interface TemporalCallServices {
  temporal: Client;
}

// gRPC status codes that mean "not now": UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED, RESOURCE_EXHAUSTED, ABORTED.
const unavailableGrpcCodes = new Set([14, 4, 1, 8, 10]);

function isTemporalUnavailable(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 6; depth += 1) {
    if (current instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
    if (isGrpcServiceError(current) && unavailableGrpcCodes.has(current.code)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

export async function withTemporalDeadline<T>(services: TemporalCallServices, call: () => Promise<T>): Promise<T> {
  try {
    return await services.temporal.connection.withDeadline(Date.now() + CALL_TIMEOUT_MS, call);
  } catch (error) {
    if (isTemporalUnavailable(error)) throw temporalUnavailable(error);
    throw error;
  }
}

export function temporalUnavailable(cause?: unknown): ApiError {
  return ApiError.unavailable('The workflow engine did not answer in time. Retry shortly (with the same Idempotency-Key).', {
    cause,
  });
}
