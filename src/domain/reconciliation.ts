// What the ledger's posting references say (their source: the transaction, wallet transfer, deposit or sandbox
// funding that caused them), what each final resource must have posted, and which provider operation each posting
// of money leaving or arriving from outside matches. Rules only: the checks run in src/persistence/reconciliation.ts.
import type { TransactionStatus, TransactionType } from './transactions';

export const balanceSourceTypes = ['transaction', 'wallet_transfer', 'sandbox_funding'] as const;
export type BalanceSourceType = (typeof balanceSourceTypes)[number];
type SourceType = BalanceSourceType | 'deposit';

/** The first segment of a posting reference of each source type. */
export const referencePrefixOf: Record<SourceType, string> = {
  transaction: 'transaction:',
  wallet_transfer: 'wallet-transfer:',
  sandbox_funding: 'sandbox-funding:',
  deposit: 'deposit:',
};

export interface PostingSource {
  type: SourceType;
  /** The resource (transaction, wallet transfer, deposit); the posting itself for sandbox funding. */
  id: string;
  /** The step of its lifecycle (`deposit`, `payout`, `hold`, ...); null for sandbox funding. */
  step: string | null;
}

/** The source of a posting, from its reference (`transaction:<id>:<step>`, `wallet-transfer:<id>:<step>`, ...). */
export function sourceOfReference(reference: string): PostingSource | null {
  const [prefix, id, step] = reference.split(':');
  if (!id) return null;
  for (const [type, start] of Object.entries(referencePrefixOf) as Array<[SourceType, string]>) {
    if (`${prefix}:` === start) return { type, id, step: step ?? null };
  }
  return null;
}

/** Every step a transaction posts under `transaction:<id>:<step>` (src/domain/ledger.ts, activities/transactions.ts). */
export const transactionPostingSteps = [
  'deposit',
  'funding',
  'fiat_to_stablecoin',
  'delivered',
  'stablecoin_to_fiat',
  'payout',
  'sell_back',
  'refund',
  // A payout returned after completion (src/services/transactions/payout-returns.ts, activities/payout-returns.ts).
  'payout_returned',
  'repaid',
  'payout_return_refund',
] as const;

/** Every step a wallet transfer posts under `wallet-transfer:<id>:<step>`. */
export const walletTransferPostingSteps = ['hold', 'hold-moved', 'delivered', 'returned'] as const;

/**
 * The postings a transaction in a final status must have. Completed: its whole path; a payout funded from a wallet
 * has no deposit. Refunded: the deposit (if one came) and the refund (a payout also its funding, which the refund
 * undoes). Cancelled and failed end before any deposit: nothing.
 */
export function requiredTransactionSteps(row: {
  type: TransactionType;
  status: TransactionStatus;
  walletId: string | null;
  /** The steps posted: a payout returned after completion (`payout_returned`) ended by its operator's decision. */
  posted?: readonly string[];
}): string[] {
  const deposit = row.type === 'payout' && row.walletId ? [] : ['deposit'];
  if (row.posted?.includes('payout_returned') && (row.status === 'completed' || row.status === 'refunded')) {
    const path = row.type === 'payout' ? [...deposit, 'funding'] : [...deposit, 'fiat_to_stablecoin'];
    const decided = row.status === 'completed' ? 'repaid' : 'payout_return_refund';
    return [...path, 'stablecoin_to_fiat', 'payout', 'payout_returned', decided];
  }
  switch (row.status) {
    case 'completed':
      switch (row.type) {
        case 'fiat_to_fiat':
          return [...deposit, 'fiat_to_stablecoin', 'stablecoin_to_fiat', 'payout'];
        case 'payin':
          return [...deposit, 'fiat_to_stablecoin', 'delivered'];
        case 'payout':
          return [...deposit, 'funding', 'stablecoin_to_fiat', 'payout'];
      }
      break;
    case 'refunded':
      return [...deposit, ...(row.type === 'payout' ? ['funding'] : []), 'refund'];
    default:
      return [];
  }
  return [];
}

/** The final event of a transaction (SPEC 6: fiat to fiat is announced as a pay-in). */
export function finalTransactionEventType(row: { type: TransactionType; status: TransactionStatus }): string {
  return `${row.type === 'payout' ? 'payout' : 'payin'}.${row.status}`;
}

/**
 * A provider operation (keyed by the idempotency key the service sent) and the posting that records its money:
 * `<transactionId>:<railStep>` (activities/transactions.ts), `deposit:<id>:return`, `<transferId>:send`.
 */
