// One settlement workflow per transaction (id: transaction-<id>), started once the transaction is
// written, for every type: fiat to fiat runs both legs, a pay-in leg 1 alone, a payout leg 2 alone
// (legsOf in src/domain/transactions.ts). A payout debited from a wallet and a virtual-account
// pay-in are created already funded (`processing`) and skip the wait for a deposit.
// It owns the transaction's status after creation (src/domain/transactions.ts):
//   awaiting_deposit: the first of these wins, the others are refused (so a cancel racing a deposit
//     has exactly one outcome):
//       update receiveDeposit   -> processing (the expected amount settles; another amount is refunded)
//       update cancelTransaction -> cancelled
//       the deposit deadline     -> failed (deposit_deadline_passed)
//   processing: leg 1 (child workflow <this id>-fiat-to-stablecoin), then leg 2 (child
//     <this id>-stablecoin-to-fiat: stablecoin -> fiat and payout) -> completed; a payout the receiving bank rejects -> refund -> refunded (payout_rejected).
//   A leg (or the refund) whose bounded retries run out -> error (event payin.error): the workflow
//   waits for an operator's `resolveError` update, `retry` (the failed step runs again) or `refund`.
//   A refund is refused while the step that failed may have moved money (the provider made it, or
//   cannot say: provider-outcome.ts); `retry` then asks the provider again under the same key.
//   A refund after leg 1 first sells the stablecoin back to the exchange (its own operation).
// Late deposits (after a cancellation, the deadline or the funding deposit) are not taken here: the
// API sends them back with depositReturnWorkflow (below).
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  defineQuery,
  defineUpdate,
  executeChild,
  isCancellation,
  log,
  patched,
  currentUpdateInfo,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { DepositInput, DepositReceipt } from '../activities/transactions';
import type { PaymentRail } from '../src/domain/rails';
import {
  depositDeadlineOf,
  FailureReason,
  legsOf,
  type SandboxSimulation,
  TransactionStatus,
  TransactionType,
} from '../src/domain/transactions';
import type { TransactionResource } from '../src/schemas/transactions';
import {
  CustomerIdAttribute,
  PartnerIdAttribute,
  ResourceIdAttribute,
  ResourceStatusAttribute,
} from '../src/temporal/search-attributes';
import { chainCoinRefusals, providerOutcomeFailures, refundRefusals } from '../src/temporal/failure-types';
import { failureOfType, recordExecuted, withOutcomeLookup } from './provider-outcome';
import {
  databaseActivities,
  fiatToStablecoinLegWorkflow,
  LegInput,
  legSearchAttributes,
  railActivities,
  railCall,
  stablecoinToFiatLegWorkflow,
} from './settlement-legs';
import { waitForOperator } from './operator-wait';
import { screenPayoutBeforeItLeaves } from './screening';

export interface SettlementInput {
  transactionId: string;
  partnerId: string;
  customerId: string;
  /** The sender's rail, whose deposit window (src/domain/transactions.ts) the deadline timer runs. */
  senderRail: PaymentRail;
  /** Absent in starts written before pay-ins and payouts existed: fiat_to_fiat. */
  type?: TransactionType;
  /**
   * Set when the transaction was created funded (`processing`): a payout debited from its wallet
   * (settle), or a virtual-account deposit, which settles or is sent back (refund, with the reason).
   */
  funded?: { action: 'settle' } | { action: 'refund'; reason: FailureReason };
  /**
   * The start carried the search attributes (the write path's intent does), so the workflow does not upsert them
   * again, and starts its legs with theirs (each upsert is a history event and a visibility write). Absent in
   * starts written before this field: those upsert as they did.
   */
  searchAttributesAtStart?: boolean;
}

export type SettlementStep =
  | 'awaiting_deposit'
  | 'fiat_to_stablecoin'
  /** The payout held before it leaves: its receiver is a potential sanctions-list match under review. */
  | 'payout_held'
  | 'stablecoin_to_fiat'
  | 'refund'
  | 'done';
export type OperatorAction = 'retry' | 'refund' | 'record_payout';

/**
 * The operator's decision on a transaction in error. `record_payout`: the payout rail made the payout but cannot
 * report it (the operator confirmed it with the provider); the transaction completes with their reference and reason.
 */
