// Cancelling a transaction awaiting its deposit: the settlement workflow's update decides, so a cancel racing a
// deposit or the deadline has one outcome.
import { WorkflowNotFoundError } from '@temporalio/client';
import { eventGroupOf } from '../../domain/transactions';
import { DomainError } from '../../domain/errors';
import type { TransactionRow } from '../../persistence/transactions';
import type { TransactionResource } from '../../schemas/transactions';
import type { ApiServices } from '../../app-services';
import { updateRefusal } from '../../temporal/errors';
import { workflowIds } from '../../temporal/workflow-ids';
import { callWorkflow } from '../../temporal/write-then-start';
import { cancelTransactionUpdate, settlementRefusals } from '../../../workflows/settlement';
import { findTransactionOrThrow } from './find';

/** By the type's event group: payouts refuse with payout_cannot_be_cancelled, pay-ins and fiat to fiat with payin_cannot_be_cancelled. */
function cannotBeCancelled(row: TransactionRow, status: string): DomainError {
  return new DomainError(
    eventGroupOf(row.type) === 'payout' ? 'payout_cannot_be_cancelled' : 'payin_cannot_be_cancelled',
    `Transaction ${row.id} is ${status}; only a transaction awaiting its deposit can be cancelled.`,
  );
}

/** PUT /v1/transactions/{id} {"status": "cancelled"}: only in awaiting_deposit, decided by the workflow. */
export async function cancelTransaction(
  services: ApiServices,
  partnerId: string,
  transactionId: string,
): Promise<TransactionResource> {
  const row = await findTransactionOrThrow(services.prisma, partnerId, transactionId);
  if (row.status !== 'awaiting_deposit') throw cannotBeCancelled(row, row.status);
  try {
    return await callWorkflow(services, workflowIds.transaction(row.id), (handle) =>
      handle.executeUpdate(cancelTransactionUpdate),
    );
  } catch (error) {
    // A deposit or the deadline came first (or the workflow has completed since): the table says which.
    const refused =
      error instanceof WorkflowNotFoundError || updateRefusal(error)?.type === settlementRefusals.notAwaitingDeposit;
    if (!refused) throw error;
    const current = await findTransactionOrThrow(services.prisma, partnerId, transactionId);
    throw cannotBeCancelled(row, current.status === 'awaiting_deposit' ? 'past its deposit deadline' : current.status);
  }
}
