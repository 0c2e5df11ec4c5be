// The reader of the ISO 20022 bank's reports (`bank-reports-iso20022`, started idempotently by every worker at boot
// when a bank is configured, src/temporal/bank-reports.ts): step after step it reads a bounded page of the bank's
// camt.054 notifications after its cursor and hands credits and returns to the service (activities/bank-reports.ts),
// waits a poll when it has caught up, and continues as new with its cursor after a bounded number of steps. The
// cursor lives in the workflow's input: a reader started from 0 again reads everything again, which the deposit and
// return paths record once.
import { ActivityFailure, continueAsNew, log, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';

export interface BankReportsInput {
  bank: 'iso20022';
  /** The sequence of the last report read. */
  after: number;
  /** Seconds between steps once caught up. */
  pollSeconds: number;
}

/** Steps per run before continuing as new. */
export const BANK_REPORTS_STEPS_PER_RUN = 200;

const { readBankReports } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  // Bounded: a bank that stays unreachable fails the step; the reader waits a poll and tries again.
  retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

export async function bankReportsWorkflow(input: BankReportsInput): Promise<never> {
  let after = input.after;
  for (let step = 0; step < BANK_REPORTS_STEPS_PER_RUN; step += 1) {
    let more = false;
    try {
      const read = await readBankReports(after);
      after = read.last;
      more = read.more;
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      log.warn('bank reports step failed; trying again after a poll', { bank: input.bank });
    }
    if (!more) await sleep(input.pollSeconds * 1000);
  }
  return continueAsNew<typeof bankReportsWorkflow>({ ...input, after });
}