export interface OperatorDecision {
  action: OperatorAction;
  /** record_payout: the provider's reference of the payout made. */
  provider_reference?: string;
  /** record_payout: why, in the operator's words (kept on the payout leg); any action: kept in the audit trail. */
  reason?: string;
  /**
   * Who decides (the audit trail, docs/operations.md "Audit trail"): the identity the operator authenticated as.
   * The update's accepted event in the history carries the caller's identity as well.
   */
  operator?: string;
}

export interface SettlementState {
  status: TransactionStatus;
  step: SettlementStep;
  failureReason: FailureReason | null;
  /** True in `error`, until an operator's resolveError is accepted. */
  awaitingOperator: boolean;
  /**
   * In `error`: why a refund is refused (the failed step may have moved money: the provider made it, or cannot
   * say), or null when a refund is allowed.
   */
  refundBlocked: string | null;
  /** The payout was asked of the rail (leg 2 started): an operator may then record it made (record_payout). */
  payoutAsked?: boolean;
  /** Operator retries so far, per step. */
  rounds: Record<'fiat_to_stablecoin' | 'stablecoin_to_fiat' | 'refund', number>;
  /** When the deposit window ends on the workflow's clock. */
  depositDeadline: string;
}

/** Error types the updates are refused with; the API maps them to its error codes. */
export const settlementRefusals = {
  notAwaitingDeposit: 'NotAwaitingDeposit',
  notInError: 'NotInError',
  invalidAction: 'InvalidOperatorAction',
  refundRefused: 'RefundRefused',
} as const;

/** Failures after which undoing the step could pay twice. */
const mayHaveMovedMoney = [
  providerOutcomeFailures.unknown,
  providerOutcomeFailures.executedNotRecorded,
  refundRefusals.payoutExecuted,
  refundRefusals.payoutOutcomeUnknown,
  // Leg 1's coin refused after the exchange made the conversion: the coin was bought; a retry moves it.
  chainCoinRefusals.convertedCoinRejected,
];

export const receiveDepositUpdate = defineUpdate<DepositReceipt, [DepositInput]>('receiveDeposit');
export const cancelTransactionUpdate = defineUpdate<TransactionResource, []>('cancelTransaction');
export const resolveErrorUpdate = defineUpdate<OperatorAction, [OperatorDecision]>('resolveError');
export const settlementStateQuery = defineQuery<SettlementState>('settlementState');

/** What a step returns when the operator chose to refund instead of retrying it. */
const REFUND = { refund: true } as const;
/** What a step returns when the operator recorded the payout as made. */
interface PayoutRecorded {
  payoutRecorded: { providerReference: string; reason: string };
}

/** Why a record_payout decision cannot be taken, or null when it can. */
function recordPayoutProblem(decision: OperatorDecision, state: SettlementState): string | null {
  if (!state.payoutAsked || (state.step !== 'stablecoin_to_fiat' && state.step !== 'refund')) {
    return 'record_payout records a payout that was asked of the rail; this transaction has none open.';
  }
  const text = (value: unknown, max: number) =>
    typeof value === 'string' && value.trim().length > 0 && value.length <= max;
  if (!text(decision.provider_reference, 200)) return 'provider_reference must be 1-200 characters.';
  if (!text(decision.reason, 500)) return 'reason must be 1-500 characters.';
  return null;
}

