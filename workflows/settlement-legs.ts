// The two legs of a settlement, each a child workflow of the transaction's settlement so operators
// see them apart in the Temporal UI (transaction-<id>-fiat-to-stablecoin, -stablecoin-to-fiat):
//   leg 1 turns the deposited fiat into the stablecoin, held in transit on the transaction's wallet;
//   leg 2 turns that stablecoin into the receiver's fiat and pays the external account.
// A pay-in is leg 1 alone and a payout leg 2 alone (`completesTransaction`). Each leg calls the
// outside system (idempotency key transaction + leg), then records the result and its ledger
// postings in one database transaction. A call whose retries run out is looked up under the same key
// (provider-outcome.ts): made -> the leg goes on as if the answer had come; never made -> the leg
// fails and the parent decides; unknown -> the leg waits (search attribute ResourceStatus
// `outcome_unknown`), then fails with ProviderOutcomeUnknown, which the parent will not refund. A leg's coin the
// chain refuses for good (chainCoinRefusals) fails the leg at once, unasked: nothing was reserved under its key.
import { proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { boundedActivityOptions } from './retry-policies';
import { recordExecuted, withOutcomeLookup } from './provider-outcome';
import type { RailStep } from '../activities/transactions';
import type { OperationLookup } from '../src/providers/unavailable';
import {
  CustomerIdAttribute,
  PartnerIdAttribute,
  ResourceIdAttribute,
  ResourceStatusAttribute,
} from '../src/temporal/search-attributes';

export interface LegInput {
  transactionId: string;
  partnerId: string;
  customerId: string;
  /** 0, then one more for each operator retry of this leg (the sandbox's simulated failures hit round 0 only). */
  round: number;
  /** True when this leg's completion is the transaction's (pay-in: leg 1; fiat to fiat and payout: leg 2). */
  completesTransaction: boolean;
  /** Started with its search attributes (legSearchAttributes): no upsert of them at the start. */
  searchAttributesAtStart?: boolean;
}

export type PayoutLegResult =
  { outcome: 'completed' } | { outcome: 'rejected'; reason: string; providerReference: string };

/**
 * Calls to the exchange and payout rails: a provider that keeps failing should reach an operator soon, so
 * 6 attempts over about 30 s, then the leg fails and the transaction goes to `error`.
 */
export const railActivities = proxyActivities<Activities>({
  ...boundedActivityOptions,
  startToCloseTimeout: '1 minute',
  retry: { ...boundedActivityOptions.retry, maximumAttempts: 6 },
});

/** Database steps: the project's bounded policy; a missing row or an impossible transition fails at once. */
export const databaseActivities = proxyActivities<Activities>(boundedActivityOptions);

/** What operators find a leg by (docs/operations.md "Operating workflows"). */
export function legSearchAttributes(input: LegInput, status: string) {
  return [
    { key: PartnerIdAttribute, value: input.partnerId },
    { key: CustomerIdAttribute, value: input.customerId },
    { key: ResourceIdAttribute, value: input.transactionId },
    { key: ResourceStatusAttribute, value: status },
  ];
}

function publish(input: LegInput, status: string): void {
  upsertSearchAttributes(legSearchAttributes(input, status));
}

/** The leg's first status, unless its start carried it. */
function publishStarted(input: LegInput): void {
  if (!input.searchAttributesAtStart) publish(input, 'processing');
}

/**
 * A rail step's call, looked up under its key when its attempts run out; `onUnknown` shows that the provider cannot
 * tell (a leg: its ResourceStatus `outcome_unknown`). The parent workflow's refund step uses it too.
 */
export function railCall<T extends { providerReference: string }>(
  transactionId: string,
  step: RailStep,
  round: number,
  call: () => Promise<T>,
  onUnknown: () => void,
): Promise<T> {
  return withOutcomeLookup(
    call,
    // The lookup answers the step's outcome as the call would have (RailStepOutcome).
    async () => (await databaseActivities.lookUpRailOperation(transactionId, step, round)) as OperationLookup<T>,
    onUnknown,
  );
}

/** Leg 1: fiat -> stablecoin, into the service-managed wallet (in transit). */
export async function fiatToStablecoinLegWorkflow(input: LegInput): Promise<'completed'> {
  publishStarted(input);
  const { providerReference } = await railCall(
    input.transactionId,
    'fiat_to_stablecoin',
    input.round,
    () => railActivities.convertFiatToStablecoin(input.transactionId, input.round),
    () => publish(input, 'outcome_unknown'),
  );
  await recordExecuted('the conversion', () =>
    databaseActivities.completeFiatToStablecoin(input.transactionId, providerReference, input.completesTransaction),
  );
  publish(input, 'completed');
  return 'completed';
}

/** Leg 2: stablecoin -> fiat, paid to the external account; `rejected` when the receiving bank refuses. */
export async function stablecoinToFiatLegWorkflow(input: LegInput): Promise<PayoutLegResult> {
  publishStarted(input);
  const payout = await railCall(
    input.transactionId,
    'stablecoin_to_fiat',
    input.round,
    () => railActivities.payOutTransaction(input.transactionId, input.round),
    () => publish(input, 'outcome_unknown'),
  );
  if (payout.status === 'rejected') {
    await databaseActivities.recordPayoutRejection(input.transactionId, payout.providerReference, payout.reason);
    publish(input, 'rejected');
    return { outcome: 'rejected', reason: payout.reason, providerReference: payout.providerReference };
  }
  await recordExecuted('the payout', () =>
    databaseActivities.completeStablecoinToFiat(
      input.transactionId,
      payout.providerReference,
      input.completesTransaction,
    ),
  );
  publish(input, 'completed');
  return { outcome: 'completed' };
}
