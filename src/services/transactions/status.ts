// A transaction's status change with its event (the full transaction as it now is), in the caller's database
// transaction, under the row's lock: the one way the API's use cases and the workflows' activities move a transaction.
import {
  canTransition,
  eventGroupOf,
  InvalidTransitionError,
  type FailureReason,
  type SandboxSimulation,
  type TransactionStatus,
} from '../../domain/transactions';
import type { DatabaseTransaction } from '../../persistence/database';
import { recordEvent } from '../../persistence/events';
import { type TransactionRow, transactionStatusChange } from '../../persistence/transactions';
import { toTransaction } from '../../presenters/transactions';

/** What a caller adds to a status change in the same database transaction (the activities: their metrics). */
export type StatusObserver = (tx: DatabaseTransaction, row: TransactionRow) => Promise<void>;

/**
 * Moves the locked `row` to `to` (with the given columns), writes the change and its event as one statement, and
 * answers the row as it now is. Throws InvalidTransitionError for a change the state machine does not allow.
 */
export async function changeTransactionStatus(
  tx: DatabaseTransaction,
  row: TransactionRow,
  to: TransactionStatus,
  data: { failureReason?: FailureReason | null; sandboxSimulation?: SandboxSimulation | null } = {},
): Promise<TransactionRow> {
  if (!canTransition(row.status, to)) throw new InvalidTransitionError(row.id, row.status, to);
  // The row is locked, so it is current: write the change and show the row with it, as Prisma's update would (its
  // @updatedAt is set here too).
  const changes = Object.fromEntries(Object.entries(data).filter(([, value]) => value !== undefined));
  const updated: TransactionRow = { ...row, ...changes, status: to, updatedAt: new Date() };
  await recordEvent(
    tx,
    {
      partnerId: row.partnerId,
      type: `${eventGroupOf(row.type)}.${to as Exclude<TransactionStatus, 'awaiting_deposit'>}`,
      resourceId: row.id,
      resourceStatus: to,
      resource: toTransaction(updated),
    },
    transactionStatusChange(updated),
  );
  return updated;
}