export async function settlementWorkflow(input: SettlementInput): Promise<TransactionStatus> {
  const id = input.transactionId;
  // Timed from the workflow's start, on its own clock (like the quote's lifetime), which is the
  // transaction's creation: the stored deposit_deadline is the same instant, give or take the start.
  const deadline = depositDeadlineOf(workflowInfo().startTime, input.senderRail).getTime();
  const type = input.type ?? 'fiat_to_fiat';
  const state: SettlementState = {
    status: input.funded ? 'processing' : 'awaiting_deposit',
    step: 'awaiting_deposit',
    failureReason: null,
    awaitingOperator: false,
    refundBlocked: null,
    rounds: { fiat_to_stablecoin: 0, stablecoin_to_fiat: 0, refund: 0 },
    depositDeadline: new Date(deadline).toISOString(),
  };
  /** Who took the transaction out of awaiting_deposit, set before the first await so the others are refused. */
  let claim: 'deposit' | 'cancel' | 'deadline' | null = null;
  let depositAction: DepositReceipt['action'] | null = input.funded?.action ?? null;
  const refundReason: FailureReason =
    input.funded?.action === 'refund' ? input.funded.reason : 'deposit_amount_mismatch';
  let operatorDecision: OperatorDecision | null = null;
  /** The accepted update's id, for the audit trail. */
  let operatorUpdateId = '';

  const setStatus = (status: TransactionStatus, failureReason: FailureReason | null = state.failureReason) => {
    state.status = status;
    state.failureReason = failureReason;
    upsertSearchAttributes([
      { key: PartnerIdAttribute, value: input.partnerId },
      { key: CustomerIdAttribute, value: input.customerId },
      { key: ResourceIdAttribute, value: id },
      { key: ResourceStatusAttribute, value: status },
    ]);
  };
  if (!input.searchAttributesAtStart) setStatus(state.status);

  setHandler(settlementStateQuery, () => ({ ...state, rounds: { ...state.rounds } }));

  const refuseUnlessAwaitingDeposit = () => {
    if (state.status !== 'awaiting_deposit' || claim !== null) {
      const status = claim === 'deposit' ? 'processing' : claim === 'cancel' ? 'cancelled' : state.status;
      throw ApplicationFailure.nonRetryable(
        `The transaction is ${status === 'awaiting_deposit' ? 'past its deposit deadline' : status}.`,
        settlementRefusals.notAwaitingDeposit,
        status,
      );
    }
  };

  setHandler(
    receiveDepositUpdate,
    async (deposit) => {
      claim = 'deposit';
      try {
        const receipt = await databaseActivities.receiveDeposit(id, deposit);
        depositAction = receipt.action;
        setStatus('processing');
        return receipt;
      } catch (error) {
        claim = null;
        throw error;
      }
    },
    { validator: (_deposit: DepositInput) => refuseUnlessAwaitingDeposit() },
  );

  setHandler(
    cancelTransactionUpdate,
    async () => {
      claim = 'cancel';
      try {
        const cancelled = await databaseActivities.cancelTransaction(id);
        setStatus('cancelled');
        return cancelled;
      } catch (error) {
        claim = null;
        throw error;
      }
    },
    { validator: refuseUnlessAwaitingDeposit },
  );

  setHandler(
    resolveErrorUpdate,
    (decision) => {
      operatorDecision = {
        action: decision.action,
        ...(decision.action === 'record_payout'
          ? { provider_reference: decision.provider_reference?.trim(), reason: decision.reason?.trim() }
          : {}),
        ...(typeof decision.reason === 'string' && decision.action !== 'record_payout'
          ? { reason: decision.reason.trim() }
          : {}),
        ...(typeof decision.operator === 'string' ? { operator: decision.operator.trim() } : {}),
      };
      operatorUpdateId = currentUpdateInfo()?.id ?? '';
      return decision.action;
    },
    {
      validator: (request) => {
        const decision = (request ?? {}) as OperatorDecision;
        const action: unknown = decision.action;
        if (action !== 'retry' && action !== 'refund' && action !== 'record_payout') {
          throw ApplicationFailure.nonRetryable(
            'action must be "retry", "refund" or "record_payout".',
            settlementRefusals.invalidAction,
          );
        }
        if (!state.awaitingOperator || operatorDecision !== null) {
          throw ApplicationFailure.nonRetryable(
            `The transaction is ${state.status}; only a transaction in error waits for an operator.`,
            settlementRefusals.notInError,
          );
        }
        if (action === 'refund' && state.refundBlocked !== null) {
          throw ApplicationFailure.nonRetryable(
            `No refund: ${state.refundBlocked}. A retry asks the provider again.`,
            settlementRefusals.refundRefused,
          );
        }
        const problem = action === 'record_payout' ? recordPayoutProblem(decision, state) : null;
        if (problem) throw ApplicationFailure.nonRetryable(problem, settlementRefusals.invalidAction);
      },
    },
  );

  /**
   * Runs a step until it succeeds. When it fails for good: error (event payin.error), then the
   * operator decides; either way the transaction goes back to processing to carry the decision out.
   */
  async function step<T>(
    name: keyof SettlementState['rounds'],
    failure: FailureReason,
    run: (round: number) => Promise<T>,
  ): Promise<T | typeof REFUND | PayoutRecorded> {
    state.step = name;
    for (;;) {
      try {
        return await run(state.rounds[name]);
      } catch (error) {
        if (isCancellation(error)) throw error;
        log.warn('settlement step failed; waiting for an operator', { transactionId: id, step: name, failure });
        await databaseActivities.markTransactionError(id, failure);
        setStatus('error', failure);
        state.refundBlocked = failureOfType(error, mayHaveMovedMoney);
        state.awaitingOperator = true;
        await waitForOperator(
          () => operatorDecision !== null,
          'a settlement step failed and awaits an operator',
          {
            transactionId: id,
            step: name,
            failure,
            command: `temporal workflow update execute --workflow-id ${workflowInfo().workflowId} --name resolveError --input '{"action":"retry"}'`,
          },
          'operator-wait-reminders',
        );
        const decision = operatorDecision as OperatorDecision;
        const action = decision.action;
        operatorDecision = null;
        state.awaitingOperator = false;
        state.refundBlocked = null;
        state.rounds[name] += 1;
        log.info('operator decided', { transactionId: id, step: name, action });
        if (patched('operator-audit-trail'))
          await databaseActivities.recordOperatorAction({
            workflowId: workflowInfo().workflowId,
            updateId: operatorUpdateId,
            resourceType: 'transaction',
            resourceId: id,
            action,
            operator: decision.operator || 'unnamed',
            reason: decision.reason ?? null,
            details: {
              step: name,
              failure_reason: failure,
              ...(decision.provider_reference ? { provider_reference: decision.provider_reference } : {}),
            },
          });
        await databaseActivities.resumeTransaction(id);
        setStatus('processing', null);
        if (action === 'refund' && name !== 'refund') return REFUND;
        if (action === 'record_payout') {
          const payoutRecorded = {
            providerReference: decision.provider_reference as string,
            reason: decision.reason as string,
          };
          await databaseActivities.recordPayoutByOperator(id, payoutRecorded.providerReference, payoutRecorded.reason);
          return { payoutRecorded };
        }
      }
    }
  }

  const leg = (round: number, completesTransaction: boolean): LegInput => ({
    transactionId: id,
    partnerId: input.partnerId,
    customerId: input.customerId,
    round,
    completesTransaction,
    ...(input.searchAttributesAtStart ? { searchAttributesAtStart: true } : {}),
  });
  /** A leg's start: with its search attributes when this workflow's start had them (see SettlementInput). */
  const legStart = (name: string, args: LegInput) => ({
    workflowId: `${workflowInfo().workflowId}-${name}`,
    args: [args] as [LegInput],
    ...(args.searchAttributesAtStart ? { typedSearchAttributes: legSearchAttributes(args, 'processing') } : {}),
  });

  /** Leg 1 converted the deposit: a refund sells its stablecoin back first. */
  let converted = false;
  const showUnknown = (step: string) => () =>
    log.warn('the provider cannot tell yet; asking again', { transactionId: id, step });

  /**
   * Gives the money back, or finds that there is nothing to give back. First (unless this refund started before it
   * did so) the providers of the legs asked and never closed say what they made after all: a late conversion is
   * booked before anything is returned (and sold back below; for a pay-in, whose only leg it is, the pay-in
   * completes), a late payout completes the transaction, a late rejection is recorded. Then the stablecoin leg 1
   * bought is sold back, and the funding deposit is returned.
   */
  async function refund(reason: FailureReason): Promise<'refunded' | 'completed'> {
    const asksLateOutcomes = patched('refund-asks-late-outcomes');
    let sellsBack = converted && patched('refund-sells-back');
    const legs = legsOf(type);
    const ended = await step('refund', 'refund_failed', async (round): Promise<'refunded' | 'completed'> => {
      if (asksLateOutcomes) {
        const late = await databaseActivities.lookUpLateOutcomes(id, round);
        if (late.conversion) {
          const completes = legs[legs.length - 1] === 'fiat_to_stablecoin';
          await recordExecuted('the conversion', () =>
            databaseActivities.completeFiatToStablecoin(id, late.conversion!.providerReference, completes),
          );
          if (completes) return 'completed';
          converted = true;
          sellsBack = true;
        }
        if (late.payout?.status === 'completed') {
          await recordExecuted('the payout', () =>
            databaseActivities.completeStablecoinToFiat(id, late.payout!.providerReference, true),
          );
          return 'completed';
        }
        if (late.payout?.status === 'rejected') {
          await databaseActivities.recordPayoutRejection(id, late.payout.providerReference, late.payout.reason);
        }
      }
      if (sellsBack) {
        const sold = await railCall(
          id,
          'sell_back',
          round,
          () => railActivities.sellBackStablecoin(id, round),
          showUnknown('sell_back'),
        );
        await databaseActivities.recordSellBack(id, sold.providerReference, sold.proceeds as string);
      }
      const { providerReference } = await railCall(
        id,
        'refund',
        round,
        () => railActivities.returnTransactionFunds(id, round),
        showUnknown('refund'),
      );
      await databaseActivities.finishRefund(id, providerReference, reason);
      return 'refunded';
    });
    const outcome = typeof ended === 'string' ? ended : 'completed';
    if (outcome === 'refunded') setStatus('refunded', reason);
    return outcome;
  }

  // 1. The deposit, a cancellation or the deadline, whichever comes first. The wait ends on the
  // status (set once the deciding activity is done), not on the claim: a claim made by an update in
  // this very task would otherwise start and cancel the deadline timer in one task, which the
  // time-skipping test server refuses.
  while (state.status === 'awaiting_deposit') {
    if (await condition(() => state.status !== 'awaiting_deposit', Math.max(1, deadline - Date.now()))) break;
    if (claim !== null) {
      // A deposit or a cancellation is being recorded: it decides (or, if it fails, the deadline does).
      await condition(() => claim === null || state.status !== 'awaiting_deposit');
      continue;
    }
    claim = 'deadline';
    await databaseActivities.expireTransaction(id);
    setStatus('failed', 'deposit_deadline_passed');
  }

  // 2. Settle through the type's legs (the last one completes the transaction), or give the money back.
  if (state.status === 'processing') {
    if (depositAction === 'refund') {
      if ((await refund(refundReason)) === 'completed') setStatus('completed');
    } else {
      const legs = legsOf(type);
      let ended: 'refunded' | 'completed' | null = null;
      for (const [index, name] of legs.entries()) {
        const last = index === legs.length - 1;
        if (name === 'fiat_to_stablecoin') {
          const result = await step('fiat_to_stablecoin', 'conversion_failed', (round) =>
            executeChild(fiatToStablecoinLegWorkflow, legStart('fiat-to-stablecoin', leg(round, last))),
          );
          if (result === REFUND) {
            ended = await refund('refunded_by_operator');
            break;
          }
          converted = true;
        } else {
          // The receiver is screened right before the payout leaves; a potential match holds it for a review.
          // A screening that cannot be made (no list version loaded yet) fails like the leg: error, then an operator.
          if (patched('payout-receiver-screening')) {
            const screened = await step('stablecoin_to_fiat', 'payout_failed', () =>
              screenPayoutBeforeItLeaves({ transactionId: id, partnerId: input.partnerId }, () => {
                state.step = 'payout_held';
                upsertSearchAttributes([{ key: ResourceStatusAttribute, value: 'payout_held' }]);
              }),
            );
            if (state.step === 'payout_held') {
              upsertSearchAttributes([{ key: ResourceStatusAttribute, value: state.status }]);
            }
            if (screened !== 'release') {
              ended = await refund(screened === 'refund' ? 'receiver_sanctions_match' : 'refunded_by_operator');
              break;
            }
          }
          state.payoutAsked = true;
          const paid = await step('stablecoin_to_fiat', 'payout_failed', (round) =>
            executeChild(stablecoinToFiatLegWorkflow, legStart('stablecoin-to-fiat', leg(round, last))),
          );
          if ('payoutRecorded' in paid) break;
          if ('refund' in paid || paid.outcome === 'rejected') {
            ended = await refund('refund' in paid ? 'refunded_by_operator' : 'payout_rejected');
            break;
          }
        }
      }
      if (ended !== 'refunded') setStatus('completed');
    }
  }
  state.step = 'done';
  // Let an update that decided the outcome reply before the workflow completes.
  await condition(allHandlersFinished);
  return state.status;
}

