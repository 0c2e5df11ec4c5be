// The bank-reports workflow's step (workflows/bank-reports.ts): one bounded page of the bank's reports after the
// workflow's cursor; each camt.054 movement handed to the service's deposit or return path (BankReportIntake, both
// idempotent by the bank's entry reference). pain.002s are read by the payouts themselves (Iso20022FiatRails).
// Every credit is kept with its payer's account (bank_credits: a refund goes back to it by pain.001) before it is
// handed on; unmatched and refused movements are kept for operators (bank_unmatched_entries, `npm run bank:unmatched`)
// and do not stop the reading.
import { ApplicationFailure } from '@temporalio/common';
import { recordBankCredit, recordUnmatchedBankEntry } from '../src/persistence/bank-credits';
import type { Entry } from '../src/providers/iso20022/messages';
import { accountText, ISO20022_PROVIDER, movementsOf, unmatchedEntryOf } from '../src/providers/iso20022/reports';
import type { ActivityServices } from './services';

/** Reports per step: a page the bank serves in one answer. */
export const BANK_REPORTS_PER_STEP = 100;

export interface BankReportsStep {
  /** The sequence of the last report read: the next step reads after it. */
  last: number;
  /** The page was full: more may be waiting, so the workflow reads again without a pause. */
  more: boolean;
  recorded: number;
  unmatched: number;
  refused: number;
}

export function createBankReportActivities({ bankReports, bankIntake, logger, prisma }: ActivityServices) {
  return {
    async readBankReports(after: number): Promise<BankReportsStep> {
      if (!bankReports || !bankIntake) {
        throw ApplicationFailure.nonRetryable('no ISO 20022 bank is configured', 'BankNotConfigured');
      }
      const page = await bankReports.reports(after, BANK_REPORTS_PER_STEP);
      const step: BankReportsStep = {
        last: page.last,
        more: page.reports.length >= BANK_REPORTS_PER_STEP,
        recorded: 0,
        unmatched: 0,
        refused: 0,
      };
      for (const report of page.reports) {
        if (report.type !== 'camt.054') continue;
        const { message } = report;
        const account = accountText(message.account);
        const movements = movementsOf(message);
        for (const [index, movement] of movements.entries()) {
          if (movement.kind === 'ignored') continue;
          const entry: Entry = message.entries[index]!;
          if (movement.kind === 'deposit') {
            await recordBankCredit(prisma, {
              bank: ISO20022_PROVIDER,
              entryReference: entry.reference,
              account,
              messageId: message.messageId,
              amount: entry.amount.toString(),
              currency: entry.amount.currency,
              bookingDate: entry.bookingDate,
              remittance: entry.remittance ?? null,
              debtorName: entry.counterpartyName ?? null,
              debtorAccount: entry.counterpartyAccount ?? null,
              debtorAgent: entry.counterpartyAgent ?? null,
            });
          }
          const result =
            movement.kind === 'deposit'
              ? await bankIntake.deposit(movement.deposit)
              : await bankIntake.payoutReturn(movement.report);
          if (result.status === 'recorded') {
            step.recorded += 1;
            continue;
          }
          step[result.status] += 1;
          await recordUnmatchedBankEntry(
            prisma,
            unmatchedEntryOf(
              entry,
              { source: 'camt.054', account: message.account, messageId: message.messageId },
              result.status === 'refused' ? `${result.code}: ${result.detail}` : result.detail,
            ),
          );
          logger.warn(
            { bank: 'iso20022', kind: movement.kind, entry: movement.entryReference, ...result },
            'bank notification not taken: left to an operator',
          );
        }
      }
      return step;
    },
  };
}
