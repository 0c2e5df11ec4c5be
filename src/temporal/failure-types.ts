// ApplicationFailure types shared by activities (which throw them) and workflows (which must not retry them).
// Deterministic module: workflows import it.

/** The row an activity works on does not exist: retrying cannot make it appear. */
export const RESOURCE_NOT_FOUND = 'ResourceNotFound';

/**
 * A refund that could pay twice: the payout it would undo was made, or the rail cannot say (the refund activity asks
 * it first). The settlement waits in `error` and refuses the operator's refund while either holds.
 */
export const refundRefusals = {
  payoutExecuted: 'PayoutExecuted',
  payoutOutcomeUnknown: 'PayoutOutcomeUnknown',
  conversionOutcomeUnknown: 'ConversionOutcomeUnknown',
} as const;

/** Failure types a step ends with when undoing it could pay twice (workflows/provider-outcome.ts). */
export const providerOutcomeFailures = {
  /** The provider cannot say whether the operation was made, after every poll. */
  unknown: 'ProviderOutcomeUnknown',
  /** The provider made the operation but recording it kept failing: a retry records it. */
  executedNotRecorded: 'ProviderExecutedNotRecorded',
} as const;

/**
 * A leg's coin the chain refuses for good (the send would revert; nothing was reserved under its key, so nothing can be
 * in flight): the leg fails at once, without a lookup, and an operator's retry sends it under the same key.
 */
export const chainCoinRefusals = {
  /** Leg 2's coin, before the payout was asked: nothing moved for the leg, so a refund may follow. */
  rejected: 'ChainTransferRejected',
  /** Leg 1's coin, after the exchange made the conversion: a retry moves the coin only; no refund (the coin was bought). */
  convertedCoinRejected: 'ConvertedCoinRejected',
} as const;

/** Refusals of a returned payout's operator update resolvePayoutReturn (workflows/payout-return.ts). */
export const payoutReturnRefusals = {
  invalidDecision: 'InvalidPayoutReturnDecision',
  notAwaitingDecision: 'PayoutReturnNotAwaitingDecision',
  refundNotSupported: 'PayoutReturnRefundNotSupported',
  outcomeUnknown: 'PayoutReturnOutcomeUnknown',
  /** The repay's account (checked by an activity): not the customer's, not approved, or on another rail. */
  destinationRefused: 'RepayDestinationRefused',
} as const;