export interface DepositReturnInput {
  depositId: string;
  transactionId: string;
  partnerId: string;
  /** Sandbox only: the simulation the deposit asked for (return_error). Absent in starts written before it. */
  simulate?: SandboxSimulation | null;
}

export interface DepositReturnState {
  status: 'returning' | 'return_failed' | 'returned';
  /** Operator retries so far. */
  rounds: number;
}

export const depositReturnRefusals = { notFailed: 'NotAwaitingRetry' } as const;
export const retryDepositReturnUpdate = defineUpdate<'returning', []>('retryDepositReturn');
export const depositReturnStateQuery = defineQuery<DepositReturnState>('depositReturnState');

/**
 * Sends back a deposit its transaction could not take (deposit-return-<depositId>): the money goes back in full to
 * the sender under the deposit's own key; the deposit becomes `returned`; the transaction does not change. The
 * deposit is on the ledger (held in clearing) from its arrival. A return whose bounded attempts run out is looked up
 * under its key like the legs (provider-outcome.ts): made -> returned; not made -> `return_failed` (ResourceStatus
 * `error`) until an operator's `retryDepositReturn` update sends it again (next round, same key); unknown -> asked
 * again for about two hours, then `return_failed` as well (a retry asks again before anything is sent).
 */
export async function depositReturnWorkflow(input: DepositReturnInput): Promise<'returned'> {
  const publish = (status: string) =>
    upsertSearchAttributes([
      { key: PartnerIdAttribute, value: input.partnerId },
      { key: ResourceIdAttribute, value: input.transactionId },
      { key: ResourceStatusAttribute, value: status },
    ]);
  publish('returning');
  if (!patched('deposit-return-outcome')) {
    await railActivities.sendDepositBack(input.depositId);
    await databaseActivities.finishDepositReturn(input.depositId);
    upsertSearchAttributes([{ key: ResourceStatusAttribute, value: 'returned' }]);
    return 'returned';
  }
  const simulate = input.simulate ?? null;
  const state: DepositReturnState = { status: 'returning', rounds: 0 };
  let retryAsked = false;
  setHandler(depositReturnStateQuery, () => ({ ...state }));
  setHandler(
    retryDepositReturnUpdate,
    () => {
      retryAsked = true;
      return 'returning' as const;
    },
    {
      validator: () => {
        if (state.status !== 'return_failed' || retryAsked) {
          throw ApplicationFailure.nonRetryable(
            `The deposit's return is ${state.status}; only a failed return waits for a retry.`,
            depositReturnRefusals.notFailed,
          );
        }
      },
    },
  );
  for (;;) {
    const round = state.rounds;
    try {
      await withOutcomeLookup(
        () => railActivities.sendDepositBack(input.depositId, round, simulate),
        () => databaseActivities.lookUpDepositReturn(input.depositId, round, simulate),
        () => publish('outcome_unknown'),
      );
      await recordExecuted('the return', () => databaseActivities.finishDepositReturn(input.depositId));
      break;
    } catch (error) {
      if (isCancellation(error)) throw error;
      log.warn('deposit return failed; waiting for an operator', { depositId: input.depositId, round });
      await databaseActivities.setDepositReturnStatus(input.depositId, 'return_failed');
      state.status = 'return_failed';
      publish('error');
      await waitForOperator(
        () => retryAsked,
        'a deposit return failed and awaits an operator retry',
        {
          depositId: input.depositId,
          round,
          command: `temporal workflow update execute --workflow-id ${workflowInfo().workflowId} --name retryDepositReturn`,
        },
        'operator-wait-reminders',
      );
      // Out of return_failed before the first await, so a second retry meanwhile is refused.
      retryAsked = false;
      state.status = 'returning';
      state.rounds += 1;
      await databaseActivities.setDepositReturnStatus(input.depositId, 'returning');
      publish('returning');
    }
  }
  state.status = 'returned';
  publish('returned');
  await condition(allHandlersFinished);
  return 'returned';
}
