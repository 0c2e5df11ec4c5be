// The event types of SPEC 6 and the resource type each names. Events are written by recordEvent
// (src/persistence/events.ts), in the transaction of the change they announce.
export const eventTypes = [
  'payin.created',
  'payin.processing',
  'payin.completed',
  'payin.cancelled',
  'payin.failed',
  'payin.error',
  'payin.refunded',
  /** Beyond SPEC 6's 29: a completed transaction whose payout the receiving bank returned (fiat to fiat). */
  'payin.returned',
  /**
   * Beyond SPEC 6's 29: the payout of a fiat-to-fiat transaction held before it leaves, its receiver a potential
   * sanctions-list match under review (docs/screening.md); the status stays `processing`.
   */
  'payin.held',
  'payout.created',
  'payout.processing',
  'payout.completed',
  'payout.cancelled',
  'payout.failed',
  'payout.error',
  'payout.refunded',
  /** Beyond SPEC 6's 29: a completed payout the receiving bank returned. */
  'payout.returned',
  /** Beyond SPEC 6's 29: a payout held before it leaves, its receiver under sanctions review; still `processing`. */
  'payout.held',
  'walletTransfer.created',
  'walletTransfer.completed',
  'walletTransfer.failed',
  'customer.created',
  'customer.approved',
  'customer.under_review',
  'customer.rejected',
  'customer.partially_rejected',
  'external_account.created',
  'external_account.approved',
  'external_account.rejected',
  /** Beyond SPEC 6's 29: a potential sanctions-list match an operator reviews (docs/screening.md). */
  'external_account.under_review',
  'virtual_account.created',
  'virtual_account.approved',
  'virtual_account.rejected',
  'virtual_account.cancelled',
] as const;

export type EventType = (typeof eventTypes)[number];

/** `customer.created` -> `customer`: the resource type named in the payload's `event` field. */
export function resourceTypeOf(type: EventType): string {
  return type.slice(0, type.indexOf('.'));
}
