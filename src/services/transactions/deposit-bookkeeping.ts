// A transaction's deposits in the database and the ledger, one function per business action, shared by the API's
// deposit paths (deposits.ts, virtual-account-deposits.ts) and the settlement's activities (activities/transactions.ts),
// which add only their metrics and Temporal's failure types. Kept apart from deposits.ts, which starts and updates
// workflows: the activities import this module, and the workflows import the activities' types (a cycle otherwise).
import { idFromReference, newId } from '../../domain/ids';
import { currencyOf, Money } from '../../domain/money';
import type { PaymentRail } from '../../domain/rails';
import {
  lateDepositReceived,
  lateDepositReturned,
  type LedgerPosting,
  ledgerReference,
  payoutFundingEntries,
  settlementEntries,
} from '../../domain/ledger';
import { amountsOf, decideDeposit, type SandboxSimulation } from '../../domain/transactions';
import { type DatabaseClient, type DatabaseTransaction, withDatabaseTransaction } from '../../persistence/database';
import { postLedgerEntries } from '../../persistence/ledger';
import {
  findDepositWithTransaction,
  findTransactionDeposit,
  insertTransactionDeposit,
  lockTransactionDeposit,
  setDepositStatus,
  type TransactionDepositRow,
  type TransactionRow,
} from '../../persistence/transactions';
import { toDeposit } from '../../presenters/transactions';
import type { FiatRails } from '../../providers/fiat-rails';
import { lookUpOperation, type OperationLookup } from '../../providers/unavailable';
import type { DepositResource } from '../../schemas/transactions';
import { changeTransactionStatus, type StatusObserver } from './status';
import { lockTransactionForStep, StepRefusal, stepNotFound } from './step-refusal';

/** A deposit handed to the settlement workflow (the API's receiveDeposit update). */
export interface DepositInput {
  depositId: string;
  /** Who reported the credit and their id of it (absent in updates sent before they were recorded). */
  provider?: string;
  providerReference?: string;
  amount: string;
  senderName: string | null;
  reference: string | null;
  receivedAt: string;
  simulate: SandboxSimulation | null;
}

/** What the transaction does with a deposit it takes: settle, or refund (not the expected amount). */
export interface DepositReceipt {
  action: 'settle' | 'refund';
  deposit: DepositResource;
}

/**
 * A payout's stablecoin sent in as the deposit its settlement takes: exactly the amount sent for, named by the chain
 * and the transfer's hash when the transfer was checked on the chain (one hash funds one payout), else a new id.
 */
export function payoutDepositInput(
  row: TransactionRow,
  transfer: { chain: string; hash: string } | null,
  reference: string,
  simulate: SandboxSimulation | null,
): DepositInput {
  return {
    depositId: transfer ? idFromReference('deposit', transfer.chain, transfer.hash) : newId(),
    ...(transfer ? { provider: transfer.chain, providerReference: transfer.hash } : {}),
    amount: amountsOf(row).sender.toString(),
    senderName: null,
    reference,
    receivedAt: new Date().toISOString(),
    simulate,
  };
}

/** A credit as its provider reported it: who, their own id of it, the money and its sender. */
export interface DepositCredit {
  provider: string;
  providerReference: string;
  amount: Money;
  senderName: string | null;
  reference: string | null;
  receivedAt: Date;
}

/** The one key of a late deposit's return: every round asks for the same operation. */
const depositReturnKey = (depositId: string) => `deposit:${depositId}:return`;

/** The deposit a return sends back, as its provider reported it (a bank returns a credit by its own id). */
export const depositOf = (deposit: { provider: string; providerReference: string }) => ({
  deposit: { provider: deposit.provider, providerReference: deposit.providerReference },
});

/** A deposit row's money. */
export const depositAmountOf = (deposit: { currency: string; amount: { toString(): string } }) =>
  Money.of(currencyOf(deposit.currency), deposit.amount.toString());

/**
 * The deposit's row, in `tx`: accepted (it funds its transaction) or returning with the reason. Once per credit: a
 * row already recorded under the id answers `inserted: false` with that row.
 */