export function postingOfProviderOperation(
  key: string,
): { source: 'transaction' | 'deposit' | 'wallet_transfer'; id: string; reference: string } | null {
  const parts = key.split(':');
  if (parts.length === 3 && parts[0] === 'deposit' && parts[2] === 'return') {
    return { source: 'deposit', id: parts[1]!, reference: `deposit:${parts[1]}:returned` };
  }
  // A repay of a returned payout (`<id>:repay:<n>`): one completes at most, posted as `repaid`.
  if (parts.length === 3 && parts[1] === 'repay') {
    return { source: 'transaction', id: parts[0]!, reference: `transaction:${parts[0]}:repaid` };
  }
  if (parts.length !== 2) return null;
  const [id, step] = parts as [string, string];
  const transactionSteps: Record<string, string> = {
    fiat_to_stablecoin: 'fiat_to_stablecoin',
    stablecoin_to_fiat: 'payout',
    sell_back: 'sell_back',
    refund: 'refund',
    payout_return: 'payout_returned',
    payout_return_refund: 'payout_return_refund',
  };
  if (step === 'send') return { source: 'wallet_transfer', id, reference: `wallet-transfer:${id}:delivered` };
  const posted = transactionSteps[step];
  return posted ? { source: 'transaction', id, reference: `transaction:${id}:${posted}` } : null;
}

/**
 * The checks of a reconciliation run, in the order it makes them (docs/reconciliation.md). `provider_statement`
 * reads the provider's statement of the run's window and matches each line with its posting; `statement_postings`
 * then looks for postings of provider operations with no line on it; the `stuck_*` checks find money that stopped
 * moving (non-final rows older than their step's bound).
 */
export const reconciliationChecks = [
  'postings',
  'transactions',
  'wallet_transfers',
  'accounts',
  'provider_statement',
  'statement_postings',
  'stuck_transactions',
  'stuck_deposits',
  'stuck_legs',
] as const;
export type ReconciliationCheck = (typeof reconciliationChecks)[number];

/**
 * The checks of runs started before the statement existed (their histories replay with these; `provider_operations`
 * compared the sandbox's operation log and is now answered as skipped).
 */
export const legacyReconciliationChecks = [
  'postings',
  'transactions',
  'wallet_transfers',
  'accounts',
  'provider_operations',
] as const;
/**
 * The checks of the chain, after the others in runs begun since they exist (a patch of the workflow): per watched
 * chain, token and service address, what the service's books say it holds on chain against `balanceOf` at a block.
 */
export const chainReconciliationChecks = ['chain_balances'] as const;
export type AnyReconciliationCheck =
  ReconciliationCheck | (typeof legacyReconciliationChecks)[number] | (typeof chainReconciliationChecks)[number];

/** A check that reads what another one read is skipped when that one was. */
export const checkNeeds: Partial<Record<AnyReconciliationCheck, AnyReconciliationCheck>> = {
  statement_postings: 'provider_statement',
};

/** What one check did: how many things it looked at and how many discrepancies it kept, or why it could not look. */
export type CheckOutcome = { checked: number; found: number } | { skipped: string };
export type CheckOutcomes = Partial<Record<AnyReconciliationCheck, CheckOutcome>>;

export const reportStatuses = ['running', 'clean', 'discrepancies', 'incomplete'] as const;
export type ReportStatus = (typeof reportStatuses)[number];

export function isSkipped(outcome: CheckOutcome | undefined): outcome is { skipped: string } {
  return outcome !== undefined && 'skipped' in outcome;
}

/**
 * A finished run's status: `discrepancies` when anything was found; otherwise `incomplete` when a check was skipped
 * (nothing is called clean that was not looked at); `clean` only when every check looked and found nothing.
 */
export function finishedReportStatus(
  discrepancyCount: number,
  checks: CheckOutcomes,
): Exclude<ReportStatus, 'running'> {
  if (discrepancyCount > 0) return 'discrepancies';
  return Object.values(checks).some(isSkipped) ? 'incomplete' : 'clean';
}

/** What a check can find (docs/reconciliation.md names each). */
export const discrepancyKinds = [
  'posting_unbalanced',
  'posting_missing',
  'money_left_in_transit',
  'final_event_missing',
  'account_balance_mismatch',
  'statement_line_without_posting',
  'posting_without_statement_line',
  'statement_amount_mismatch',
  'transaction_stuck',
  'deposit_stuck',
  'leg_not_closed',
  'leg_rejected_unhandled',
  'chain_balance_mismatch',
] as const;
export type DiscrepancyKind = (typeof discrepancyKinds)[number];

