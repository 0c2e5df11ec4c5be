// Activities of the virtual account workflow: each decision changes the account and records its
// event in one transaction, under a row lock; a retry after success changes nothing.
import { ApplicationFailure } from '@temporalio/activity';
import type { Prisma } from '../src/persistence/database';
import { recordEvent } from '../src/events';
import type { SenderCurrency } from '../src/providers/deposit-accounts';
import { allocateDepositDetails, storeDepositReferences } from '../src/persistence/virtual-account-deposits';
import { cancelVirtualAccountRow } from '../src/persistence/virtual-account-cancellation';
import { beneficiaryNameOf, toVirtualAccount, VirtualAccountRow, withWallet } from '../src/presenters/virtual-accounts';
import type { VirtualAccountStatus } from '../src/schemas/virtual-accounts';
import type { ActivityServices } from './services';

async function lockVirtualAccount(tx: Prisma.TransactionClient, id: string) {
  await tx.$queryRaw`SELECT id FROM virtual_accounts WHERE id = ${id}::uuid FOR UPDATE`;
  const row = await tx.virtualAccount.findUnique({ where: { id }, include: { ...withWallet, customer: true } });
  if (!row) throw ApplicationFailure.nonRetryable(`virtual account ${id} does not exist`, 'VirtualAccountNotFound');
  return row;
}

async function announce(tx: Prisma.TransactionClient, row: VirtualAccountRow): Promise<void> {
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
      return prisma.$transaction(async (tx) => {
        const current = await lockVirtualAccount(tx, id);
        if (current.status !== 'under_review') return current.status as VirtualAccountStatus; // a retry
        const issued = await allocateDepositDetails(tx, depositAccountIssuer, {
          virtualAccountId: id,
          senderCurrency: current.senderCurrency as SenderCurrency,
          beneficiaryName: beneficiaryNameOf(current.customer),
        });
        await storeDepositReferences(tx, id, issued);
        const updated = await tx.virtualAccount.update({
          where: { id },
          data: {
            status: 'approved',
            depositAddresses: issued.depositAddresses as Prisma.InputJsonObject,
            decidedAt: new Date(),
          },
          include: withWallet,
        });
        await announce(tx, updated);
        return 'approved';
      });
    },

    /** Rejects (event virtual_account.rejected); the reason is kept for operators. */
    async rejectVirtualAccount(id: string, reason: string | null): Promise<VirtualAccountStatus> {
      return prisma.$transaction(async (tx) => {
        const current = await lockVirtualAccount(tx, id);
        if (current.status !== 'under_review') return current.status as VirtualAccountStatus; // a retry
        const updated = await tx.virtualAccount.update({
          where: { id },
          data: { status: 'rejected', rejectionReason: reason, decidedAt: new Date() },
          include: withWallet,
        });
        await announce(tx, updated);
        return 'rejected';
      });
    },

    /** The partner cancelled the account under review (event virtual_account.cancelled); a retry changes nothing. */
    async cancelVirtualAccount(id: string): Promise<VirtualAccountStatus> {
      const row = await prisma.$transaction((tx) => cancelVirtualAccountRow(tx, id, ['under_review']));
      if (!row) throw ApplicationFailure.nonRetryable(`virtual account ${id} does not exist`, 'VirtualAccountNotFound');
      return row.status as VirtualAccountStatus;
    },

    /** Escalates a review nobody has decided: a warning for alerting, and the count on the account. */
    async remindVirtualAccountReview(id: string, reminder: number, waitingHours: number): Promise<void> {
      const row = await prisma.virtualAccount.update({
        where: { id },
        data: { reviewReminders: reminder },
        select: { partnerId: true },
      });
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
