// What the bank's camt.054 notifications mean to the service: a credit on a collection account is a deposit (its
// remittance text carries the transaction's deposit reference), a credit that names a return reason is one of our
// payouts coming back after completion (its remittance text carries the payout's idempotency key, as the pain.001 sent
// it). The bank-reports workflow (workflows/bank-reports.ts) reads the reports in bounded pages and hands each
// movement to a BankReportIntake, which the worker builds on the service's own deposit and return paths
// (src/services/transactions/bank-reports.ts): both are idempotent by the bank's entry reference, so a notification
// read twice, or the same credit notified twice, is recorded once.
import type { Money } from '../../domain/money';
import { payoutReturnReasons, type PayoutReturnReason } from '../../domain/transactions';
import type { IncomingDeposit } from '../transaction-deposits';
import type { PayoutReturnReport } from '../fiat-rails';
import type { UnmatchedBankEntryInput } from '../../persistence/bank-credits';
import type { AccountId, Camt054, Entry } from './messages';

/** The provider name of every deposit and return this bank reports (with the entry reference, their identity). */
export const ISO20022_PROVIDER = 'iso20022';

/** An account as the service's rows keep it: the IBAN, or the other scheme's number. */
export const accountText = (account: AccountId): string => ('iban' in account ? account.iban : account.number);

/** A bank entry the service could not take, as kept for operators (bank_unmatched_entries). */
export function unmatchedEntryOf(
  entry: Entry,
  report: { source: UnmatchedBankEntryInput['source']; account: AccountId; messageId: string },
  detail: string,
): UnmatchedBankEntryInput {
  return {
    bank: ISO20022_PROVIDER,
    source: report.source,
    entryReference: entry.reference,
    account: accountText(report.account),
    messageId: report.messageId,
    direction: entry.direction,
    amount: entry.amount.toString(),
    currency: entry.amount.currency,
    bookingDate: entry.bookingDate,
    remittance: entry.remittance ?? null,
    counterparty: entry.counterpartyName ?? null,
    detail,
  };
}

/** What became of one reported movement. */
export type IntakeResult =
  /** Recorded now, or found recorded before (a repeat). */
  | { status: 'recorded'; id: string }
  /** Names nothing of the service (an unknown reference, another currency): left to an operator. */
  | { status: 'unmatched'; detail: string }
  /** The service refused it (e.g. a return of a payout that is not completed): left to an operator. */
  | { status: 'refused'; code: string; detail: string };

/** The service's paths for what a bank reports, injected into the worker's activities. */
export interface BankReportIntake {
  deposit(incoming: IncomingDeposit): Promise<IntakeResult>;
  payoutReturn(report: PayoutReturnReport): Promise<IntakeResult>;
}

export type BankMovement =
  | { kind: 'deposit'; entryReference: string; deposit: IncomingDeposit }
  | { kind: 'payout_return'; entryReference: string; report: PayoutReturnReport }
  /** A movement the service does not take from notifications (our own debits: the pain.002 settles those). */
  | { kind: 'ignored'; entryReference: string; why: string };

/**
 * ISO return reasons the service keeps as they are; any other (a bank may send codes outside the list) is kept as
 * MS03, "not specified: the bank returned it", with the bank's code in the logs.
 */
export function returnReasonOf(code: string): PayoutReturnReason {
  return code in payoutReturnReasons ? (code as PayoutReturnReason) : 'MS03';
}

function bookedAt(entry: Entry): Date {
  return new Date(`${entry.bookingDate}T00:00:00Z`);
}

/** The movements of one camt.054, in the order the bank lists them. */
export function movementsOf(notification: Camt054, receivedAt: Date = new Date()): BankMovement[] {
  return notification.entries.map((entry): BankMovement => {
    if (entry.returnReason !== undefined) {
      return {
        kind: 'payout_return',
        entryReference: entry.reference,
        report: {
          provider: ISO20022_PROVIDER,
          payoutIdempotencyKey: entry.remittance ?? null,
          payoutProviderReference: entry.endToEndId ?? null,
          amount: entry.amount as Money,
          reasonCode: returnReasonOf(entry.returnReason),
          returnReference: entry.reference,
          returnedAt: bookedAt(entry),
        },
      };
    }
    if (entry.direction !== 'CRDT') {
      return { kind: 'ignored', entryReference: entry.reference, why: 'a debit of the service’s account' };
    }
    return {
      kind: 'deposit',
      entryReference: entry.reference,
      deposit: {
        provider: ISO20022_PROVIDER,
        providerReference: entry.reference,
        reference: entry.remittance ?? '',
        amount: entry.amount,
        senderName: entry.counterpartyName ?? null,
        // The notification's arrival: a camt.054 books by day, and the deposit window is counted in minutes.
        receivedAt,
      },
    };
  });
}
