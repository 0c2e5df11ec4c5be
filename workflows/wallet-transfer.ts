// One workflow per wallet transfer (id: wallet-transfer-<id>), started when the transfer is created
// (its amount and fee already held from the source wallet):
//   pending -> processing -> send on chain (idempotency key <id>:send) -> completed (delivered)
//                                                                      -> failed (held amount returned)
// The network refusing (`rejected`) fails the transfer. A send whose retries run out is looked up on
// chain under its key (provider-outcome.ts): sent -> completed; never sent -> failed; unknown -> the
// transfer stays `processing` with its hold (search attribute ResourceStatus `outcome_unknown`) until an
// operator's `recheckSend` update asks again: the hold is released only when the send did not happen.
// Each database step is keyed by the transfer and the step, so re-running it changes nothing.
import {
  ActivityFailure,
  ApplicationFailure,
  defineQuery,
  defineUpdate,
  log,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { waitForOperator } from './operator-wait';
import { askUntilKnown } from './provider-outcome';
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

/** An operator asks the chain again about a send whose outcome is unknown (the Temporal UI, or `temporal workflow update`). */
export const recheckSendUpdate = defineUpdate<'rechecking', []>('recheckSend');
/** True while the send's outcome is unknown and the workflow waits for an operator's recheck. */
export const sendOutcomeUnknownQuery = defineQuery<boolean>('sendOutcomeUnknown');

type SendOutcome = Awaited<ReturnType<Activities['sendWalletTransfer']>> | { status: 'unavailable' };

export async function walletTransferWorkflow(input: WalletTransferWorkflowInput): Promise<WalletTransferStatus> {
  const publish = (status: WalletTransferStatus) =>
    upsertSearchAttributes([
      { key: PartnerIdAttribute, value: input.partnerId },
      { key: CustomerIdAttribute, value: input.customerId },
      { key: ResourceIdAttribute, value: input.transferId },
      { key: ResourceStatusAttribute, value: status },
    ]);

  // Handlers first: an operator's query may come before the first activity ends.
  let waitingForOperator = false;
  let rechecks = 0;
  setHandler(sendOutcomeUnknownQuery, () => waitingForOperator);
  setHandler(
    recheckSendUpdate,
    () => {
      waitingForOperator = false;
      rechecks += 1;
      return 'rechecking' as const;
    },
    {
      validator: () => {
        if (!waitingForOperator) {
          throw ApplicationFailure.nonRetryable('The send is not waiting for a recheck.', 'NotAwaitingRecheck');
        }
      },
    },
  );

  let status = await database.startWalletTransfer(input.transferId);
  publish(status);
  if (status !== 'processing') return status; // ended before (a re-run)

  const publishUnknown = () => upsertSearchAttributes([{ key: ResourceStatusAttribute, value: 'outcome_unknown' }]);

  /** What the chain knows of a send whose answer never came; waits for an operator while it cannot tell. */
  async function lookedUpSend(): Promise<SendOutcome> {
    for (;;) {
      const found = await askUntilKnown(
        () => database.lookUpWalletTransferSend(input.transferId, rechecks),
        publishUnknown,
      );
      if (found.state === 'executed') return found.outcome;
      if (found.state === 'not_executed') return { status: 'unavailable' };
      log.warn('the chain cannot say whether the transfer was sent; waiting for an operator recheck', {
        transferId: input.transferId,
      });
      waitingForOperator = true;
      await waitForOperator(
        () => !waitingForOperator,
        'a wallet transfer whose send the chain cannot confirm awaits an operator recheck',
        { transferId: input.transferId },
        'operator-wait-reminders',
      );
    }
  }

  let outcome: SendOutcome;
  try {
    outcome = await chain.sendWalletTransfer(input.transferId);
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    outcome = patched('provider-outcome-lookup') ? await lookedUpSend() : { status: 'unavailable' };
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
