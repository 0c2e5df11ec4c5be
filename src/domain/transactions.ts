// Rules of transactions that need no I/O: the statuses and the only transitions between them, the
// deposit deadline of each sender rail, what happens to a deposit (accepted, or returned and why),
// the deposit reference that matches an incoming deposit to its transaction, and the sandbox
// controls. Fiat to fiat (both legs), pay-ins (leg 1 alone) and payouts (leg 2 alone) share them.
import { Currency, Money, stablecoinOf } from './money';
import { depositWindowMs, type PaymentRail } from './rails';

/** Each rail's window is in its definition (./rails). */
export { depositWindowMs };

/**
 * fiat_to_fiat: fiat in, the stablecoin in between, fiat out. payin: fiat in, the stablecoin
 * credited to a wallet (leg 1). payout: the stablecoin (from a wallet, or sent in) out as fiat (leg 2).
 */
export const transactionTypes = ['fiat_to_fiat', 'payin', 'payout'] as const;
export type TransactionType = (typeof transactionTypes)[number];

export const transactionStatuses = [
  'awaiting_deposit',
  'processing',
  'completed',
  'cancelled',
  'failed',
  'refunded',
  'error',
  /** The receiving bank sent a completed payout back (SEPA/ACH return): the money waits for an operator. */
  'returned',
] as const;
export type TransactionStatus = (typeof transactionStatuses)[number];

/**
 * The only moves a transaction makes. Nothing goes back to `awaiting_deposit`, and `cancelled`, `failed` and
 * `refunded` have no way out. `error` waits for an operator, whose decision (retry the failed step, or
 * refund) puts it back to `processing`, where it was, to carry the decision out. `completed` has one: the
 * receiving bank returns the payout days later (`returned`), and an operator's decision ends that in
 * `completed` again (paid out once more) or `refunded` (workflows/payout-return.ts).
 */
export const transitions: Record<TransactionStatus, readonly TransactionStatus[]> = {
  awaiting_deposit: ['processing', 'cancelled', 'failed'],
  processing: ['completed', 'refunded', 'error'],
  error: ['processing'],
  completed: ['returned'],
  returned: ['completed', 'refunded'],
  cancelled: [],
  failed: [],
  refunded: [],
};

export function canTransition(from: TransactionStatus, to: TransactionStatus): boolean {
  return transitions[from].includes(to);
}

/** A status change the state machine does not allow: a bug of the caller, final wherever it happens. */
export class InvalidTransitionError extends Error {
  override name = 'InvalidTransactionTransition';
  constructor(id: string, from: TransactionStatus, to: TransactionStatus) {
    super(`transaction ${id} cannot go from ${from} to ${to}`);
  }
}

export function isFinal(status: TransactionStatus): boolean {
  return transitions[status].length === 0;
}

/**
 * The SPEC 6 event group of a type's events. Fiat to fiat is announced with pay-in events only
 * (SPEC 6: initiating it emits payin.created): its payout leg is internal, so no payout.* event.
 */
export function eventGroupOf(type: TransactionType): 'payin' | 'payout' {
  switch (type) {
    case 'fiat_to_fiat':
    case 'payin':
      return 'payin';
    case 'payout':
      return 'payout';
  }
}

/** The legs a type runs, in order (workflows/settlement-legs.ts); the last one completes the transaction. */
/** The legs a transaction's settlement may open, each once: the two conversions, a refund's sell-back and return. */
export const legKinds = ['fiat_to_stablecoin', 'stablecoin_to_fiat', 'sell_back', 'refund'] as const;
export type LegKind = (typeof legKinds)[number];
/** Where one leg stands: open while its provider works, then completed or rejected. */
export const legStatuses = ['processing', 'completed', 'rejected'] as const;
export type LegStatus = (typeof legStatuses)[number];
/** A deposit made to a transaction: accepted, or on its way back to the sender (returning, returned, return_failed). */
export const depositStatuses = ['accepted', 'returning', 'returned', 'return_failed'] as const;
export type DepositStatus = (typeof depositStatuses)[number];

