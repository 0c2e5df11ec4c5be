// Quote pricing: the locked terms of a quote (rates and fee parameters) and the one function that
// turns terms plus an amount on one side into every amount of the quote. Used when a quote is
// created with an amount and, for rate-only quotes, when the transaction gives its amount. Pure.
//
// Rules (also in the OpenAPI description of the quote operations):
// - Every fee is in the sender currency and is computed on the gross sender amount S:
//     partner fee = roundUp(S * percentage_fee / 10000) + flat_fee
//     service fee = roundUp(S * QUOTE_SERVICE_FEE_BPS / 10000)
//     network fee = one on-chain transfer of the stablecoin, locked at quote time
//   and the fees are deducted before conversion: converted = S - (service + partner + network).
// - Rounding always favours the service, to the minor unit of the currency: what the customer
//   receives rounds down, what the customer pays (fees, a sender amount computed from a receiver
//   amount) rounds up. Locked rates are rounded down to 8 decimal places.
// - Amount on the sender side:   stablecoin = roundDown(converted * sender_quotation)
//                                receiver   = roundDown(stablecoin * receiver_quotation)
//   (pay-in and payout have one leg: receiver = roundDown(converted * quotation)).
// - Amount on the receiver side: stablecoin = roundUp(receiver / receiver_quotation)
//                                converted  = roundUp(stablecoin / sender_quotation)
//   and S is the smallest sender amount whose converted amount (S minus its fees) is at least
//   that; it is then exactly that, so S = converted + fees holds to the minor unit.
import { Currency, Decimal, DecimalValue, Money, roundTo } from './money';
import type { PaymentRail } from './rails';

export const quoteTypes = ['payin', 'payout', 'fiat_to_fiat'] as const;
export type QuoteType = (typeof quoteTypes)[number];
export const quoteStatuses = ['active', 'expired', 'used'] as const;
export type QuoteStatus = (typeof quoteStatuses)[number];
export type QuoteSide = 'sender' | 'receiver';

/** Locked rates keep this many decimal places, rounded down. */
export const RATE_DECIMALS = 8;
/** Largest partner percentage fee accepted, in basis points (10%). */
export const MAX_PARTNER_FEE_BPS = 1000;
/** Largest service fee the configuration accepts, in basis points (10%). */
export const MAX_SERVICE_FEE_BPS = 1000;
/** Pay-ins are funded on virtual accounts, which hold USD or EUR (SPEC 2.7). */
export const payinCurrencies: readonly Currency[] = ['USD', 'EUR'];

export interface QuoteLeg {
  currency: Currency;
  paymentRail: PaymentRail;
}

export interface PartnerFee {
  /** Basis points of the sender amount: 150 = 1.5%. */
  percentageBps: number;
  /** In the sender currency. */
  flat: Money;
}

/** Everything a quote locks at creation; amounts are derived from these with priceQuote. */
export interface QuoteTerms {
  type: QuoteType;
  sender: QuoteLeg;
  /** fiat_to_fiat only: the intermediary stablecoin and its blockchain. */
  stablecoin: QuoteLeg | null;
  receiver: QuoteLeg;
  /**
   * Units of the next currency per unit of the previous one along the path: pay-in and payout
   * [sender -> receiver]; fiat_to_fiat [sender -> stablecoin, stablecoin -> receiver].
   */
  rates: Decimal[];
  serviceFeeBps: number;
  partnerFee: PartnerFee | null;
  /** One on-chain transfer of the stablecoin, in the sender currency. */
  networkFee: Money;
}

export interface QuoteFees {
  service: Money;
  partner: Money;
  network: Money;
  total: Money;
}

export interface QuoteAmounts {
  fixedSide: QuoteSide;
  sender: Money;
  /** fiat_to_fiat only. */
  stablecoin: Money | null;
  receiver: Money;
  fees: QuoteFees;
  /** sender - fees.total: the part of the sender amount that is converted. */
  converted: Money;
}

export interface FixedAmount {
  side: QuoteSide;
  amount: Money;
}

export class FeesExceedAmountError extends Error {
  override name = 'FeesExceedAmountError';
  constructor(
    readonly sender: Money,
    readonly fees: QuoteFees,
  ) {
    super(`${sender.format()} does not cover the fees of ${fees.total.format()}`);
  }
}

/** The conversions along the path, in order: one per locked rate. */
export function conversionsOf(
  terms: Pick<QuoteTerms, 'sender' | 'stablecoin' | 'receiver'>,
): Array<{ from: Currency; to: Currency }> {
  const { sender, stablecoin, receiver } = terms;
  return stablecoin
    ? [
        { from: sender.currency, to: stablecoin.currency },
        { from: stablecoin.currency, to: receiver.currency },
      ]
    : [{ from: sender.currency, to: receiver.currency }];
}

/** A provider's rate as the quote locks it: 8 decimal places, rounded down. */
export function lockRate(rate: DecimalValue): Decimal {
  return roundTo(rate, RATE_DECIMALS, 'down');
}

