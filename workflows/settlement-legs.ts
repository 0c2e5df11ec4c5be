// The two legs of a settlement, each a child workflow of the transaction's settlement so operators
// see them apart in the Temporal UI (transaction-<id>-fiat-to-stablecoin, -stablecoin-to-fiat):
//   leg 1 turns the deposited fiat into the stablecoin, held in transit on the transaction's wallet;
//   leg 2 turns that stablecoin into the receiver's fiat and pays the external account.
// A pay-in is leg 1 alone and a payout leg 2 alone (`completesTransaction`). Each leg calls the
// outside system (idempotency key transaction + leg), then records the result and its ledger
// postings in one database transaction. A leg whose retries run out fails; the parent decides.
import { proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { boundedActivityOptions } from './retry-policies';
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

/** What operators find a leg by (README "Operating workflows"). */
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

/** Leg 1: fiat -> stablecoin, into the service-managed wallet (in transit). */
export async function fiatToStablecoinLegWorkflow(input: LegInput): Promise<'completed'> {
  publishStarted(input);
  const { providerReference } = await railActivities.convertFiatToStablecoin(input.transactionId, input.round);
  await databaseActivities.completeFiatToStablecoin(input.transactionId, providerReference, input.completesTransaction);
  publish(input, 'completed');
  return 'completed';
}

/** Leg 2: stablecoin -> fiat, paid to the external account; `rejected` when the receiving bank refuses. */
export async function stablecoinToFiatLegWorkflow(input: LegInput): Promise<PayoutLegResult> {
  publishStarted(input);
  const payout = await railActivities.payOutTransaction(input.transactionId, input.round);
  if (payout.status === 'rejected') {
    await databaseActivities.recordPayoutRejection(input.transactionId, payout.providerReference, payout.reason);
    publish(input, 'rejected');
    return { outcome: 'rejected', reason: payout.reason, providerReference: payout.providerReference };
  }
  await databaseActivities.completeStablecoinToFiat(
    input.transactionId,
    payout.providerReference,
    input.completesTransaction,
  );
  publish(input, 'completed');
  return { outcome: 'completed' };
}