export function legsOf(type: TransactionType): ReadonlyArray<'fiat_to_stablecoin' | 'stablecoin_to_fiat'> {
  switch (type) {
    case 'fiat_to_fiat':
      return ['fiat_to_stablecoin', 'stablecoin_to_fiat'];
    case 'payin':
      return ['fiat_to_stablecoin'];
    case 'payout':
      return ['stablecoin_to_fiat'];
  }
}

/** Why a transaction did not complete; shown as `failure_reason`. */
export const failureReasons = [
  /** No deposit arrived before the deposit deadline: `failed`. */
  'deposit_deadline_passed',
  /** The deposit was not the amount the transaction expects: returned in full, `refunded`. */
  'deposit_amount_mismatch',
  /** The receiver's bank refused the payout: the money went back to the sender, `refunded`. */
  'payout_rejected',
  /** Converting the deposit into the stablecoin kept failing: `error` until an operator decides. */
  'conversion_failed',
  /** Paying the receiver kept failing: `error` until an operator decides. */
  'payout_failed',
  /** Returning the money kept failing: `error` until an operator retries the refund. */
  'refund_failed',
  /** An operator chose to refund a transaction in `error`: `refunded`. */
  'refunded_by_operator',
  /**
   * A virtual-account deposit from someone other than the customer, on a EUR account that does not
   * accept third-party payments (SPEC 4.5): returned, `refunded`.
   */
  'third_party_sender',
  /** A virtual-account deposit on an account that is not approved (under review, rejected, cancelled): `refunded`. */
  'virtual_account_not_active',
  /**
   * The receiving bank returned the payout after completion: `returned` until an operator decides, then `refunded`
   * when the operator refunded it.
   */
  'payout_returned',
  /**
   * The payout's receiver was held as a potential sanctions-list match and an operator confirmed the match: the
   * payout never left, the money went back to the sender, `refunded` (docs/screening.md).
   */
  'receiver_sanctions_match',
] as const;
export type FailureReason = (typeof failureReasons)[number];

// ---- deposit deadline ----

export function depositDeadlineOf(createdAt: Date, senderRail: PaymentRail): Date {
  return new Date(createdAt.getTime() + depositWindowMs[senderRail]);
}

// ---- deposits ----

// ---- payouts returned after completion ----

/**
 * Why a receiving bank returned a payout: the ISO 20022 return reason codes (ExternalReturnReason1Code) the service
 * expects from SEPA and ACH returns (ACH R-codes are mapped to them by the rail integration). Others are refused:
 * a code nobody knows would reach partners and operators unexplained.
 */
export const payoutReturnReasons = {
  AC01: 'The account number is wrong (IBAN or account identifier invalid).',
  AC03: 'The creditor account number is invalid.',
  AC04: 'The account is closed.',
  AC06: 'The account is blocked.',
  AG01: 'The account cannot receive this kind of transfer.',
  AM05: 'Duplicate payment.',
  BE04: 'The beneficiary address is missing or wrong.',
  MD07: 'The beneficiary is deceased.',
  MS02: 'Not specified: the beneficiary asked for the return.',
  MS03: 'Not specified: the bank returned it.',
  RC01: 'The bank identifier (BIC, routing number) is wrong.',
  RR01: 'Regulatory reason: missing debtor account or identification.',
} as const;
export type PayoutReturnReason = keyof typeof payoutReturnReasons;
export const payoutReturnReasonCodes = Object.keys(payoutReturnReasons) as PayoutReturnReason[];

/** Why a payout return is refused, for the API's error codes. */
export type PayoutReturnRefusal =
  | { code: 'payin_cannot_be_returned'; message: string }
  | { code: 'payout_return_not_allowed'; message: string }
  | { code: 'return_amount_exceeds_payout'; message: string };

/**
 * The rule of a reported return: only a transaction with a payout leg (fiat to fiat, payout), only once it is
 * `completed` (its money left), and never more than was paid out (less is fine: the banks may keep charges).
 */
