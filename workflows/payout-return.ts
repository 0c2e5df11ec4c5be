// A payout the receiving bank returned after completion (id: payout-return-<transactionId>), started with the return's
// recording (writeThenStart in src/services/transactions/payout-returns.ts: the return row, the posting
// `transaction:<id>:payout_returned` that brings the money into fiat_clearing, completed -> returned with its event).
// What becomes of the money is an operator's decision, the update `resolvePayoutReturn`:
//
//   returned --repay--> completed   paid out again (FiatRails.payOut, key `<id>:repay:<n>`, n = 1, 2, ...) to the
//                                   same or another approved external account of the customer on the same rail;
//                                   posting `transaction:<id>:repaid` (clearing -> settlement). Event
//                                   payout.completed (payin.completed for fiat to fiat).
//   returned --refund-> refunded    payouts from a wallet only: the exchange converts the returned fiat back into the
//                                   stablecoin at its rate of the moment (FiatRails.convertToStablecoin, key
//                                   `<id>:payout_return_refund`), credited to the wallet; posting
//                                   `transaction:<id>:payout_return_refund`. Event payout.refunded, failure_reason
//                                   payout_returned.
//
// The status stays `returned` while a decision is carried out (ResourceStatus `repaying`, `refunding`). A repay the
// bank rejects, or a call that failed and the provider says was never made, leaves it `returned` and the workflow
// waits for the next decision (a repay then uses the next key). A call whose outcome the provider cannot tell
// (provider-outcome.ts, about two hours of asking) also leaves it `returned`, ResourceStatus `outcome_unknown`: only
// the same decision is accepted then, which asks again under the same key, so the money never leaves twice.
// Refunds of fiat to fiat (a cross-currency return on the sender's rail) and of payouts whose stablecoin came in on
// chain are refused (PayoutReturnRefundNotSupported): no FiatRails operation makes them; an operator repays, to
// another account if needed, or settles it outside (docs/money-safety.md).
// Nobody deciding: the workflow waits as long as it takes (a Temporal timer per day, each logging a reminder with
// the command), the money visible on fiat_clearing and the transaction listed by ResourceStatus="returned". No
// automatic decision: each option moves money on a judgment (is the account fixed? does the sender want it back?).
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  defineQuery,
  defineUpdate,
  isCancellation,
  currentUpdateInfo,
  log,
  patched,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { TransactionType } from '../src/domain/transactions';
import { isUuid } from '../src/domain/uuid';
import { payoutReturnRefusals, providerOutcomeFailures } from '../src/temporal/failure-types';
import {
  CustomerIdAttribute,
  PartnerIdAttribute,
  ResourceIdAttribute,
  ResourceStatusAttribute,
} from '../src/temporal/search-attributes';
import { waitForOperator } from './operator-wait';
import { failureOfType, recordExecuted, withOutcomeLookup } from './provider-outcome';
import { databaseActivities, railActivities } from './settlement-legs';

/** Refusals of resolvePayoutReturn, each an ApplicationFailure type the operator sees. */
export { payoutReturnRefusals };

export interface PayoutReturnInput {
  transactionId: string;
  partnerId: string;
  customerId: string;
  type: TransactionType;
  /** A payout debited from a wallet: the only kind a refund can give back (to that wallet). */
  refundable: boolean;
}

export interface PayoutReturnDecision {
  action: 'repay' | 'refund';
  /** repay only: another approved external account of the customer on the same rail (default: the one paid). */
  external_account_id?: string;
  /** Why (kept with the return); 1-500 characters. */
  reason: string;
  /** Who decides (the audit trail, docs/operations.md "Audit trail"); 1-200 characters. */
  operator?: string;
}

export type PayoutReturnPhase = 'returned' | 'repaying' | 'refunding' | 'outcome_unknown' | 'completed' | 'refunded';

export interface PayoutReturnState {
  phase: PayoutReturnPhase;
  /** True while a decision is awaited. */
  awaitingOperator: boolean;
  /** Repays asked for so far (the key of the last one ends with this number). */
  repays: number;
  /** Why the last decision did not complete (rejected, failed, unknown), or null. */
  lastFailure: string | null;
  /** A call whose outcome the provider cannot tell: only this decision is accepted, to ask again. */
  unresolved: { action: 'repay'; round: number; externalAccountId: string | null } | { action: 'refund' } | null;
  refundable: boolean;
}

