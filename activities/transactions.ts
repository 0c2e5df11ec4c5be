// Activities of settlement (workflows/settlement.ts and its legs). Exactly once in effect: each
// activity is keyed by transaction and step, so running it again (a retry, or a worker killed after
// the commit and before Temporal heard of it) finds its work done and changes nothing:
// - status changes are made under the transaction's row lock and only along domain/transactions.ts,
//   together with their event and their ledger postings, in ONE database transaction;
// - ledger postings carry the reference `transaction:<id>:<step>` (a second posting is a replay);
// - calls to outside systems carry the idempotency key `<id>:<step>` (a second call finds the first), and
//   the same key asks the provider what became of a call whose answer never came (lookUpRailOperation).
// A transaction (or deposit) that does not exist is a non-retryable failure.
// The deposit, refund and operator bookkeeping is the use cases' (src/services/transactions/deposit-bookkeeping.ts,
// settlement-bookkeeping.ts), which the API's deposit paths share; these activities add their metrics and turn the
// use cases' refusals (StepRefusal) into final failures.
import { changeTransactionStatus } from '../src/services/transactions/status';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { type DatabaseTransaction, withDatabaseTransaction } from '../src/persistence/database';
import { Money, currencyOf } from '../src/domain/money';
import type { Blockchain, FiatRail, PaymentRail } from '../src/domain/rails';
import {
  amountsOf,
  FailureReason,
  type LegKind,
  SandboxSimulation,
  TransactionStatus,
} from '../src/domain/transactions';
import { type OperatorActionInput, recordOperatorAction } from '../src/persistence/operator-actions';
import { settlementEntries, leg1Entries, sellBackEntries } from '../src/domain/ledger';
import { observeTransactionStatus } from '../src/observability/observe';
import {
  findFundingDeposit,
  openTransactionLeg,
  openTransactionLegs,
  recordLegChainTransfer,
  readTransactionRow,
  transactionLegStatus,
  type TransactionRow,
} from '../src/persistence/transactions';
import { toTransaction } from '../src/presenters/transactions';
import { chainCoinRefusals, RESOURCE_NOT_FOUND, refundRefusals } from '../src/temporal/failure-types';
import {
  type FiatRails,
  type RailOperationKind,
  type RailOutcome,
  ReturnRefusedError,
} from '../src/providers/fiat-rails';
import { lookUpOperation, type OperationLookup, ProviderUnavailableError } from '../src/providers/unavailable';
import type { SettlementCoinMove } from '../src/providers/chain-transfers';
import type { TransactionResource } from '../src/schemas/transactions';
import * as deposits from '../src/services/transactions/deposit-bookkeeping';
import { type DepositInput, type DepositReceipt, depositOf } from '../src/services/transactions/deposit-bookkeeping';
import * as bookkeeping from '../src/services/transactions/settlement-bookkeeping';
import { lockTransactionForStep, StepRefusal } from '../src/services/transactions/step-refusal';
import type { ActivityServices } from './services';

export type { DepositInput, DepositReceipt };

/** The steps that move money outside, each one provider operation (and one leg row) per transaction. */
export type RailStep = LegKind;

const operationKinds: Record<RailStep, RailOperationKind> = {
  fiat_to_stablecoin: 'conversion',
  stablecoin_to_fiat: 'payout',
  sell_back: 'sell_back',
  refund: 'return',
};

const idempotencyKey = (transactionId: string, step: RailStep) => `${transactionId}:${step}`;

/** A refusal of a bookkeeping use case (StepRefusal) is final: failed at once under its type, not retried. */
async function finalOnRefusal<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof StepRefusal) throw ApplicationFailure.nonRetryable(error.message, error.type);
    throw error;
  }
}

/** A return the sender's bank refused is final for this round: failed at once, not retried (ReturnRefusedError). */
async function refusalNotRetried<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ReturnRefusedError) throw ApplicationFailure.nonRetryable(error.message, 'ReturnRefused');
    throw error;
  }
}

/** A rail operation's outcome as activities return it (Money as its decimal string). */
export type RailStepOutcome = RailOutcome & { proceeds?: string };

/** What the provider knows of a step's operation (OperationLookup, serialisable). */
export type RailStepLookup = OperationLookup<RailStepOutcome>;

