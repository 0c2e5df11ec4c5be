// The activity options every workflow uses: each retry policy bounded, domain errors never retried.
// (Deterministic module: workflows import it.)
import type { ActivityOptions } from '@temporalio/workflow';
import { RESOURCE_NOT_FOUND } from '../src/temporal/failure-types';

/**
 * Database writes and provider calls: 10 attempts over about 6 minutes, then the activity fails and the
 * workflow decides (or an operator sees the failure); never retried forever.
 */
export const boundedActivityOptions: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    maximumInterval: '1 minute',
    backoffCoefficient: 2,
    maximumAttempts: 10,
    nonRetryableErrorTypes: [RESOURCE_NOT_FOUND],
  },
};