export const resolvePayoutReturnUpdate = defineUpdate<
  { action: PayoutReturnDecision['action']; accepted: true },
  [PayoutReturnDecision]
>('resolvePayoutReturn');
export const payoutReturnStateQuery = defineQuery<PayoutReturnState>('payoutReturnState');

/** Provider calls: 6 attempts over about 30 s (as the settlement's legs), then the provider is asked. */

/** The shape of a decision; throws InvalidPayoutReturnDecision naming what is wrong. */
export function checkPayoutReturnDecision(input: unknown): PayoutReturnDecision {
  const refuse = (message: string) => ApplicationFailure.nonRetryable(message, payoutReturnRefusals.invalidDecision);
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw refuse('the input must be an object');
  const { action, external_account_id: account, reason, operator, ...rest } = input as Record<string, unknown>;
  if (Object.keys(rest).length > 0) throw refuse(`unknown fields: ${Object.keys(rest).join(', ')}`);
  if (action !== 'repay' && action !== 'refund') throw refuse('action must be "repay" or "refund"');
  if (typeof reason !== 'string' || reason.trim().length === 0 || reason.length > 500)
    throw refuse('reason must be a non-empty string of at most 500 characters');
  if (account !== undefined && (action !== 'repay' || !isUuid(account)))
    throw refuse('external_account_id is for a repay only, and must be an external account id (a UUID)');
  if (operator !== undefined && (typeof operator !== 'string' || !operator.trim() || operator.length > 200))
    throw refuse('operator must be a non-empty string of at most 200 characters');
  return {
    action,
    reason: reason.trim(),
    ...(account !== undefined ? { external_account_id: account as string } : {}),
    ...(typeof operator === 'string' ? { operator: operator.trim() } : {}),
  };
}