export function payoutReturnRefusal(
  row: { id: string; type: TransactionType; status: TransactionStatus; receiverCurrency: string },
  paidOut: Money,
  returned: Money,
): PayoutReturnRefusal | null {
  if (!legsOf(row.type).includes('stablecoin_to_fiat')) {
    return {
      code: 'payin_cannot_be_returned',
      message: `Transaction ${row.id} is a pay-in: it paid nothing out to a bank, so nothing can be returned.`,
    };
  }
  if (row.status !== 'completed') {
    return {
      code: 'payout_return_not_allowed',
      message: `Transaction ${row.id} is ${row.status}; only a completed transaction's payout can be returned.`,
    };
  }
  if (returned.currency !== paidOut.currency || returned.amount.gt(paidOut.amount)) {
    return {
      code: 'return_amount_exceeds_payout',
      message: `The return (${returned.toString()} ${returned.currency}) exceeds what was paid out (${paidOut.toString()} ${paidOut.currency}).`,
    };
  }
  return null;
}

/**
 * What happens to a deposit that names a transaction:
 * - settle: the transaction takes it and settles (`processing`, then `completed`).
 * - refund: the transaction takes it (`processing`) and sends it all back (`refunded`,
 *   failure_reason deposit_amount_mismatch).
 * - return: the transaction no longer waits for a deposit (cancelled, deadline passed, already
 *   funded): the deposit goes back on its own and the transaction's status does not change.
 */
export type DepositDecision =
  | { action: 'settle' }
  | { action: 'refund'; reason: 'amount_mismatch' }
  | { action: 'return'; reason: 'not_awaiting_deposit' };

/**
 * The deposit rule. Only a transaction in `awaiting_deposit` takes a deposit, and only exactly the
 * amount it expects (the sender amount, fees included) settles: any other amount is returned in
 * full. Settling a different amount would change what the receiver gets at a rate nobody agreed to;
 * a full return is predictable for the sender, the receiver and the partner.
 */
export function decideDeposit(status: TransactionStatus, expected: Money, received: Money): DepositDecision {
  if (status !== 'awaiting_deposit') return { action: 'return', reason: 'not_awaiting_deposit' };
  if (!received.equals(expected)) return { action: 'refund', reason: 'amount_mismatch' };
  return { action: 'settle' };
}

// ---- deposit reference ----

/** Crockford base32: no I, L, O or U, so a reference read aloud or retyped survives. */
const referenceAlphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const REFERENCE_PREFIX = 'TX';
const REFERENCE_BODY_LENGTH = 10;

/**
 * A deposit reference from random bytes (at least 10): `TX` and 10 Crockford base32 characters,
 * e.g. `TX7K2M9QH4RD` (50 bits; a unique index makes a collision a retry, never a mix-up). Short
 * enough for every rail's payment-reference field (pix txid, SPEI concepto, SEPA remittance, wire memo).
 */
export function depositReferenceFrom(random: Uint8Array): string {
  if (random.length < REFERENCE_BODY_LENGTH)
    throw new Error(`a deposit reference needs ${REFERENCE_BODY_LENGTH} random bytes`);
  let body = '';
  for (let index = 0; index < REFERENCE_BODY_LENGTH; index += 1) {
    body += referenceAlphabet[(random[index] as number) % 32];
  }
  return REFERENCE_PREFIX + body;
}

/**
 * A reference as a bank statement may carry it: any case, with spaces or hyphens, and Crockford's
 * look-alikes (O -> 0, I and L -> 1). Returns the canonical form, or null when it cannot be one.
 */
export function normaliseDepositReference(text: string): string | null {
  const compact = text.toUpperCase().replace(/[\s-]/g, '').replace(/^TX/, '');
  const body = compact.replace(/O/g, '0').replace(/[IL]/g, '1');
  if (body.length !== REFERENCE_BODY_LENGTH || [...body].some((char) => !referenceAlphabet.includes(char))) return null;
  return REFERENCE_PREFIX + body;
}

// ---- sandbox controls ----

/**
 * Sandbox only, sent with a simulated deposit, so partners can see every branch:
 * - payout_rejected: the receiver's bank refuses the payout; the money goes back to the sender (`refunded`).
 * - conversion_error: converting the deposit into the stablecoin keeps failing until retries run out (`error`).
 * - payout_error: paying the receiver keeps failing until retries run out (`error`).
 * - payout_timeout_after_execution: the payout is made but every answer to it is lost; asked by its
 *   idempotency key, the rail reports it made, so the transaction completes (paid once).
 * - payout_outcome_unknown: the payout is made, its answer is lost and the rail cannot say what became of it:
 *   the transaction waits, then `error` with a refund refused (the receiver may be paid); an operator's
 *   `retry` asks again, and the rail then reports the payout made: `completed`.
 * A simulated failure affects the first run of its step only: an operator's `retry` then succeeds.
 */