export function insertDeposit(
  tx: DatabaseTransaction,
  deposit: { id: string; transactionId: string; credit: DepositCredit },
  outcome: { status: 'accepted' } | { status: 'returning'; reason: string },
): Promise<{ row: TransactionDepositRow; inserted: boolean }> {
  const { credit } = deposit;
  return insertTransactionDeposit(tx, {
    id: deposit.id,
    transactionId: deposit.transactionId,
    currency: credit.amount.currency,
    amount: credit.amount.toString(),
    senderName: credit.senderName,
    reference: credit.reference,
    provider: credit.provider,
    providerReference: credit.providerReference,
    status: outcome.status,
    returnReason: outcome.status === 'returning' ? outcome.reason : null,
    receivedAt: credit.receivedAt,
  });
}

/**
 * Takes the deposit of a transaction in awaiting_deposit (the workflow's update made sure it is): records it, posts
 * it into clearing (a payout's fees and the rest in transit too, when it settles) and moves to processing (event
 * payin.processing), in one database transaction. Answers whether it settles or is refunded (not the expected
 * amount). Run again after its commit, it finds its deposit and answers the same.
 */
export async function takeAwaitedDeposit(
  db: DatabaseClient,
  transactionId: string,
  input: DepositInput,
  observe?: StatusObserver,
): Promise<DepositReceipt> {
  return withDatabaseTransaction(db, async (tx) => {
    const row = await lockTransactionForStep(tx, transactionId);
    const received = Money.parse(currencyOf(row.senderCurrency), input.amount);
    const decision = decideDeposit(row.status, amountsOf(row).sender, received);
    if (decision.action === 'return') {
      // A retry after the commit finds its deposit (recorded with the status change it caused).
      const previous = await findTransactionDeposit(tx, input.depositId);
      if (previous) {
        return { action: previous.status === 'accepted' ? 'settle' : 'refund', deposit: toDeposit(previous) };
      }
      throw new StepRefusal('DepositNotExpected', `transaction ${transactionId} is ${row.status}`);
    }
    const recorded = await insertDeposit(
      tx,
      {
        id: input.depositId,
        transactionId,
        credit: {
          provider: input.provider ?? 'sandbox',
          providerReference: input.providerReference ?? `deposit:${input.depositId}`,
          amount: received,
          senderName: input.senderName,
          reference: input.reference,
          receivedAt: new Date(input.receivedAt),
        },
      },
      decision.action === 'settle' ? { status: 'accepted' } : { status: 'returning', reason: decision.reason },
    );
    if (!recorded.inserted) {
      // The same credit, reported at once by another request, was recorded as late and is being sent back: it
      // cannot also fund the transaction, which keeps waiting for its deposit.
      throw new StepRefusal(
        'DepositAlreadyRecorded',
        `deposit ${input.depositId} was recorded already (${recorded.row.status})`,
      );
    }
    const deposit = recorded.row;
    await postLedgerEntries(
      tx,
      depositPosting(transactionId, received, `Deposit ${deposit.id} for transaction ${transactionId}`),
      ...(row.type === 'payout' && decision.action === 'settle'
        ? [payoutFundingPosting(row, `Fees of payout ${transactionId}; the rest in transit`)]
        : []),
    );
    const updated = await changeTransactionStatus(tx, row, 'processing', { sandboxSimulation: input.simulate });
    await observe?.(tx, updated);
    return { action: decision.action, deposit: toDeposit(deposit) };
  });
}

/** The deposit that funds its transaction, into clearing (`transaction:<id>:deposit`). */
export function depositPosting(transactionId: string, amount: Money, description: string): LedgerPosting {
  return {
    reference: ledgerReference(transactionId, 'deposit'),
    description,
    entries: settlementEntries.depositReceived(amount),
  };
}

/**
 * A payout funded (`transaction:<id>:funding`), by the deposit of its stablecoin or a debit of its wallet: its fees
 * where the quote said, the rest in transit.
 */
export function payoutFundingPosting(row: TransactionRow, description: string): LedgerPosting {
  return { reference: ledgerReference(row.id, 'funding'), description, entries: payoutFundingEntries(row) };
}

