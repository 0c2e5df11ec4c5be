// Which Temporal failures the API answers with 503 (retry later) rather than 500.
import { ServiceError } from '@temporalio/client';
import { isTemporalUnavailable } from '../src/temporal/errors';

function grpcError(code: number, details: string): Error {
  return Object.assign(new Error(`${code} ${details}`), { code, details, metadata: {} });
}

it('treats an update refused because the workflow task failed (a worker killed mid-task) as unavailable', () => {
  const refused = new ServiceError('Workflow Update failed', {
    cause: grpcError(9, 'Unable to perform workflow execution update due to Workflow Task in failed state.'),
  });
  expect(isTemporalUnavailable(refused)).toBe(true);
});

it('treats deadlines and unreachable servers as unavailable, other refusals not', () => {
  expect(isTemporalUnavailable(grpcError(4, 'deadline exceeded'))).toBe(true);
  expect(isTemporalUnavailable(grpcError(14, 'connection refused'))).toBe(true);
  expect(isTemporalUnavailable(grpcError(9, 'Workflow execution already completed'))).toBe(false);
  expect(isTemporalUnavailable(grpcError(5, 'workflow not found'))).toBe(false);
});