/** The network fee in the sender currency: the stablecoin fee bought at the sender's locked rate. */
export function networkFeeInSenderCurrency(
  sender: Currency,
  feeInStablecoin: Money,
  senderToStablecoin: Decimal,
): Money {
  if (sender === feeInStablecoin.currency) return feeInStablecoin;
  return Money.rounded(sender, feeInStablecoin.amount.div(senderToStablecoin), 'up');
}

/** Fees of a sender amount, each rounded up to the sender currency's minor unit. */
export function feesFor(terms: QuoteTerms, sender: Money): QuoteFees {
  const service = sender.basisPoints(terms.serviceFeeBps, 'up');
  const partner = terms.partnerFee
    ? sender.basisPoints(terms.partnerFee.percentageBps, 'up').plus(terms.partnerFee.flat)
    : Money.zero(sender.currency);
  const network = terms.networkFee;
  return { service, partner, network, total: service.plus(partner).plus(network) };
}

/** Every amount of a quote from its terms and the amount fixed on one side. */
export function priceQuote(terms: QuoteTerms, fixed: FixedAmount): QuoteAmounts {
  const conversions = conversionsOf(terms);
  const expected = fixed.side === 'sender' ? terms.sender.currency : terms.receiver.currency;
  if (fixed.amount.currency !== expected) throw new Error(`the ${fixed.side} amount must be in ${expected}`);
  if (fixed.side === 'sender') {
    const sender = fixed.amount;
    const fees = feesFor(terms, sender);
    const converted = sender.minus(fees.total);
    if (!converted.isPositive()) throw new FeesExceedAmountError(sender, fees);
    const along = [converted];
    conversions.forEach(({ to }, leg) =>
      along.push((along[leg] as Money).convert(terms.rates[leg] as Decimal, to, 'down')),
    );
    return {
      fixedSide: 'sender',
      sender,
      stablecoin: terms.stablecoin ? (along[1] as Money) : null,
      receiver: along[along.length - 1] as Money,
      fees,
      converted,
    };
  }

  const receiver = fixed.amount;
  const backwards = [receiver];
  for (const [leg, { from }] of [...conversions.entries()].reverse()) {
    const next = backwards[0] as Money;
    backwards.unshift(Money.rounded(from, next.amount.div(terms.rates[leg] as Decimal), 'up'));
  }
  const converted = backwards[0] as Money;
  const sender = smallestSenderAmountFor(terms, converted);
  return {
    fixedSide: 'receiver',
    sender,
    stablecoin: terms.stablecoin ? (backwards[1] as Money) : null,
    receiver,
    fees: feesFor(terms, sender),
    converted,
  };
}

/**
 * The smallest S with S - fees(S) >= converted. Fees are at most S * (p + q) + fixed, so no S below
 * (converted + fixed) / (1 - p - q) qualifies; from there S - fees(S) rises by at most one minor
 * unit per step (the two rounded-up percentages may also rise), so the first S that qualifies
 * gives exactly `converted` and is found within a few steps.
 */
function smallestSenderAmountFor(terms: QuoteTerms, converted: Money): Money {
  const currency = converted.currency;
  const fixedFees = terms.networkFee.plus(terms.partnerFee?.flat ?? Money.zero(currency));
  const percentage = new Decimal(terms.serviceFeeBps + (terms.partnerFee?.percentageBps ?? 0)).div(10_000);
  const lowerBound = converted.plus(fixedFees).amount.div(new Decimal(1).minus(percentage));
  let sender = Money.rounded(currency, lowerBound, 'down');
  const step = Money.minorUnit(currency);
  for (let attempt = 0; attempt < 10_000; attempt += 1) {
    if (sender.minus(feesFor(terms, sender).total).gte(converted)) return sender;
    sender = sender.plus(step);
  }
  throw new Error(`no sender amount found for ${converted.format()} (fee parameters out of bounds)`);
}

// ---- amount ranges (SPEC 8) ----

export interface AmountRange {
  min: Money;
  max: Money;
}
export type AmountRanges = Record<Currency, AmountRange>;

/** Defaults of AMOUNT_RANGES: BRL 1-1000 is the SPEC's; the others are this service's choice. */
export const defaultAmountRangeText: Record<Currency, [string, string]> = {
  BRL: ['1', '1000'],
  USD: ['1', '50000'],
  EUR: ['1', '50000'],
  MXN: ['20', '1000000'],
  ARS: ['1000', '50000000'],
  USDC: ['1', '50000'],
  USDT: ['1', '50000'],
};

/** "1 to 1000 BRL": the range as the error message names it. */
export function describeRange(range: AmountRange): string {
  return `${range.min.amount.toFixed()} to ${range.max.amount.toFixed()} ${range.min.currency}`;
}

export function isWithinRange(amount: Money, ranges: AmountRanges): boolean {
  const range = ranges[amount.currency];
  return amount.gte(range.min) && amount.lte(range.max);
}
