// HTTP operations on quotes (SPEC 2.6, 4.3). Quotes are consumed by the transactions that need one
// (consumeQuote in src/services/quotes.ts), not over HTTP.
import { fiatRailsInProse } from '../domain/rails';
import { defineRoute, idParam } from '../http/route';
import { toQuote } from '../presenters/quotes';
import { createQuote, findQuoteOrThrow } from '../services/quotes';
import {
  anyQuoteSchema,
  createFiatToFiatQuoteRequestSchema,
  createQuoteRequestSchema,
  FiatToFiatQuoteResource,
  fiatToFiatQuoteSchema,
  minorUnitsDescription,
  QuoteResource,
  quoteSchema,
} from '../schemas/quotes';

const tag = 'Quotes';

/** The pricing rules, shared by both create operations' descriptions. */
export const pricingRules = `
**Amounts** are decimal strings with the currency's decimals (${minorUnitsDescription}). Give the amount on the
sender side (\`sender.amount\`: the quote answers what the receiver gets), on the receiver side (\`receiver.amount\`:
the quote answers what the sender must send) or on neither (a rate-only quote: amounts and the fees that depend on
them are null and are computed with the locked rates when the transaction gives its amount). Both at once is invalid.

**Fees** are all in the sender currency, computed on the gross sender amount S and deducted before conversion:
partner fee = roundUp(S x partner_fee.percentage_fee / 10000) + partner_fee.flat_fee; service fee =
roundUp(S x fees.service_fee_percentage / 10000); network fee = one on-chain transfer of the stablecoin (sandbox:
1 USDC/USDT on ethereum, 0.01 on solana), bought at the locked rate. Converted amount C = S - total fees.

**Rounding** always favours the service, to the currency's minor unit: what the customer receives rounds down, what
the customer pays (fees, a sender amount computed from a receiver amount) rounds up. Rates are locked with 8 decimal
places, rounded down. Sender side: receiver = roundDown(C x quotation) (fiat to fiat: stablecoin = roundDown(C x
sender_quotation), receiver = roundDown(stablecoin x receiver_quotation)). Receiver side: C = roundUp(receiver /
quotation) (fiat to fiat: stablecoin = roundUp(receiver / receiver_quotation), C = roundUp(stablecoin /
sender_quotation)) and S is the smallest amount with S - fees(S) = C. Always S = C + fees.total exactly.

**Example** (sandbox, service fee 50 bps): sender 1000.00 USD on wire to USDC on ethereum with partner_fee
{percentage_fee: 150, flat_fee: "2.00"}: quotation 0.99900000; partner fee 15.00 + 2.00 = 17.00; service fee 5.00;
network fee roundUp(1 / 0.999) = 1.01; total 23.01; C = 976.99; receiver roundDown(976.99 x 0.999) = 976.013010 USDC.

**Limits**: the given amount and the computed one must be within the range of their currency (BRL 1 to 1000; see
docs/api-decisions.md for the others and AMOUNT_RANGES), otherwise 422 \`amount_out_of_range\` naming the range; so does a sender
amount that does not cover the fees.

**Lifetime**: \`expires_at\` is exactly 5 minutes after \`created_at\`. A quote is used once by a transaction before it
expires; then its status is \`used\`. A timer marks unused quotes \`expired\`; using them answers \`quote_expired\`.
`.trim();

const createPayinPayoutQuote = defineRoute({
  method: 'post',
  path: '/v1/quote',
  operationId: 'createQuote',
  tag,
  summary: 'Quote a pay-in or a payout',
  description:
    `A pay-in converts fiat received on a virtual account (${fiatRailsInProse(' on ', ['USD', 'EUR'])}) into a stablecoin ` +
    `(USDC or USDT on ethereum or solana); a payout converts a stablecoin into fiat sent on a rail (${fiatRailsInProse(' ')}). ` +
    'The type follows from which side is the ' +
    'stablecoin and is returned as `type`. The rate is locked for 5 minutes.\n\n' +
    pricingRules,
  body: createQuoteRequestSchema,
  response: { status: 201, description: 'The quote, with its locked rate and amounts.', schema: quoteSchema },
  errors: ['amount_out_of_range', 'flow_not_available'],
  async handler({ body, partner, services }) {
    // body.type is payin or payout here, so the quote has that shape.
    return (await createQuote(services, partner.id, body)) as QuoteResource;
  },
});

const createFiatToFiatQuote = defineRoute({
  method: 'post',
  path: '/v1/quote/fiat-to-fiat',
  operationId: 'createFiatToFiatQuote',
  tag,
  summary: 'Quote fiat to fiat',
  description:
    'Fiat in one currency (sender) becomes another fiat (receiver) through a stablecoin held briefly in a ' +
    `service-managed wallet. Sender and receiver: ${fiatRailsInProse()}, in two different currencies; ` +
    'stablecoin: USDC or USDT on ethereum or solana. ' +
    '`sender_quotation` is stablecoin per sender unit, `receiver_quotation` receiver currency per stablecoin; ' +
    '`stablecoin.amount` shows the intermediate amount. Use the quote with POST /v1/fiat-to-fiat.\n\n' +
    pricingRules,
  body: createFiatToFiatQuoteRequestSchema,
  response: {
    status: 201,
    description: 'The quote, with its two locked rates and amounts.',
    schema: fiatToFiatQuoteSchema,
  },
  errors: ['amount_out_of_range', 'flow_not_available'],
  async handler({ body, partner, services }) {
    return (await createQuote(services, partner.id, body)) as FiatToFiatQuoteResource;
  },
});

const getQuote = defineRoute({
  method: 'get',
  path: '/v1/quotes/{id}',
  operationId: 'getQuote',
  tag,
  summary: 'Get a quote',
  description:
    'Any quote of the partner, pay-in, payout or fiat to fiat, in the shape its create operation answered, with ' +
    'its current status: active, used or expired.',
  params: idParam('id', 'Quote id.'),
  response: { status: 200, description: 'The quote.', schema: anyQuoteSchema },
  errors: ['not_found'],
  async handler({ params, partner, services }) {
    return toQuote(await findQuoteOrThrow(services.prisma, partner.id, params.id as string));
  },
});

export const quoteRoutes = [createPayinPayoutQuote, createFiatToFiatQuote, getQuote];