export const sandboxSimulations = [
  'payout_rejected',
  'conversion_error',
  'payout_error',
  'payout_timeout_after_execution',
  'payout_outcome_unknown',
  'return_error',
  // With the bank simulator (docs/pix.md, docs/liquidity-provider.md): the bank notifies the payment twice, or late;
  // a leg's firm price jumps beyond the band.
  'pix_notified_twice',
  'pix_late_notification',
  'fx_price_jump',
  // The payout's receiver screened as a potential sanctions-list match whatever its name: the payout is held for a
  // review (docs/screening.md).
  'screening_review',
  // With the ISO 20022 bank simulator (docs/iso20022.md): the SEPA or wire credit notified twice by camt.054; the
  // payout returned by the bank (AC04) after the transaction completed.
  'iso_credit_notified_twice',
  'iso_payout_returned',
] as const;
export type SandboxSimulation = (typeof sandboxSimulations)[number];

// ---- virtual-account deposits ----

/**
 * A name as compared for the third-party rule: accents and case removed (NFKD, combining marks
 * dropped), punctuation read as a space, whitespace collapsed. "José  da Silva-Neto" and
 * "JOSE DA SILVA NETO" compare equal.
 */
export function comparableName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/**
 * What a deposit on a virtual account does (SPEC 4.5):
 * - the account is not approved (under review, rejected, cancelled): returned (virtual_account_not_active);
 * - a EUR account without accepts_third_party_payments takes only the holder's own deposits: the
 *   sender's name must be the customer's full name (a business's legal name), compared with
 *   comparableName (case, accents, punctuation and spacing ignored; every word, in order):
 *   otherwise returned (third_party_sender);
 * - otherwise it settles: converted and credited to the account's wallet.
 */
export function decideVirtualAccountDeposit(account: {
  status: string;
  senderCurrency: string;
  acceptsThirdPartyPayments: boolean | null;
  holderName: string;
  senderName: string;
}): { action: 'settle' } | { action: 'refund'; reason: 'third_party_sender' | 'virtual_account_not_active' } {
  if (account.status !== 'approved') return { action: 'refund', reason: 'virtual_account_not_active' };
  if (
    account.senderCurrency === 'EUR' &&
    account.acceptsThirdPartyPayments !== true &&
    comparableName(account.senderName) !== comparableName(account.holderName)
  ) {
    return { action: 'refund', reason: 'third_party_sender' };
  }
  return { action: 'settle' };
}

// ---- a transaction's amounts ----

/** A decimal column as the database client gives it (a Decimal or a decimal string). */
type DecimalColumn = { toString(): string };

/** The amount columns of a stored transaction. */
export interface TransactionAmountColumns {
  senderCurrency: Currency;
  senderAmount: DecimalColumn;
  stablecoinCurrency: Currency | null;
  stablecoinAmount: DecimalColumn | null;
  receiverCurrency: Currency;
  receiverAmount: DecimalColumn;
  serviceFee: DecimalColumn;
  partnerFee: DecimalColumn;
  networkFee: DecimalColumn;
}

const moneyOf = (currency: Currency, value: DecimalColumn) => Money.of(currency, value.toString());

/** The amounts of a stored transaction in the money type. */
export function amountsOf(row: TransactionAmountColumns) {
  const service = moneyOf(row.senderCurrency, row.serviceFee);
  const partner = moneyOf(row.senderCurrency, row.partnerFee);
  const network = moneyOf(row.senderCurrency, row.networkFee);
  const total = service.plus(partner).plus(network);
  const sender = moneyOf(row.senderCurrency, row.senderAmount);
  return {
    sender,
    stablecoin: moneyOf(stablecoinOf(row.stablecoinCurrency), row.stablecoinAmount as DecimalColumn),
    receiver: moneyOf(row.receiverCurrency, row.receiverAmount),
    fees: { service, partner, network, total },
    /** What is converted: the sender amount minus every fee. */
    converted: sender.minus(total),
  };
}
