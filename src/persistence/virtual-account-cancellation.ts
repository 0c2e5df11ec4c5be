// Cancelling a virtual account: under its row lock, from a status that allows it, with its event
// virtual_account.cancelled, in the caller's transaction. Shared by the virtual account's workflow
// (an account under review: the workflow decides, so a cancellation and a review decision have one
// outcome) and the API (an approved account, whose workflow has completed).
import type { DatabaseTransaction } from './database';
import { recordEvent } from './events';
import type { VirtualAccountStatus } from '../domain/virtual-accounts';
import { lockVirtualAccount, markVirtualAccountCancelled, type VirtualAccountRow } from './virtual-accounts';

/** Statuses a partner may cancel from; rejected and cancelled accounts are final. */
export const cancellableVirtualAccountStatuses: readonly VirtualAccountStatus[] = ['under_review', 'approved'];

/**
 * Cancels the account when its status is one of `from`; otherwise changes nothing. Answers the account as it
 * now is (a re-run finds it cancelled and answers it unchanged). The event carries `resourceOf(account)` (the API's
 * virtual account, src/presenters/virtual-accounts.ts).
 */
export async function cancelVirtualAccountRow(
  tx: DatabaseTransaction,
  id: string,
  from: readonly VirtualAccountStatus[],
  resourceOf: (row: VirtualAccountRow) => object,
): Promise<VirtualAccountRow | null> {
  const current = await lockVirtualAccount(tx, id);
  if (!current || !from.includes(current.status)) return current;
  const updated = await markVirtualAccountCancelled(tx, id);
  await recordEvent(tx, {
    partnerId: updated.partnerId,
    type: 'virtual_account.cancelled',
    resourceId: id,
    resourceStatus: 'cancelled',
    resource: resourceOf(updated),
  });
  return updated;
}