/** The legs a provider made after all, though the service never heard (lookUpLateOutcomes). */
export interface LateOutcomes {
  conversion?: RailStepOutcome;
  payout?: RailStepOutcome;
}

function notFound(what: string, id: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`${what} ${id} does not exist`, RESOURCE_NOT_FOUND);
}

/** The transaction under its row lock: one change of it at a time, across workers. */
const lockTransaction = (tx: DatabaseTransaction, id: string) => finalOnRefusal(() => lockTransactionForStep(tx, id));

/** A status change with its event (the shared use case), then its metrics: settlements finished, deposit-to-completed time. */
async function moveTo(
  tx: DatabaseTransaction,
  row: TransactionRow,
  to: TransactionStatus,
  data: { failureReason?: FailureReason | null; sandboxSimulation?: SandboxSimulation | null } = {},
): Promise<TransactionRow> {
  const updated = await changeTransactionStatus(tx, row, to, data);
  await observeTransactionStatus(tx, updated);
  return updated;
}

/**
 * The coin of a leg on chain, in order (issue 36; docs/chain.md): leg 1's stablecoin reaches the treasury from the
 * on-ramp, and a pay-in's is then delivered to the customer's wallet address; leg 2's goes to the off-ramp's address
 * before the off-ramp is asked to pay, from the wallet a payout is debited from, or else (fiat to fiat) the treasury.
 */
function coinMovesOf(row: TransactionRow, kind: 'fiat_to_stablecoin' | 'stablecoin_to_fiat'): SettlementCoinMove[] {
  const chain = row.stablecoinPaymentRail as Blockchain;
  const amount = amountsOf(row).stablecoin;
  const key = (move: string) => `${idempotencyKey(row.id, kind)}:${move}`;
  if (kind === 'fiat_to_stablecoin') {
    const moves: SettlementCoinMove[] = [
      { idempotencyKey: key('on_ramp'), chain, kind: 'on_ramp_to_treasury', amount, treasuryKey: row.id },
    ];
    if (row.type === 'payin' && row.wallet) {
      moves.push({
        idempotencyKey: key('delivery'),
        chain,
        kind: 'treasury_to_wallet',
        amount,
        toAddress: row.wallet.address,
        treasuryKey: row.id,
      });
    }
    return moves;
  }
  // A payout paid in on chain: its coin, at the collection address, is swept from there to the off-ramp.
  if (row.type === 'payout' && !row.wallet)
    return [{ idempotencyKey: key('off_ramp'), chain, kind: 'collection_to_off_ramp', amount, treasuryKey: row.id }];
  const fromWallet = row.type === 'payout' && row.wallet ? row.wallet.keyReference : undefined;
  const fees = walletFeesOf(row);
  return [
    // The wallet was debited its fees too (revenue on the books): they leave its address first, so the off-ramp's
    // move stays the leg's last (the one the leg row keeps).
    ...(fromWallet && fees
      ? [
          {
            idempotencyKey: key('fee'),
            chain,
            kind: 'wallet_fee' as const,
            amount: fees,
            treasuryKey: row.id,
            fromKeyReference: fromWallet,
          },
        ]
      : []),
    {
      idempotencyKey: key('off_ramp'),
      chain,
      kind: 'to_off_ramp',
      amount,
      treasuryKey: row.id,
      fromKeyReference: fromWallet,
    },
  ];
}

/** A wallet-funded payout's fees in its stablecoin (what the wallet paid beyond the coin sold); null when none. */
function walletFeesOf(row: TransactionRow) {
  const { fees } = amountsOf(row);
  return fees.total.isPositive() ? fees.total : null;
}

/**
 * A refunded wallet-funded payout's coin back to the wallet's address: whatever of leg 2's moves left it (its fees, its
 * coin to the off-ramp), each under its own key `<id>:refund:<move>`. The ledger's refund posting is unchanged.
 */