export interface Discrepancy {
  kind: DiscrepancyKind;
  subjectType:
    | 'posting'
    | 'transaction'
    | 'wallet_transfer'
    | 'deposit'
    | 'transaction_leg'
    | 'ledger_account'
    | 'provider_operation'
    /** `<chain>:<currency>:<address>`: a service address on a chain. */
    | 'chain_address';
  subjectId: string;
  detail: string;
}

/**
 * A line of a provider's statement (src/providers/provider-statements.ts): one operation the provider made, named by
 * the idempotency key the service sent with it.
 */
export interface StatementLine {
  idempotencyKey: string;
  /** The provider's own id of the operation. */
  providerReference: string;
  /** conversion | payout | sell_back | return | chain_send (what the provider calls it). */
  kind: string;
  currency: string;
  /** A decimal string, positive. */
  amount: string;
  /** When the provider made the operation. */
  valueDate: Date;
}

/** The statement window of a run that started at `startedAt`: the last `lookbackHours` before it. */
export function statementWindow(startedAt: Date, lookbackHours: number): { from: Date; to: Date } {
  return { from: new Date(startedAt.getTime() - lookbackHours * HOUR_MS), to: startedAt };
}

/**
 * The postings whose lines must be on that statement: those made from a day after its start. A posting follows its
 * operation by seconds, or by the provider-outcome polls (about two hours), or by an operator's retry of a step in
 * `error`: a day covers the first two and the stuck-money checks report longer waits.
 */
export const STATEMENT_POSTING_LAG_HOURS = 24;

const HOUR_MS = 3_600_000;

/** The bounds past which a non-final row is stuck money (src/config.ts: RECONCILIATION_*_BOUND_HOURS). */
export interface StuckBounds {
  /** A transaction `processing`, a leg open (`processing`) or rejected and not yet refunded. */
  processingHours: number;
  /** A transaction in `error` (or a non-final status this code does not know). */
  errorHours: number;
  /** A deposit `returning` (or any status other than accepted and returned). */
  depositReturningHours: number;
}

/**
 * The provider operation a posting records, by its idempotency key; null when the posting moves no money outside.
 * A refund posting needs one only when it pays a deposit back outside (a payout funded from a wallet gives the
 * wallet its balance back, with no provider).
 */
export function providerOperationOfPosting(reference: string, paysOutside: boolean): string | null {
  const source = sourceOfReference(reference);
  if (!source) return null;
  if (source.type === 'deposit') return source.step === 'returned' ? `deposit:${source.id}:return` : null;
  if (source.type === 'wallet_transfer') return source.step === 'delivered' ? `${source.id}:send` : null;
  if (source.type !== 'transaction') return null;
  switch (source.step) {
    case 'fiat_to_stablecoin':
    case 'sell_back':
      return `${source.id}:${source.step}`;
    case 'payout':
      return `${source.id}:stablecoin_to_fiat`;
    case 'refund':
      return paysOutside ? `${source.id}:refund` : null;
    case 'payout_returned':
      return `${source.id}:payout_return`;
    case 'payout_return_refund':
      return `${source.id}:payout_return_refund`;
    default:
      return null;
  }
}

/**
 * Transaction statuses where no money is in motion: the final ones, `returned` (a payout sent back after it
 * completed, once that status exists) and `awaiting_deposit` (nothing received yet; it ends at its deadline). Any
 * other status, including one this code does not know yet, holds money and is checked against a bound. Listed by
 * name, not derived from the transitions: a final status that gains a way out (completed -> returned) still rests.
 */
export const restingTransactionStatuses: readonly string[] = [
  'completed',
  'refunded',
  'cancelled',
  'failed',
  'returned',
  'awaiting_deposit',
];

/** Deposit statuses at rest: taken by the transaction (`accepted`) or back with the sender (`returned`). */
export const restingDepositStatuses: readonly string[] = ['accepted', 'returned'];

/** How long a transaction may stay in a non-resting status: `processing` moves by itself, the rest waits for people. */
export function stuckTransactionBoundHours(status: string, bounds: StuckBounds): number {
  return status === 'processing' ? bounds.processingHours : bounds.errorHours;
}

/** How long a deposit may stay neither accepted nor returned: `returning` is being sent back, the rest waits for people. */
export function stuckDepositBoundHours(status: string, bounds: StuckBounds): number {
  return status === 'returning' ? bounds.depositReturningHours : bounds.errorHours;
}
