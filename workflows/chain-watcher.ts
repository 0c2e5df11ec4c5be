// The chain watcher of one chain (`chain-watcher-<chain>`, started idempotently by every worker at boot,
// src/temporal/chain-watchers.ts): step after step it reads the chain's Transfer logs to the service's addresses in
// bounded block ranges, rolls back on a reorganisation, credits what is deep enough, and settles or refuses payout
// hashes accepted before they were deep enough (activities/chain-watcher.ts, docs/chain.md "The chain watcher"). It
// continues as new after a bounded number of steps, so its history stays small.
import { ActivityFailure, continueAsNew, log, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { Blockchain } from '../src/domain/rails';

export interface ChainWatcherInput {
  chain: Blockchain;
  /** Seconds between steps once the watcher has caught up with the head. */
  pollSeconds: number;
}

/** Steps per run before continuing as new. */
export const CHAIN_WATCHER_STEPS_PER_RUN = 200;

const { watchChainStep, settlePayoutChainClaims } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  // Bounded: a node that stays unreachable fails the step; the watcher waits a poll and tries again.
  retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

export async function chainWatcherWorkflow(input: ChainWatcherInput): Promise<never> {
  for (let step = 0; step < CHAIN_WATCHER_STEPS_PER_RUN; step += 1) {
    let caughtUp = true;
    try {
      caughtUp = (await watchChainStep(input.chain)).caughtUp;
      await settlePayoutChainClaims(input.chain);
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      log.warn('chain watcher step failed; trying again after a poll', { chain: input.chain });
    }
    if (caughtUp) await sleep(input.pollSeconds * 1000);
  }
  return continueAsNew<typeof chainWatcherWorkflow>(input);
}
