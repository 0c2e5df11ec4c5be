// One workflow per wallet transfer (id: wallet-transfer-<id>), started when the transfer is created
// (its amount and fee already held from the source wallet):
//   pending -> processing -> send on chain (idempotency key <id>:send) -> completed (delivered)
//                                                                      -> failed (held amount returned)
// The network refusing (`rejected`) or staying unavailable until the bounded retries run out fails the
// transfer. Each database step is keyed by the transfer and the step, so re-running it changes nothing.
import { ActivityFailure, proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { WalletTransferStatus } from '../src/domain/wallet-transfers';
import { boundedActivityOptions } from './retry-policies';
import {
  CustomerIdAttribute,
  PartnerIdAttribute,
  ResourceIdAttribute,
  ResourceStatusAttribute,
} from '../src/temporal/search-attributes';

export interface WalletTransferWorkflowInput {
  transferId: string;
  partnerId: string;
  customerId: string;
}

/** The chain: 6 attempts over about 30 s, then the transfer fails (the held money returns). */
const chain = proxyActivities<Activities>({
  ...boundedActivityOptions,
  startToCloseTimeout: '1 minute',
  retry: { ...boundedActivityOptions.retry, maximumAttempts: 6 },
});
const database = proxyActivities<Activities>(boundedActivityOptions);

export async function walletTransferWorkflow(input: WalletTransferWorkflowInput): Promise<WalletTransferStatus> {
  const publish = (status: WalletTransferStatus) =>
    upsertSearchAttributes([
      { key: PartnerIdAttribute, value: input.partnerId },
      { key: CustomerIdAttribute, value: input.customerId },
      { key: ResourceIdAttribute, value: input.transferId },
      { key: ResourceStatusAttribute, value: status },
    ]);

  let status = await database.startWalletTransfer(input.transferId);
  publish(status);
  if (status !== 'processing') return status; // ended before (a re-run)

  let outcome: Awaited<ReturnType<Activities['sendWalletTransfer']>> | { status: 'unavailable' };
  try {
    outcome = await chain.sendWalletTransfer(input.transferId);
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    outcome = { status: 'unavailable' };
  }
  status =
    outcome.status === 'sent'
      ? await database.completeWalletTransfer(input.transferId, outcome.txHash)
      : await database.failWalletTransfer(
          input.transferId,
          outcome.status === 'rejected' ? 'network_rejected' : 'network_unavailable',
        );
  publish(status);
  return status;
}
