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

/** The checks of a reconciliation run, in the order it makes them (docs/reconciliation.md). */
export const reconciliationChecks = [
  'postings',
  'transactions',
  'wallet_transfers',
  'accounts',
  'provider_operations',
] as const;
export type ReconciliationCheck = (typeof reconciliationChecks)[number];

/** What a check can find (docs/reconciliation.md names each). */
export type DiscrepancyKind =
  | 'posting_unbalanced'
  | 'posting_missing'
  | 'posting_without_provider_operation'
  | 'money_left_in_transit'
  | 'final_event_missing'
  | 'account_balance_mismatch'
  | 'provider_operation_without_posting'
  | 'provider_amount_mismatch';

export interface Discrepancy {
  kind: DiscrepancyKind;
  subjectType: 'posting' | 'transaction' | 'wallet_transfer' | 'deposit' | 'ledger_account' | 'provider_operation';
  subjectId: string;
  detail: string;
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
