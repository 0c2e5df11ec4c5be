// Cancelling a virtual account: under its row lock, from a status that allows it, with its event
// virtual_account.cancelled, in the caller's transaction. Shared by the virtual account's workflow
// (an account under review: the workflow decides, so a cancellation and a review decision have one
// outcome) and the API (an approved account, whose workflow has completed).
import type { Prisma } from './database';
import { recordEvent } from '../events';
import { toVirtualAccount, VirtualAccountRow, withWallet } from '../presenters/virtual-accounts';
import type { VirtualAccountStatus } from '../schemas/virtual-accounts';

/** Statuses a partner may cancel from; rejected and cancelled accounts are final. */
export const cancellableVirtualAccountStatuses: readonly VirtualAccountStatus[] = ['under_review', 'approved'];

/**
 * Cancels the account when its status is one of `from`; otherwise changes nothing. Answers the account as it
 * now is (a re-run finds it cancelled and answers it unchanged).
 */
export async function cancelVirtualAccountRow(
  tx: Prisma.TransactionClient,
  id: string,
  from: readonly VirtualAccountStatus[],
): Promise<VirtualAccountRow | null> {
  await tx.$queryRaw`SELECT id FROM virtual_accounts WHERE id = ${id}::uuid FOR UPDATE`;
  const current = await tx.virtualAccount.findUnique({ where: { id }, include: withWallet });
  if (!current || !from.includes(current.status as VirtualAccountStatus)) return current;
  const updated = await tx.virtualAccount.update({ where: { id }, data: { status: 'cancelled' }, include: withWallet });
  await recordEvent(tx, {
    partnerId: updated.partnerId,
    type: 'virtual_account.cancelled',
    resourceId: id,
    resourceStatus: 'cancelled',
    resource: toVirtualAccount(updated),
  });
  return updated;
}
