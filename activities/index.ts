// All activities, grouped by what they touch; the worker registers this object.
import { createChainWatcherActivities } from './chain-watcher';
import { createCustomerActivities } from './customers';
import { createMaintenanceActivities } from './maintenance';
import { createQuoteActivities } from './quotes';
import { createReconciliationActivities } from './reconciliation';
import type { ActivityServices } from './services';
import { ApplicationFailure } from '@temporalio/common';
import { InvalidTransitionError } from '../src/domain/transactions';
import { isMissingRow } from '../src/persistence/database';
import { RESOURCE_NOT_FOUND } from '../src/temporal/failure-types';
import { createTransactionActivities } from './transactions';
import { createWebhookActivities } from './webhooks';
import { createVirtualAccountActivities } from './virtual-accounts';
import { createWalletTransferActivities } from './wallet-transfers';
import { createPayoutReturnActivities } from './payout-returns';
import { createBankReportActivities } from './bank-reports';
import { createScreeningActivities } from './screening';

export type { ActivityServices };

/**
 * A row that does not exist (isMissingRow: Prisma's P2025 or Kysely's NoResultError) fails the activity for good
 * instead of being retried: retrying cannot make it appear. So does a status change the state machine refuses.
 */
export function missingRowsAreFinal<T extends Record<string, (...args: never[]) => Promise<unknown>>>(
  activities: T,
): T {
  return Object.fromEntries(
    Object.entries(activities).map(([name, activity]) => [
      name,
      async (...args: never[]) => {
        try {
          return await activity(...args);
        } catch (error) {
          if (isMissingRow(error)) {
            throw ApplicationFailure.nonRetryable(`${name}: ${(error as Error).message}`, RESOURCE_NOT_FOUND);
          }
          // A use case's status change the state machine refuses: a bug, which retrying cannot fix.
          if (error instanceof InvalidTransitionError) throw ApplicationFailure.nonRetryable(error.message, error.name);
          throw error;
        }
      },
    ]),
  ) as T;
}

export function createActivities(services: ActivityServices) {
  return missingRowsAreFinal({
    ...createCustomerActivities(services),
    ...createWebhookActivities(services),
    ...createQuoteActivities(services),
    ...createVirtualAccountActivities(services),
    ...createMaintenanceActivities(services),
    ...createTransactionActivities(services),
    ...createWalletTransferActivities(services),
    ...createReconciliationActivities(services),
    ...createPayoutReturnActivities(services),
    ...createChainWatcherActivities(services),
    ...createBankReportActivities(services),
    ...createScreeningActivities(services),
  });
}

export type Activities = ReturnType<typeof createActivities>;
