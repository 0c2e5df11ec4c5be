// The chain watcher's activities (workflows/chain-watcher.ts, docs/chain.md "The chain watcher"): one bounded step of
// reading a chain (reorganisation check, one block range of Transfer logs, credits of what is deep enough), and the
// settling of payout hashes accepted before they were deep enough (POST /v1/payout/confirm answered 202).
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowNotFoundError } from '@temporalio/client';
import { idFromReference } from '../src/domain/ids';
import { amountsOf } from '../src/domain/transactions';
import type { Blockchain } from '../src/domain/rails';
import {
  chainCursor,
  closePayoutChainClaim,
  creditChainDeposit,
  pendingPayoutChainClaims,
  pruneChainBlocks,
  recordScannedRange,
  rollBackChain,
  seenChainDeposits,
  storedChainBlocks,
} from '../src/persistence/chain-watcher';
import { claimRefusalOf } from '../src/providers/chain-verification';
import { findTransactionDeposit, readTransactionRow } from '../src/persistence/transactions';
import { updateRefusal } from '../src/temporal/errors';
import { chainDeepReorgs } from '../src/observability/metrics';
import { workflowIds } from '../src/temporal/workflow-ids';
import type { ActivityServices } from './services';
import type { DepositInput, DepositReceipt } from './transactions';
import { payoutDepositInput } from '../src/services/transactions/deposit-bookkeeping';

// The settlement's receiveDeposit update and its refusal of a transaction past awaiting its deposit
// (workflows/settlement.ts receiveDepositUpdate, settlementRefusals.notAwaitingDeposit), by name: the workflows import
// the activities, so the activities do not import the workflows.
export const RECEIVE_DEPOSIT_UPDATE = 'receiveDeposit';
export const NOT_AWAITING_DEPOSIT = 'NotAwaitingDeposit';

export interface ChainWatchStep {
  /** The cursor reached the node's head: the workflow waits before the next step. */
  caughtUp: boolean;
  /** The next block to read. */
  next: string;
  /** Transfers newly seen, and newly credited, in this step. */
  seen: number;
  credited: number;
  /** The block the watcher rolled back to after a reorganisation, or null. */
  rolledBackTo: string | null;
}

/** Stored hashes the reorganisation check compares with the node, newest first. */
const REORG_WALK = 64;
/** Stored hashes kept below the credited depth (a reorganisation deeper than the confirmations still rolls back). */
const KEPT_BELOW_DEEP = 128n;
const CREDITS_PER_STEP = 200;
const CLAIMS_PER_STEP = 50;

