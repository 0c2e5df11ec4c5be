// A settlement's bookkeeping that is not a deposit's: a leg closed, a payout an operator recorded, a refund recorded.
// Each in one database transaction under the transaction's row lock, with its postings (references
// `transaction:<id>:<step>`, so a second run posts nothing) and its status change with its event. The settlement's
// activities (activities/transactions.ts) run these and add only their metrics and Temporal's failure types.
import {
  carrierOf,
  leg1FeesReturnedEntries,
  ledgerReference,
  type LedgerEntryInput,
  payoutFundingEntries,
  reversed,
  settlementEntries,
} from '../../domain/ledger';
import { amountsOf, type FailureReason, type LegKind } from '../../domain/transactions';
import { type DatabaseClient, type DatabaseTransaction, withDatabaseTransaction } from '../../persistence/database';
import { isPosted, postLedgerEntries } from '../../persistence/ledger';
import { closeTransactionLeg, findFundingDeposit, type TransactionRow } from '../../persistence/transactions';
import { depositAmountOf, markDepositReturned } from './deposit-bookkeeping';
import { changeTransactionStatus, type StatusObserver } from './status';
import { lockTransactionForStep, StepRefusal, stepNotFound } from './step-refusal';

/** A step's postings before their references: `transaction:<id>:<step>`. */
export type StepPostings = Array<{ step: string; description: string; entries: LedgerEntryInput[] }>;

/** Posts each step's entries under `transaction:<id>:<step>`, in `tx`. */
export async function postSteps(tx: DatabaseTransaction, transactionId: string, postings: StepPostings): Promise<void> {
  await postLedgerEntries(
    tx,
    ...postings.map(({ step, description, entries }) => ({
      reference: ledgerReference(transactionId, step),
      description,
      entries,
    })),
  );
}

/** Leg 2's postings: the stablecoin in transit converted into the receiver's fiat, then paid out. */
export function payoutPostings(row: TransactionRow, providerReference: string): StepPostings {
  const amounts = amountsOf(row);
  return [
    {
      step: 'stablecoin_to_fiat',
      description: `Conversion to ${row.receiverCurrency} of transaction ${row.id}`,
      entries: settlementEntries.stablecoinToFiat({
        walletId: carrierOf(row),
        stablecoin: amounts.stablecoin,
        receiver: amounts.receiver,
      }),
    },
    {
      step: 'payout',
      description: `Payout of transaction ${row.id} (${providerReference})`,
      entries: settlementEntries.paidOut(amounts.receiver),
    },
  ];
}

/** Marks a leg done with the provider's reference, in `tx`; false when it already was (a retry). */
export async function closeLeg(
  tx: DatabaseTransaction,
  transactionId: string,
  kind: LegKind,
  status: 'completed' | 'rejected',
  providerReference: string,
  failureReason: string | null = null,
): Promise<boolean> {
  const closed = await closeTransactionLeg(tx, { transactionId, kind, status, providerReference, failureReason });
  if (closed === true) return true;
  if (closed.status === status) return false;
  throw new StepRefusal(
    'InvalidLegState',
    `leg ${kind} of transaction ${transactionId} is ${closed.status ?? 'missing'}`,
  );
}

/**
 * An operator records a payout the rail made but cannot report (the settlement's resolveError, action
 * record_payout): the payout leg, which was asked and never closed, completes with the operator's reference and
 * reason, its postings and the transaction's completion in one database transaction. Refused (PayoutNotOpen) unless
 * that leg is open; completed already (a retry): nothing.
 */
export async function recordPayoutByOperator(
  db: DatabaseClient,
  transactionId: string,
  providerReference: string,
  reason: string,
  observe?: StatusObserver,
): Promise<void> {
  await withDatabaseTransaction(db, async (tx) => {
    const row = await lockTransactionForStep(tx, transactionId);
    if (row.status === 'completed') return;
    const closed = await closeTransactionLeg(tx, {
      transactionId,
      kind: 'stablecoin_to_fiat',
      status: 'completed',
      providerReference,
      failureReason: null,
      operatorReason: reason,
    });
    if (closed !== true) {
      throw new StepRefusal(
        'PayoutNotOpen',
        `the payout of transaction ${transactionId} is ${closed.status ?? 'not asked'}; only a payout asked and never closed can be recorded`,
      );
    }
    await postSteps(tx, transactionId, payoutPostings(row, providerReference));
    await observe?.(tx, await changeTransactionStatus(tx, row, 'completed'));
  });
}

/**
 * A refund made outside, in the ledger and the status: gives back leg 1's fees if it was posted (its stablecoin was
 * sold back before) or a payout's funding (back to the wallet, or to clearing), returns the funding deposit (if any)
 * from clearing to the outside, closes the refund leg and moves to refunded (event payin.refunded or
 * payout.refunded) with the reason, in one database transaction; refunded already (a retry): nothing.
 */
export async function finishRefund(
  db: DatabaseClient,
  transactionId: string,
  providerReference: string,
  reason: FailureReason,
  observe?: StatusObserver,
): Promise<void> {
  await withDatabaseTransaction(db, async (tx) => {
    const row = await lockTransactionForStep(tx, transactionId);
    if (row.status === 'refunded') return;
    const deposit = await findFundingDeposit(tx, transactionId);
    if (!deposit && !(row.type === 'payout' && row.walletId))
      throw stepNotFound('deposit of transaction', transactionId);
    const posted = (step: string) => isPosted(tx, ledgerReference(transactionId, step));
    const undo = row.type === 'payout' ? reversed(payoutFundingEntries(row)) : leg1FeesReturnedEntries(row);
    const undoStep = row.type === 'payout' ? 'funding' : 'fiat_to_stablecoin';
    const undone = await posted(undoStep);
    if (undone && row.type !== 'payout' && !(await posted('sell_back'))) {
      // The ledger would show a conversion back that no exchange made.
      throw new StepRefusal('SellBackMissing', `transaction ${transactionId}: leg 1's stablecoin was not sold back`);
    }
    await postLedgerEntries(tx, {
      reference: ledgerReference(transactionId, 'refund'),
      description: `Refund of transaction ${transactionId} (${providerReference})`,
      entries: [...(undone ? undo : []), ...(deposit ? settlementEntries.paidOut(depositAmountOf(deposit)) : [])],
    });
    if (deposit) await markDepositReturned(tx, deposit);
    await closeLeg(tx, transactionId, 'refund', 'completed', providerReference);
    await observe?.(tx, await changeTransactionStatus(tx, row, 'refunded', { failureReason: reason }));
  });
}