function coinReturnsOf(row: TransactionRow): SettlementCoinMove[] {
  if (row.type !== 'payout' || !row.wallet) return [];
  const forward = (move: string) => `${idempotencyKey(row.id, 'stablecoin_to_fiat')}:${move}`;
  const back = (move: string, from: 'off_ramp' | 'fee', amount: SettlementCoinMove['amount']): SettlementCoinMove => ({
    idempotencyKey: `${idempotencyKey(row.id, 'refund')}:${move}`,
    chain: row.stablecoinPaymentRail as Blockchain,
    kind: 'back_to_wallet',
    amount,
    toAddress: row.wallet!.address,
    returns: { key: forward(move), from },
    treasuryKey: row.id,
  });
  const fees = walletFeesOf(row);
  return [...(fees ? [back('fee', 'fee', fees)] : []), back('off_ramp', 'off_ramp', amountsOf(row).stablecoin)];
}

/** A leg's coin the chain refused for good (it would revert): the leg cannot go on until an operator looks. */
export const CHAIN_TRANSFER_REJECTED = chainCoinRefusals.rejected;

export function createTransactionActivities(services: ActivityServices) {
  const { prisma, chainTransfers } = services;
  const rails: FiatRails = services.fiatRails;

  /**
   * Moves the leg's coin on chain, each move exactly once under its key (a retry finds it mined), and keeps the last
   * move's transaction and block on the leg row. ChainUnavailableError (retryable) while a move is not mined; a move
   * the chain refuses for good fails the leg at once (chainCoinRefusals: leg 1's after the conversion was made).
   */
  async function moveLegCoin(
    row: TransactionRow,
    kind: 'fiat_to_stablecoin' | 'stablecoin_to_fiat' | 'refund',
  ): Promise<void> {
    let last: { txHash: string; blockNumber: bigint } | null = null;
    for (const move of kind === 'refund' ? coinReturnsOf(row) : coinMovesOf(row, kind)) {
      const outcome = await chainTransfers.moveSettlementCoin(move);
      if (!outcome) continue;
      if (outcome.status === 'rejected') {
        throw kind === 'fiat_to_stablecoin'
          ? ApplicationFailure.nonRetryable(
              `the conversion of transaction ${row.id} was made, and the chain refuses its ${move.kind} coin: ${outcome.reason}`,
              chainCoinRefusals.convertedCoinRejected,
            )
          : ApplicationFailure.nonRetryable(
              `the ${move.kind} coin of transaction ${row.id}: ${outcome.reason}`,
              chainCoinRefusals.rejected,
            );
      }
      if (outcome.blockNumber !== undefined)
        last = { txHash: outcome.txHash, blockNumber: BigInt(outcome.blockNumber) };
    }
    if (last) await recordLegChainTransfer(prisma, row.id, kind, last);
  }

  /**
   * A leg's lookup with its coin: leg 1 made at the exchange is made only once its coin moved (driven on here; the
   * chain unable to finish it is `unknown`, the chain refusing it fails the lookup with the refusal, which the workflow
   * does not ask again); leg 2 not made at the off-ramp is unknown once its coin was sent.
   */
  async function withLegCoin<T>(
    row: TransactionRow,
    kind: RailStep,
    found: OperationLookup<T>,
  ): Promise<OperationLookup<T>> {
    try {
      if (kind === 'fiat_to_stablecoin' && found.state === 'executed') await moveLegCoin(row, kind);
      if (kind === 'stablecoin_to_fiat' && found.state === 'not_executed') {
        // The coin that reaches the off-ramp (a wallet's fees sent alone do not make a payout).
        for (const move of coinMovesOf(row, kind))
          if (move.kind !== 'wallet_fee' && (await chainTransfers.settlementCoinStarted(move)))
            return { state: 'unknown' };
      }
    } catch (error) {
      if (error instanceof ApplicationFailure && error.type === chainCoinRefusals.convertedCoinRejected) throw error;
      if (error instanceof ProviderUnavailableError || error instanceof ApplicationFailure) return { state: 'unknown' };
      throw error;
    }
    return found;
  }

  /** What every call to an outside system carries: the step's idempotency key, the sandbox simulation, the round. */
  const requestOf = (row: TransactionRow, kind: RailStep, round: number) => ({
    idempotencyKey: idempotencyKey(row.id, kind),
    simulate: row.sandboxSimulation as SandboxSimulation | null,
    round,
  });

  async function transactionRow(transactionId: string): Promise<TransactionRow> {
    const row = await readTransactionRow(prisma, transactionId);
    if (!row) throw notFound('transaction', transactionId);
    return row;
  }

  /** What the provider knows of a step's operation; the provider being unreachable is `unknown` too. */
  async function lookUp(row: TransactionRow, kind: RailStep, round: number): Promise<RailStepLookup> {
    const deposit = kind === 'refund' ? await findFundingDeposit(prisma, row.id) : null;
    const found = await withLegCoin(
      row,
      kind,
      await lookUpOperation(() =>
        rails.lookUp(operationKinds[kind], { ...requestOf(row, kind, round), ...(deposit ? depositOf(deposit) : {}) }),
      ),
    );
    if (found.state !== 'executed') return found;
    const { outcome } = found;
    return {
      state: 'executed',
      outcome: 'proceeds' in outcome ? { ...outcome, proceeds: outcome.proceeds.toString() } : outcome,
    };
  }

  /** Before a call to an outside system: the transaction, its leg opened (once), its amounts, and the request. */
  async function railStep(transactionId: string, kind: RailStep, round: number) {
    const row = await openTransactionLeg(prisma, transactionId, kind);
    if (!row) throw notFound('transaction', transactionId);
    return { row, amounts: amountsOf(row), request: requestOf(row, kind, round) };
  }

  /** Marks a leg done with the provider's reference; false when it already was (a retry). */
  const closeLeg = (...args: Parameters<typeof bookkeeping.closeLeg>) =>
    finalOnRefusal(() => bookkeeping.closeLeg(...args));

  /**
   * A leg done: the leg closed, its postings and, when it completes the transaction, the status with its
   * event, in one database transaction; a leg already closed (a retry) changes nothing.
   */
  async function completeLeg(
    transactionId: string,
    kind: RailStep,
    providerReference: string,
    completesTransaction: boolean,
    postings: (row: TransactionRow) => bookkeeping.StepPostings,
  ): Promise<void> {
    await withDatabaseTransaction(prisma, async (tx) => {
      const row = await lockTransaction(tx, transactionId);
      if (!(await closeLeg(tx, transactionId, kind, 'completed', providerReference))) return;
      await bookkeeping.postSteps(tx, transactionId, postings(row));
      if (completesTransaction) await moveTo(tx, row, 'completed');
    });
  }

  return {
    /** The deposit use case's takeAwaitedDeposit: recorded, posted and processing, in one database transaction. */
    async receiveDeposit(transactionId: string, input: DepositInput): Promise<DepositReceipt> {
      return finalOnRefusal(() => deposits.takeAwaitedDeposit(prisma, transactionId, input, observeTransactionStatus));
    },

    /** awaiting_deposit -> cancelled (event payin.cancelled). Nothing was posted, so nothing to undo. */
    async cancelTransaction(transactionId: string): Promise<TransactionResource> {
      return withDatabaseTransaction(prisma, async (tx) => {
        const row = await lockTransaction(tx, transactionId);
        if (row.status === 'cancelled') return toTransaction(row);
        return toTransaction(await moveTo(tx, row, 'cancelled'));
      });
    },

    /** awaiting_deposit -> failed at the deposit deadline (event payin.failed). */
    async expireTransaction(transactionId: string): Promise<TransactionStatus> {
      return withDatabaseTransaction(prisma, async (tx) => {
        const row = await lockTransaction(tx, transactionId);
        if (row.status === 'failed') return 'failed';
        return (await moveTo(tx, row, 'failed', { failureReason: 'deposit_deadline_passed' })).status;
      });
    },

    /**
     * Leg 1, outside: the exchange buys the stablecoin for the converted fiat, then its coin moves on chain. An
     * operator's retry (round 1 on) first asks the exchange under the conversion's key: one it made (its coin refused
     * by the chain, say) is not asked again, only its coin moves.
     */
    async convertFiatToStablecoin(transactionId: string, round: number): Promise<{ providerReference: string }> {
      const { row, amounts, request } = await railStep(transactionId, 'fiat_to_stablecoin', round);
      const made =
        round > 0 ? await lookUpOperation(() => rails.lookUp(operationKinds.fiat_to_stablecoin, request)) : null;
      const outcome =
        made?.state === 'executed'
          ? made.outcome
          : await rails.convertToStablecoin({
              ...request,
              from: amounts.converted,
              to: amounts.stablecoin,
              chain: row.stablecoinPaymentRail as Blockchain,
              walletAddress: row.wallet?.address ?? '',
            });
      await moveLegCoin(row, 'fiat_to_stablecoin');
      return { providerReference: outcome.providerReference };
    },

    /**
     * Leg 1, ledger: fees where the quote said, the rest converted and held in transit on the wallet.
     * With `completesTransaction` (a pay-in, which is leg 1 alone) the transaction completes with it.
     */
    async completeFiatToStablecoin(
      transactionId: string,
      providerReference: string,
      completesTransaction: boolean,
    ): Promise<void> {
      await completeLeg(transactionId, 'fiat_to_stablecoin', providerReference, completesTransaction, (row) => [
        {
          step: 'fiat_to_stablecoin',
          description: `Fees and conversion to ${row.stablecoinCurrency} of transaction ${transactionId}`,
          entries: leg1Entries(row),
        },
        // A pay-in ends here: the stablecoin becomes the wallet's spendable balance.
        ...(completesTransaction
          ? [
              {
                step: 'delivered',
                description: `${row.stablecoinCurrency} of pay-in ${transactionId} credited to wallet ${row.walletId ?? ''}`,
                entries: settlementEntries.delivered({
                  walletId: row.walletId as string,
                  stablecoin: amountsOf(row).stablecoin,
                }),
              },
            ]
          : []),
      ]);
    },

    /** Leg 2, outside: the off-ramp sells the stablecoin and pays the receiver's external account. */
    async payOutTransaction(transactionId: string, round: number): Promise<RailOutcome> {
      const { row, amounts, request } = await railStep(transactionId, 'stablecoin_to_fiat', round);
      // The off-ramp pays out the stablecoin it holds: the coin goes first.
      await moveLegCoin(row, 'stablecoin_to_fiat');
      return rails.payOut({
        ...request,
        from: amounts.stablecoin,
        amount: amounts.receiver,
        rail: row.receiverPaymentRail as FiatRail,
        destination: (row.externalAccount?.details ?? row.receiverDetails ?? {}) as object,
      });
    },

    /**
     * Leg 2, ledger: the stablecoin in transit converted into the receiver's fiat and paid out. With
     * `completesTransaction` (fiat to fiat, and payouts) the transaction completes in the same
     * database transaction (event payin.completed).
     */
    async completeStablecoinToFiat(
      transactionId: string,
      providerReference: string,
      completesTransaction: boolean,
    ): Promise<void> {
      await completeLeg(transactionId, 'stablecoin_to_fiat', providerReference, completesTransaction, (row) =>
        bookkeeping.payoutPostings(row, providerReference),
      );
    },

    /**
     * A rail step whose attempts ran out: what the provider knows of its operation under the same idempotency key
     * (executed with its outcome, not executed, or unknown). Reads only: the workflow decides.
     */
    async lookUpRailOperation(transactionId: string, step: RailStep, round: number): Promise<RailStepLookup> {
      return lookUp(await transactionRow(transactionId), step, round);
    },

    /**
     * Refund after leg 1, outside: the stablecoin leg 1 bought is sold back to the exchange at its rate of the
     * moment (its own operation and idempotency key), so the fiat returned to the sender is fiat the service got.
     */
    async sellBackStablecoin(
      transactionId: string,
      round: number,
    ): Promise<{ providerReference: string; proceeds: string }> {
      const { row, amounts, request } = await railStep(transactionId, 'sell_back', round);
      const sold = await rails.sellBack({
        ...request,
        from: amounts.stablecoin,
        atLockedRate: amounts.converted,
        chain: row.stablecoinPaymentRail as Blockchain,
        walletAddress: row.wallet?.address ?? '',
      });
      return { providerReference: sold.providerReference, proceeds: sold.proceeds.toString() };
    },

    /** The sell-back in the ledger: the leg closed and its posting (FX gain or loss included), once. */
    async recordSellBack(transactionId: string, providerReference: string, proceeds: string): Promise<void> {
      await completeLeg(transactionId, 'sell_back', providerReference, false, (row) => [
        {
          step: 'sell_back',
          description: `Sell-back of the ${row.stablecoinCurrency} of transaction ${transactionId} (${providerReference})`,
          entries: sellBackEntries(row, Money.parse(currencyOf(row.senderCurrency), proceeds)),
        },
      ]);
    },

    /** Leg 2 was refused for good by the receiving bank: recorded; the workflow refunds. */
    async recordPayoutRejection(transactionId: string, providerReference: string, reason: string): Promise<void> {
      await withDatabaseTransaction(prisma, async (tx) => {
        await lockTransaction(tx, transactionId);
        await closeLeg(tx, transactionId, 'stablecoin_to_fiat', 'rejected', providerReference, reason);
      });
    },

    /**
     * Before a refund or a sell-back: what the providers now say of the legs that were asked and never closed (the
     * conversion, the payout), under their own keys. Reads only: the workflow books what was made (a late
     * conversion before anything is returned; a late payout completes the transaction). A provider that cannot say
     * refuses the refund (it may have moved money); a retry asks again.
     */
    async lookUpLateOutcomes(transactionId: string, round: number): Promise<LateOutcomes> {
      const row = await transactionRow(transactionId);
      const open = await openTransactionLegs(prisma, transactionId);
      const late: LateOutcomes = {};
      for (const kind of ['fiat_to_stablecoin', 'stablecoin_to_fiat'] as const) {
        if (!open.includes(kind)) continue;
        const found = await lookUp(row, kind, round);
        if (found.state === 'unknown') {
          throw ApplicationFailure.nonRetryable(
            kind === 'stablecoin_to_fiat'
              ? `the payout of transaction ${transactionId} may have been made (the rail cannot tell): no refund`
              : `the conversion of transaction ${transactionId} may have been made (the exchange cannot tell): no refund`,
            kind === 'stablecoin_to_fiat'
              ? refundRefusals.payoutOutcomeUnknown
              : refundRefusals.conversionOutcomeUnknown,
          );
        }
        if (found.state === 'executed') late[kind === 'fiat_to_stablecoin' ? 'conversion' : 'payout'] = found.outcome;
      }
      return late;
    },

    /**
     * The audit trail's row of an operator's decision (idempotent by workflow and update id). Who: the identity the
     * update was sent with, as the workflow's history has it (the Temporal UI sends the signed-in person's email from
     * their ID token; an SDK client its `identity`), rather than a name typed into the update's arguments, which is
     * kept beside it when it differs.
     */
    async recordOperatorAction(action: OperatorActionInput): Promise<void> {
      const sender = await updateSenderIdentity(action.workflowId, action.updateId);
      const stated = action.operator === 'unnamed' ? undefined : action.operator;
      await recordOperatorAction(prisma, {
        ...action,
        operator: sender ?? stated ?? 'unnamed',
        details: { ...action.details, ...(sender && stated && stated !== sender ? { stated_operator: stated } : {}) },
      });
    },

    /** An operator records a payout the rail made but cannot report (update resolveError, action record_payout). */
    async recordPayoutByOperator(transactionId: string, providerReference: string, reason: string): Promise<void> {
      await finalOnRefusal(() =>
        bookkeeping.recordPayoutByOperator(prisma, transactionId, providerReference, reason, observeTransactionStatus),
      );
    },

    /**
     * Refund, outside: the deposit that funded the transaction goes back in full to the sender's account on the
     * sender's rail (a payout's stablecoin sent in on chain: to the address it came from), under `<id>:refund`. A
     * payout debited from a wallet has nothing outside to return: the ledger gives the wallet its balance back.
     * Refused (not retried) while a payout that was asked for may have been made: the provider is asked under the
     * payout's key first (workflows that started their refund before lookUpLateOutcomes existed rely on this).
     */
    async returnTransactionFunds(transactionId: string, round: number): Promise<{ providerReference: string }> {
      const deposit = await findFundingDeposit(prisma, transactionId);
      const { row, request } = await railStep(transactionId, 'refund', round);
      if ((await transactionLegStatus(prisma, transactionId, 'stablecoin_to_fiat')) === 'processing') {
        const payout = await lookUp(row, 'stablecoin_to_fiat', round);
        if (payout.state === 'unknown' || (payout.state === 'executed' && payout.outcome.status === 'completed')) {
          throw ApplicationFailure.nonRetryable(
            payout.state === 'unknown'
              ? `the payout of transaction ${transactionId} may have been made (the rail cannot tell): no refund`
              : `the payout of transaction ${transactionId} was made (${payout.outcome.providerReference}): no refund`,
            payout.state === 'unknown' ? refundRefusals.payoutOutcomeUnknown : refundRefusals.payoutExecuted,
          );
        }
      }
      if (!deposit) {
        if (row.type === 'payout' && row.walletId) {
          // Nothing outside to return; the coin that left the wallet's address on chain comes back to it.
          await moveLegCoin(row, 'refund');
          return { providerReference: `wallet:${row.walletId}` };
        }
        throw notFound('deposit of transaction', transactionId);
      }
      const outcome = await refusalNotRetried(() =>
        rails.returnToSender({
          ...request,
          ...depositOf(deposit),
          amount: deposits.depositAmountOf(deposit),
          rail: row.senderPaymentRail as PaymentRail,
        }),
      );
      return { providerReference: outcome.providerReference };
    },

    /** Refund, ledger and status, in one database transaction (the refund use case). */
    async finishRefund(transactionId: string, providerReference: string, reason: FailureReason): Promise<void> {
      await finalOnRefusal(() =>
        bookkeeping.finishRefund(prisma, transactionId, providerReference, reason, observeTransactionStatus),
      );
    },

    /** A step kept failing: processing -> error (event payin.error) until an operator decides. */
    async markTransactionError(transactionId: string, reason: FailureReason): Promise<void> {
      await withDatabaseTransaction(prisma, async (tx) => {
        const row = await lockTransaction(tx, transactionId);
        if (row.status === 'error') return;
        await moveTo(tx, row, 'error', { failureReason: reason });
      });
    },

    /** The operator decided: error -> processing (event payin.processing) to carry the decision out. */
    async resumeTransaction(transactionId: string): Promise<void> {
      await withDatabaseTransaction(prisma, async (tx) => {
        const row = await lockTransaction(tx, transactionId);
        if (row.status === 'processing') return;
        await moveTo(tx, row, 'processing', { failureReason: null });
      });
    },

    /** A late deposit sent back (the deposit use case); a return the sender's bank refused is not retried. */
    async sendDepositBack(
      depositId: string,
      round = 0,
      simulate: SandboxSimulation | null = null,
    ): Promise<{ providerReference: string }> {
      return finalOnRefusal(() =>
        refusalNotRetried(() => deposits.sendDepositBack(prisma, rails, depositId, round, simulate)),
      );
    },

    /** What the sender's rail knows of a late deposit's return whose attempts ran out (executed, not, unknown). */
    async lookUpDepositReturn(
      depositId: string,
      round: number,
      simulate: SandboxSimulation | null,
    ): Promise<OperationLookup<{ providerReference: string }>> {
      return deposits.lookUpDepositReturn(prisma, rails, depositId, round, simulate);
    },

    /** The returned late deposit in the ledger and its status, at once (the deposit use case). */
    async finishDepositReturn(depositId: string): Promise<void> {
      await finalOnRefusal(() => deposits.finishDepositReturn(prisma, depositId));
    },

    /**
     * A late deposit's return ran out of attempts (`return_failed`), or an operator's retry (update
     * retryDepositReturn) moves it back to `returning` (the deposit use case).
     */
    async setDepositReturnStatus(depositId: string, status: 'returning' | 'return_failed'): Promise<void> {
      await finalOnRefusal(() => deposits.setDepositReturnStatus(prisma, depositId, status));
    },
  };
}

/** The identity on the accepted update `updateId` in the workflow's history (Temporal keeps the sender's there). */
async function updateSenderIdentity(workflowId: string, updateId: string): Promise<string | undefined> {
  if (!updateId) return undefined;
  const history = await Context.current().client.workflow.getHandle(workflowId).fetchHistory();
  for (const event of history.events ?? []) {
    const request = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
    if (request?.meta?.updateId === updateId) return request.meta.identity?.trim() || undefined;
  }
  return undefined;
}
