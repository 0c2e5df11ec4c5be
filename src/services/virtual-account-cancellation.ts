// Cancelling a virtual account: under its row lock, from a status that allows it, with its event
// virtual_account.cancelled, in the caller's transaction. Shared by the virtual account's workflow
// (an account under review: the workflow decides, so a cancellation and a review decision have one
// outcome) and the API (an approved account, whose workflow has completed).
import type { DatabaseTransaction } from '../persistence/database';
import { recordEvent } from '../persistence/events';
import type { VirtualAccountStatus } from '../domain/virtual-accounts';
import {
  lockVirtualAccount,
  markVirtualAccountCancelled,
  type VirtualAccountRow,
} from '../persistence/virtual-accounts';
import { toVirtualAccount } from '../presenters/virtual-accounts';

/** Statuses a partner may cancel from; rejected and cancelled accounts are final. */
export const cancellableVirtualAccountStatuses: readonly VirtualAccountStatus[] = ['under_review', 'approved'];

/**
 * Cancels the account when its status is one of `from`; otherwise changes nothing. Answers the account as it
 * now is (a re-run finds it cancelled and answers it unchanged).
 */
export async function cancelVirtualAccountRow(
  tx: DatabaseTransaction,
  id: string,
  from: readonly VirtualAccountStatus[],
): Promise<VirtualAccountRow | null> {
  const current = await lockVirtualAccount(tx, id);
  if (!current || !from.includes(current.status)) return current;
  const updated = await markVirtualAccountCancelled(tx, id);
  await recordEvent(tx, {
    partnerId: updated.partnerId,
    type: 'virtual_account.cancelled',
    resourceId: id,
    resourceStatus: 'cancelled',
    resource: toVirtualAccount(updated),
  });
  return updated;
}