export function createChainWatcherActivities({
  prisma,
  config,
  logger,
  watchedChains,
  chainTransferVerifier,
}: ActivityServices) {
  const watchedChain = (chain: Blockchain) => {
    const watched = watchedChains.find((candidate) => candidate.chain === chain);
    if (!watched) throw ApplicationFailure.nonRetryable(`no ${chain} node is configured to watch`, 'ChainNotWatched');
    return watched;
  };

  return {
    async watchChainStep(chain: Blockchain): Promise<ChainWatchStep> {
      const watched = watchedChain(chain);
      const head = await watched.head();

      // 1. A stored hash the node no longer has at its number is a reorganisation: back to the newest block both
      // agree on (its ancestors agree too: each block names its parent's hash).
      let rolledBackTo: bigint | null = null;
      const stored = await storedChainBlocks(prisma, chain, REORG_WALK);
      if (stored.length > 0) {
        let common: bigint | null = null;
        for (const block of stored) {
          if ((await watched.blockHash(block.number)) === block.hash) {
            common = block.number;
            break;
          }
        }
        if (common !== stored[0]!.number) {
          rolledBackTo = common ?? stored[stored.length - 1]!.number - 1n;
          const { forgotten, creditedAbove } = await rollBackChain(prisma, chain, rolledBackTo);
          logger.warn({ chain, rolledBackTo: rolledBackTo.toString(), forgotten }, 'chain reorganisation: rolled back');
          if (creditedAbove.length > 0) {
            // Deeper than the confirmation count: the credit stays booked and an operator must look (the alert
            // PaymentsChainDeepReorg, docs/operations.md).
            chainDeepReorgs.inc({ chain });
            logger.error(
              { chain, deposits: creditedAbove.map((deposit) => deposit.txHash) },
              'a credited transfer’s block left the chain',
            );
          }
        }
      }

      // 2. One bounded range of Transfer logs to the service's addresses, recorded with the cursor.
      const start = config.ethereum?.watch.fromBlock ?? (config.appEnv === 'sandbox' ? 0 : null);
      let next = (await chainCursor(prisma, chain)) ?? (start === null ? head.latest : BigInt(start));
      let seen = 0;
      if (next <= head.latest) {
        const range = BigInt(config.ethereum?.watch.blockRange ?? 1000);
        const to = next + range - 1n < head.latest ? next + range - 1n : head.latest;
        const transfers = await watched.transfers(next, to);
        const lastHash = await watched.blockHash(to);
        const blocks = new Map(transfers.map((transfer) => [transfer.blockNumber, transfer.blockHash]));
        if (lastHash) blocks.set(to, lastHash);
        seen = await recordScannedRange(prisma, chain, {
          transfers,
          blocks: [...blocks].map(([number, hash]) => ({ number, hash })),
          next: to + 1n,
        });
        next = to + 1n;
      }

      // 3. Credit what is deep enough, each only while its block is still the one it was seen in.
      let credited = 0;
      for (const deposit of await seenChainDeposits(prisma, chain, head.deep, CREDITS_PER_STEP)) {
        if ((await watched.blockHash(deposit.blockNumber)) !== deposit.blockHash) continue;
        if (await creditChainDeposit(prisma, deposit.id, deposit.blockHash)) credited += 1;
      }
      if (head.deep - KEPT_BELOW_DEEP > 0n) await pruneChainBlocks(prisma, chain, head.deep - KEPT_BELOW_DEEP);
      return {
        caughtUp: next > head.latest,
        next: next.toString(),
        seen,
        credited,
        rolledBackTo: rolledBackTo?.toString() ?? null,
      };
    },

    /**
     * Payout hashes accepted before they were deep enough: each checked again on the node, the same check as
     * POST /v1/payout/confirm. Confirmed: the payout takes it as its deposit (the settlement's receiveDeposit update,
     * as the API does). Refused for good (reverted, wrong token, address or amount), or still not deep enough past its
     * bound: the claim is refused with that code, which a confirm with the hash answers from then on.
     */
    async settlePayoutChainClaims(chain: Blockchain): Promise<{ settled: number; refused: number }> {
      let settled = 0;
      let refused = 0;
      for (const claim of await pendingPayoutChainClaims(prisma, chain, CLAIMS_PER_STEP)) {
        const row = await readTransactionRow(prisma, claim.transactionId);
        if (!row || row.status !== 'awaiting_deposit') {
          // Funded meanwhile (by this hash through the API, or otherwise), cancelled or expired: nothing to settle.
          const deposit = await findTransactionDeposit(prisma, idFromReference('deposit', chain, claim.txHash));
          const outcome =
            deposit?.transactionId === claim.transactionId
              ? ({ status: 'settled' } as const)
              : ({ status: 'refused', refusal: 'payout_cannot_be_confirmed' } as const);
          await closePayoutChainClaim(prisma, claim.transactionId, outcome);
          if (outcome.status === 'settled') settled += 1;
          else refused += 1;
          continue;
        }
        const verdict = await chainTransferVerifier.verify({
          chain,
          hash: claim.txHash,
          minimum: amountsOf(row).sender,
        });
        if (verdict.state === 'confirmed') {
          const input = payoutDepositInput(row, { chain, hash: claim.txHash }, claim.txHash, null);
          try {
            await Context.current()
              .client.workflow.getHandle(workflowIds.transaction(row.id))
              .executeUpdate<DepositReceipt, [DepositInput]>(RECEIVE_DEPOSIT_UPDATE, {
                args: [input],
                updateId: `confirm-${row.id}`,
              });
          } catch (error) {
            const late = error instanceof WorkflowNotFoundError || updateRefusal(error)?.type === NOT_AWAITING_DEPOSIT;
            if (!late) throw error;
            await closePayoutChainClaim(prisma, claim.transactionId, {
              status: 'refused',
              refusal: 'payout_cannot_be_confirmed',
            });
            refused += 1;
            continue;
          }
          await closePayoutChainClaim(prisma, claim.transactionId, { status: 'settled' });
          settled += 1;
          continue;
        }
        const refusal = claimRefusalOf(verdict.state, claim.expiresAt <= new Date());
        if (refusal) {
          await closePayoutChainClaim(prisma, claim.transactionId, { status: 'refused', refusal });
          logger.info({ chain, transactionId: row.id, refusal }, 'payout tx_hash refused');
          refused += 1;
        }
      }
      return { settled, refused };
    },
  };
}
