// Activities of the virtual account workflow: each decision changes the account and records its
// event in one transaction, under a row lock; a retry after success changes nothing.
import { ApplicationFailure } from '@temporalio/activity';
import { withDatabaseTransaction, type DatabaseTransaction } from '../src/persistence/database';
import { recordEvent } from '../src/persistence/events';
import type { SenderCurrency } from '../src/providers/deposit-accounts';
import { cancelVirtualAccountRow } from '../src/services/virtual-account-cancellation';
import {
  allocateDepositDetails,
  lockVirtualAccountWithCustomer,
  markVirtualAccountApproved,
  markVirtualAccountRejected,
  recordReviewReminder,
  storeDepositReferences,
  VirtualAccountRow,
} from '../src/persistence/virtual-accounts';
import { beneficiaryNameOf, toVirtualAccount } from '../src/presenters/virtual-accounts';
import type { VirtualAccountStatus } from '../src/schemas/virtual-accounts';
import type { ActivityServices } from './services';

async function lockVirtualAccount(tx: DatabaseTransaction, id: string) {
  const row = await lockVirtualAccountWithCustomer(tx, id);
  if (!row) throw ApplicationFailure.nonRetryable(`virtual account ${id} does not exist`, 'VirtualAccountNotFound');
  return row;
}

async function announce(tx: DatabaseTransaction, row: VirtualAccountRow): Promise<void> {
  await recordEvent(tx, {
    partnerId: row.partnerId,
    type: row.status === 'approved' ? 'virtual_account.approved' : 'virtual_account.rejected',
    resourceId: row.id,
    resourceStatus: row.status,
    resource: toVirtualAccount(row),
  });
}

export function createVirtualAccountActivities({ prisma, logger, depositAccountIssuer }: ActivityServices) {
  return {
    /** Issues the deposit details and approves (event virtual_account.approved). */
    async approveVirtualAccount(id: string): Promise<VirtualAccountStatus> {
      return withDatabaseTransaction(prisma, async (tx) => {
        const current = await lockVirtualAccount(tx, id);
        if (current.status !== 'under_review') return current.status; // a retry
        const issued = await allocateDepositDetails(tx, depositAccountIssuer, {
          virtualAccountId: id,
          senderCurrency: current.senderCurrency as SenderCurrency,
          beneficiaryName: beneficiaryNameOf(current.customer),
        });
        await storeDepositReferences(tx, id, issued);
        const updated = await markVirtualAccountApproved(tx, id, issued.depositAddresses, new Date());
        await announce(tx, updated);
        return 'approved';
      });
    },

    /** Rejects (event virtual_account.rejected); the reason is kept for operators. */
    async rejectVirtualAccount(id: string, reason: string | null): Promise<VirtualAccountStatus> {
      return withDatabaseTransaction(prisma, async (tx) => {
        const current = await lockVirtualAccount(tx, id);
        if (current.status !== 'under_review') return current.status; // a retry
        const updated = await markVirtualAccountRejected(tx, id, reason, new Date());
        await announce(tx, updated);
        return 'rejected';
      });
    },

    /** The partner cancelled the account under review (event virtual_account.cancelled); a retry changes nothing. */
    async cancelVirtualAccount(id: string): Promise<VirtualAccountStatus> {
      const row = await withDatabaseTransaction(prisma, (tx) => cancelVirtualAccountRow(tx, id, ['under_review']));
      if (!row) throw ApplicationFailure.nonRetryable(`virtual account ${id} does not exist`, 'VirtualAccountNotFound');
      return row.status;
    },

    /** Escalates a review nobody has decided: a warning for alerting, and the count on the account. */
    async remindVirtualAccountReview(id: string, reminder: number, waitingHours: number): Promise<void> {
      const row = await recordReviewReminder(prisma, id, reminder);
      logger.warn(
        {
          virtual_account_id: id,
          partner_id: row.partnerId,
          reminder,
          waiting_hours: waitingHours,
          signal: `temporal workflow signal --workflow-id virtual-account-${id} --name virtualAccountDecision --input '{"outcome":"approved"}'`,
        },
        'virtual account awaits an approval decision',
      );
    },
  };
}