export async function payoutReturnWorkflow(input: PayoutReturnInput): Promise<'completed' | 'refunded'> {
  const id = input.transactionId;
  const state: PayoutReturnState = {
    phase: 'returned',
    awaitingOperator: true,
    repays: 0,
    lastFailure: null,
    unresolved: null,
    refundable: input.refundable,
  };
  let decision: PayoutReturnDecision | null = null;

  const publish = (phase: PayoutReturnPhase) => {
    state.phase = phase;
    upsertSearchAttributes([
      { key: PartnerIdAttribute, value: input.partnerId },
      { key: CustomerIdAttribute, value: input.customerId },
      { key: ResourceIdAttribute, value: id },
      { key: ResourceStatusAttribute, value: phase },
    ]);
  };

  setHandler(payoutReturnStateQuery, () => ({ ...state }));
  setHandler(
    resolvePayoutReturnUpdate,
    async (request) => {
      const checked = checkPayoutReturnDecision(request);
      if (checked.action === 'repay' && checked.external_account_id) {
        try {
          await databaseActivities.checkRepayDestination(id, checked.external_account_id);
        } catch (error) {
          // The refusal reaches the operator as the update's failure; the workflow keeps waiting.
          const refused = failureOfType(error, [payoutReturnRefusals.destinationRefused]);
          throw ApplicationFailure.nonRetryable(
            refused ?? `the external account could not be checked: ${(error as Error).message}`,
            payoutReturnRefusals.destinationRefused,
          );
        }
      }
      // The audit trail (docs/operations.md "Audit trail"): who decided, on what, why; before the decision is
      // taken, so that a decision is never carried out unrecorded (the update fails instead when it cannot be).
      if (patched('operator-audit-trail')) {
        await databaseActivities.recordOperatorAction({
          workflowId: workflowInfo().workflowId,
          updateId: currentUpdateInfo()?.id ?? '',
          resourceType: 'transaction_payout_return',
          resourceId: id,
          action: checked.action,
          operator: checked.operator ?? 'unnamed',
          reason: checked.reason,
          details: checked.external_account_id ? { external_account_id: checked.external_account_id } : {},
        });
      }
      // Checked again after the await: another decision may have been taken meanwhile.
      if (decision !== null || !state.awaitingOperator) {
        throw ApplicationFailure.nonRetryable(
          'another decision was taken meanwhile',
          payoutReturnRefusals.notAwaitingDecision,
        );
      }
      decision = checked;
      state.awaitingOperator = false;
      return { action: checked.action, accepted: true as const };
    },
    {
      validator: (request) => {
        const checked = checkPayoutReturnDecision(request);
        if (!state.awaitingOperator || decision !== null) {
          throw ApplicationFailure.nonRetryable(
            `the return is being ${state.phase === 'refunding' ? 'refunded' : state.phase === 'repaying' ? 'repaid' : state.phase}; no decision is awaited`,
            payoutReturnRefusals.notAwaitingDecision,
          );
        }
        if (checked.action === 'refund' && !state.refundable) {
          throw ApplicationFailure.nonRetryable(
            input.type === 'payout'
              ? 'no refund for a payout whose stablecoin came in on chain: repay it, or settle it outside'
              : 'no refund for fiat to fiat (a return in the sender’s currency on its rail): repay it, or settle it outside',
            payoutReturnRefusals.refundNotSupported,
          );
        }
        const pending = state.unresolved;
        if (
          pending &&
          (pending.action !== checked.action ||
            (pending.action === 'repay' &&
              checked.external_account_id !== undefined &&
              checked.external_account_id !== pending.externalAccountId))
        ) {
          throw ApplicationFailure.nonRetryable(
            `the last ${pending.action} may have been made (the provider cannot tell): only the same decision, which asks again`,
            payoutReturnRefusals.outcomeUnknown,
          );
        }
      },
    },
  );

  const unknown = (error: unknown) => failureOfType(error, [providerOutcomeFailures.unknown]) !== null;

  async function repay(chosen: PayoutReturnDecision): Promise<boolean> {
    const pending = state.unresolved?.action === 'repay' ? state.unresolved : null;
    const round = pending ? pending.round : (state.repays += 1);
    const account = pending ? pending.externalAccountId : (chosen.external_account_id ?? null);
    publish('repaying');
    try {
      const paid = await withOutcomeLookup(
        () => railActivities.repayReturnedPayout(id, round, account),
        () => databaseActivities.lookUpRepay(id, round, account),
        () => publish('outcome_unknown'),
      );
      state.unresolved = null;
      if (paid.status === 'rejected') {
        state.lastFailure = `repay ${round} rejected by the bank: ${paid.reason}`;
        return false;
      }
      await recordExecuted('the repay', () =>
        databaseActivities.completeRepay(id, round, paid.providerReference, chosen.reason),
      );
      return true;
    } catch (error) {
      if (isCancellation(error)) throw error;
      if (unknown(error)) state.unresolved = { action: 'repay', round, externalAccountId: account };
      state.lastFailure = `repay ${round}: ${(error as Error).message}`;
      return false;
    }
  }

  async function refund(chosen: PayoutReturnDecision): Promise<boolean> {
    publish('refunding');
    try {
      // Priced once and kept in the history: a retried conversion asks for the same amount under the same key.
      const { stablecoin } = await databaseActivities.priceReturnRefund(id);
      const converted = await withOutcomeLookup(
        () => railActivities.convertReturnedPayout(id, stablecoin),
        () => databaseActivities.lookUpReturnRefund(id),
        () => publish('outcome_unknown'),
      );
      state.unresolved = null;
      await recordExecuted('the refund’s conversion', () =>
        databaseActivities.finishReturnRefund(id, converted.providerReference, stablecoin, chosen.reason),
      );
      return true;
    } catch (error) {
      if (isCancellation(error)) throw error;
      if (unknown(error)) state.unresolved = { action: 'refund' };
      state.lastFailure = `refund: ${(error as Error).message}`;
      return false;
    }
  }

  for (;;) {
    state.awaitingOperator = true;
    await waitForOperator(() => decision !== null, 'a returned payout awaits an operator decision', {
      transactionId: id,
      command: `temporal workflow update execute --workflow-id payout-return-${id} --name resolvePayoutReturn --input '{"action":"repay","reason":"..."}'`,
    });
    const chosen = decision as unknown as PayoutReturnDecision;
    log.info('operator decided on a returned payout', { transactionId: id, action: chosen.action });
    const done = chosen.action === 'repay' ? await repay(chosen) : await refund(chosen);
    decision = null;
    if (done) {
      state.awaitingOperator = false;
      publish(chosen.action === 'repay' ? 'completed' : 'refunded');
      break;
    }
    log.warn('the decision on a returned payout did not complete; waiting for the next', {
      transactionId: id,
      failure: state.lastFailure,
    });
    publish(state.unresolved ? 'outcome_unknown' : 'returned');
  }
  await condition(allHandlersFinished);
  return state.phase as 'completed' | 'refunded';
}