/**
 * A deposit its transaction does not take (it is no longer awaiting one), in `tx`: recorded as returning
 * (not_awaiting_deposit) and held in clearing from the moment it arrived, whatever becomes of its return. A row
 * already recorded under the id (the same credit reported at once) answers `inserted: false` and posts nothing.
 */
export async function recordLateDeposit(
  tx: DatabaseTransaction,
  deposit: { id: string; transactionId: string; credit: DepositCredit },
): Promise<{ row: TransactionDepositRow; inserted: boolean }> {
  const recorded = await insertDeposit(tx, deposit, { status: 'returning', reason: 'not_awaiting_deposit' });
  if (recorded.inserted) await postLedgerEntries(tx, lateDepositReceived(recorded.row));
  return recorded;
}

/**
 * A late deposit sent back in full to the sender, outside, under the deposit's own key `deposit:<id>:return` (every
 * round: it is one operation). The rail's ReturnRefusedError (the sender's bank refused) passes through.
 */
export async function sendDepositBack(
  db: DatabaseClient,
  rails: FiatRails,
  depositId: string,
  round: number,
  simulate: SandboxSimulation | null,
): Promise<{ providerReference: string }> {
  const deposit = await findDepositWithTransaction(db, depositId);
  if (!deposit) throw stepNotFound('deposit', depositId);
  const outcome = await rails.returnToSender({
    idempotencyKey: depositReturnKey(depositId),
    simulate,
    round,
    ...depositOf(deposit),
    amount: depositAmountOf(deposit),
    rail: deposit.transaction.senderPaymentRail as PaymentRail,
  });
  return { providerReference: outcome.providerReference };
}

/** What the sender's rail knows of a late deposit's return under its key (executed, not, unknown). */
export async function lookUpDepositReturn(
  db: DatabaseClient,
  rails: FiatRails,
  depositId: string,
  round: number,
  simulate: SandboxSimulation | null,
): Promise<OperationLookup<{ providerReference: string }>> {
  const deposit = await findDepositWithTransaction(db, depositId);
  const found = await lookUpOperation(() =>
    rails.lookUp('return', {
      idempotencyKey: depositReturnKey(depositId),
      simulate,
      round,
      ...(deposit ? depositOf(deposit) : {}),
    }),
  );
  return found.state === 'executed'
    ? { state: 'executed', outcome: { providerReference: found.outcome.providerReference } }
    : found;
}

/**
 * The late deposit's return in the ledger (out of clearing, where it was held since it arrived; a deposit recorded
 * before arrivals were posted gets its arrival posted here) and its status `returned`, in one database transaction;
 * returned already (a retry): nothing.
 */
export async function finishDepositReturn(db: DatabaseClient, depositId: string): Promise<void> {
  await withDatabaseTransaction(db, async (tx) => {
    const deposit = await lockTransactionDeposit(tx, depositId);
    if (!deposit) throw stepNotFound('deposit', depositId);
    if (deposit.status === 'returned') return;
    await postLedgerEntries(tx, lateDepositReceived(deposit), lateDepositReturned(deposit));
    await markDepositReturned(tx, deposit);
  });
}

/** A deposit sent back, in `tx`: `returned` (unless it is already). */
export async function markDepositReturned(tx: DatabaseTransaction, deposit: TransactionDepositRow): Promise<void> {
  if (deposit.status !== 'returned') await setDepositStatus(tx, deposit.id, 'returned');
}

/**
 * A late deposit's return ran out of attempts (`return_failed`, the money still held) or an operator retries it
 * (`returning` again). Refused once the deposit was returned.
 */
export async function setDepositReturnStatus(
  db: DatabaseClient,
  depositId: string,
  status: 'returning' | 'return_failed',
): Promise<void> {
  await withDatabaseTransaction(db, async (tx) => {
    const deposit = await lockTransactionDeposit(tx, depositId);
    if (!deposit) throw stepNotFound('deposit', depositId);
    if (deposit.status === 'returned') {
      throw new StepRefusal('InvalidDepositState', `deposit ${depositId} was returned already`);
    }
    if (deposit.status !== status) await setDepositStatus(tx, depositId, status);
  });
}
