// Every Temporal call made while serving a request goes through withTemporalDeadline: it is bounded by the
// request's deadline (and TEMPORAL_CALL_TIMEOUT_SECONDS), and an engine that cannot answer in time becomes
// 503 service_unavailable with Retry-After instead of a hang or a 500.
import type { Client } from '@temporalio/client';
import { DomainError } from '../domain/errors';
import { remainingMs } from '../request-context';
import { isTemporalUnavailable } from './errors';

export interface TemporalCallServices {
  temporal: Client;
  config: { temporal: { callTimeoutMs: number } };
}

export async function withTemporalDeadline<T>(services: TemporalCallServices, call: () => Promise<T>): Promise<T> {
  const budget = Math.min(services.config.temporal.callTimeoutMs, remainingMs(services.config.temporal.callTimeoutMs));
  if (budget <= 0) throw temporalUnavailable();
  try {
    return await services.temporal.connection.withDeadline(Date.now() + budget, call);
  } catch (error) {
    if (isTemporalUnavailable(error)) throw temporalUnavailable(error);
    throw error;
  }
}

export function temporalUnavailable(cause?: unknown): DomainError {
  return DomainError.unavailable(
    'The workflow engine did not answer in time. Retry shortly (with the same Idempotency-Key).',
    { cause },
  );
}
