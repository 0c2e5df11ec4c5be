// Quotes as the API shows them, and the terms and amounts a quote locked, read back from its row
// (as stored, never recomputed). Pure.
import type { DecimalText } from '../persistence/database';
import { Currency, Decimal, Money } from '../domain/money';
import type { QuoteAmounts, QuoteSide, QuoteTerms } from '../domain/quotes';
import type { PaymentRail } from '../domain/rails';
import type { QuoteRow } from '../persistence/quotes';
import type { AnyQuoteResource } from '../schemas/quotes';

/** A stored amount (a Prisma decimal column, or a literal for a column left empty) as the money type. */
const money = (currency: Currency, value: DecimalText) => Money.of(currency, value.toString());

/** The locked terms stored with a quote. */
export function termsOf(row: QuoteRow): QuoteTerms {
  const sender = row.senderCurrency;
  return {
    type: row.type,
    sender: { currency: sender, paymentRail: row.senderPaymentRail },
    stablecoin:
      row.stablecoinCurrency && row.stablecoinPaymentRail
        ? { currency: row.stablecoinCurrency, paymentRail: row.stablecoinPaymentRail }
        : null,
    receiver: { currency: row.receiverCurrency, paymentRail: row.receiverPaymentRail },
    rates: row.rates.map((rate) => new Decimal(rate.toString())),
    serviceFeeBps: row.serviceFeeBps,
    partnerFee:
      row.partnerFeeBps !== null
        ? { percentageBps: row.partnerFeeBps, flat: money(sender, row.partnerFlatFee ?? '0') }
        : null,
    networkFee: money(sender, row.networkFee),
  };
}

/** The amounts locked with a quote (as stored, never recomputed), or null for a rate-only quote. */
export function amountsOf(row: QuoteRow): QuoteAmounts | null {
  if (!row.fixedSide || row.senderAmount === null || row.receiverAmount === null) return null;
  const sender = row.senderCurrency;
  const service = money(sender, row.serviceFeeAmount ?? '0');
  const partner = money(sender, row.partnerFeeAmount ?? '0');
  const network = money(sender, row.networkFee);
  const total = service.plus(partner).plus(network);
  const senderAmount = money(sender, row.senderAmount);
  return {
    fixedSide: row.fixedSide as QuoteSide,
    sender: senderAmount,
    stablecoin:
      row.stablecoinAmount !== null && row.stablecoinCurrency !== null
        ? money(row.stablecoinCurrency, row.stablecoinAmount)
        : null,
    receiver: money(row.receiverCurrency, row.receiverAmount),
    fees: { service, partner, network, total },
    converted: senderAmount.minus(total),
  };
}

export function toQuote(row: QuoteRow): AnyQuoteResource {
  const terms = termsOf(row);
  const amounts = amountsOf(row);
  const side = (leg: { currency: Currency; paymentRail: PaymentRail }, amount: Money | null | undefined) => ({
    currency: leg.currency,
    payment_rail: leg.paymentRail,
    amount: amount ? amount.toString() : null,
  });
  const common = {
    id: row.id,
    status: row.status,
    fixed_side: (row.fixedSide as QuoteSide | null) ?? null,
  };
  const rest = {
    fees: {
      currency: terms.sender.currency,
      service_fee: amounts ? amounts.fees.service.toString() : null,
      service_fee_percentage: terms.serviceFeeBps,
      partner_fee: amounts ? amounts.fees.partner.toString() : null,
      network_fee: terms.networkFee.toString(),
      total: amounts ? amounts.fees.total.toString() : null,
    },
    partner_fee: terms.partnerFee
      ? { percentage_fee: terms.partnerFee.percentageBps, flat_fee: terms.partnerFee.flat.toString() }
      : null,
    expires_at: row.expiresAt.toISOString(),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
  const rate = (index: number) => (terms.rates[index] as Decimal).toFixed(8);
  if (terms.type === 'fiat_to_fiat' && terms.stablecoin) {
    return {
      ...common,
      type: 'fiat_to_fiat',
      sender: side(terms.sender, amounts?.sender),
      stablecoin: side(terms.stablecoin, amounts?.stablecoin),
      receiver: side(terms.receiver, amounts?.receiver),
      sender_quotation: rate(0),
      receiver_quotation: rate(1),
      ...rest,
    };
  }
  return {
    ...common,
    type: terms.type as 'payin' | 'payout',
    sender: side(terms.sender, amounts?.sender),
    receiver: side(terms.receiver, amounts?.receiver),
    quotation: rate(0),
    ...rest,
  };
}
