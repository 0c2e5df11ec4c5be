// Request and response schemas of quotes (SPEC 2.6, 4.3). Both quote operations take the same
// side objects: `{currency, payment_rail, amount?}`, with the amount (a decimal string) on the
// sender side, on the receiver side or on neither; fiat-to-fiat adds a `stablecoin` side without
// an amount. Rules that involve several fields are checked together so one response lists all.
import { z } from 'zod';
import {
  allCurrencies,
  amountTextProblem,
  Currency,
  decimalsOf,
  fiatCurrencies,
  isCurrency,
  isStablecoin,
  Money,
  stablecoins,
} from '../domain/money';
import {
  MAX_PARTNER_FEE_BPS,
  payinCurrencies,
  PartnerFee,
  QuoteLeg,
  QuoteSide,
  quoteStatuses,
  QuoteType,
} from '../domain/quotes';
import {
  allPaymentRails,
  blockchains,
  fiatRails,
  fiatRailsOf,
  isPaymentRail,
  PaymentRail,
  railsByCurrency,
} from '../domain/rails';
import { always, positiveAmountPattern, positiveAmountSchema, timestampSchema } from './common';

const amountSchema = positiveAmountSchema.meta({
  description: "Decimal string in the side's currency with at most its decimals (fiat 2, USDC/USDT 6), greater than 0.",
  example: '100.00',
});

const railDescription = `Rail of the currency: ${Object.entries(railsByCurrency)
  .map(([currency, rails]) => `${currency} ${rails.join('/')}`)
  .join(', ')}.`;

/**
 * What the description states about a side per currency: its rails and its amount's decimal places (one branch per
 * currency, exclusive by `currency`).
 */
const sideBranches = (currencyList: readonly Currency[]) => ({
  oneOf: currencyList.map((currency) => ({
    properties: {
      currency: { const: currency },
      payment_rail: { enum: [...railsByCurrency[currency]] },
      amount: { pattern: positiveAmountPattern(decimalsOf(currency)) },
    },
  })),
});

/** A flat fee in the sender currency: zero allowed, at most the currency's decimal places. */
const flatFeePattern = (decimals: number) => `^\\d{1,15}(\\.\\d{1,${decimals}})?$`;

/** Not an amount on both sides. */
const amountOnOneSideAtMost = {
  not: {
    required: ['sender', 'receiver'],
    properties: { sender: { required: ['amount'] }, receiver: { required: ['amount'] } },
  },
};

const quoteSideRequest = (side: QuoteSide) =>
  z
    .object({
      currency: z.enum(allCurrencies),
      payment_rail: z.enum(allPaymentRails).meta({ description: railDescription }),
      amount: amountSchema.optional().meta({
        description:
          side === 'sender'
            ? 'What the sender sends, fees included; the quote answers what the receiver gets. Not together with receiver.amount.'
            : 'What the receiver gets; the quote answers what the sender must send. Not together with sender.amount.',
      }),
    })
    .strict();

const fiatSideRequest = (side: QuoteSide) =>
  z
    .object({
      currency: z.enum(fiatCurrencies as [Currency, ...Currency[]]),
      payment_rail: z.enum(fiatRails).meta({ description: railDescription }),
      amount: quoteSideRequest(side).shape.amount,
    })
    .strict();

const partnerFeeRequestSchema = z
  .object({
    percentage_fee: z
      .number()
      .int()
      .min(0)
      .max(MAX_PARTNER_FEE_BPS)
      .optional()
      .meta({
        description: `Basis points of the sender amount, 0-${MAX_PARTNER_FEE_BPS} (150 = 1.5%). Default 0.`,
        example: 150,
      }),
    flat_fee: z
      .string()
      .regex(/^\d{1,15}(\.\d+)?$/, 'must be a decimal number as a string, e.g. "2.50"')
      .optional()
      .meta({
        description: 'Fixed amount in the sender currency, at most its decimals. Default "0".',
        example: '2.00',
      }),
  })
  .strict()
  .meta({
    id: 'PartnerFeeRequest',
    description:
      "The partner's own fee, deducted from the sender amount before conversion and shown in `fees.partner_fee`.",
  });

type RawSide = { currency?: unknown; payment_rail?: unknown; amount?: unknown } | undefined;
type RawBody = { sender?: RawSide; stablecoin?: RawSide; receiver?: RawSide; partner_fee?: { flat_fee?: unknown } };

const knownCurrency = (side: RawSide): Currency | undefined => (isCurrency(side?.currency) ? side.currency : undefined);

type SideName = 'sender' | 'stablecoin' | 'receiver';
/** What a side's own schema accepts: cross-field rules only look at values that passed it. */
type SideSpec = { name: SideName; currencies: readonly Currency[]; rails: readonly PaymentRail[] };

/** Rules across fields shared by both quote operations. */
function checkSides(body: RawBody, sides: SideSpec[], ctx: z.RefinementCtx): void {
  for (const { name, currencies, rails } of sides) {
    const side = body[name];
    const currency = knownCurrency(side);
    if (!currency || !currencies.includes(currency)) continue;
    const rail = side?.payment_rail;
    if (isPaymentRail(rail) && rails.includes(rail) && !railsByCurrency[currency].includes(rail)) {
      ctx.addIssue({
        code: 'custom',
        path: [name, 'payment_rail'],
        message: `must be one of ${railsByCurrency[currency].join(', ')} for ${currency}`,
      });
    }
    if (typeof side?.amount === 'string' && /^\d{1,15}(\.\d+)?$/.test(side.amount)) {
      const problem = amountTextProblem(side.amount, currency);
      if (problem) ctx.addIssue({ code: 'custom', path: [name, 'amount'], message: problem });
    }
  }
  if (body.sender?.amount !== undefined && body.receiver?.amount !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['receiver', 'amount'],
      message: 'cannot be combined with sender.amount: give the amount on one side only, or on neither',
    });
  }
  const flatFee = body.partner_fee?.flat_fee;
  const senderCurrency = knownCurrency(body.sender);
  const senderSpec = sides.find((side) => side.name === 'sender');
  if (
    senderCurrency &&
    senderSpec?.currencies.includes(senderCurrency) &&
    typeof flatFee === 'string' &&
    /^\d{1,15}(\.\d+)?$/.test(flatFee)
  ) {
    const problem = amountTextProblem(flatFee, senderCurrency);
    if (problem)
      ctx.addIssue({ code: 'custom', path: ['partner_fee', 'flat_fee'], message: `${problem} (the sender currency)` });
  }
}

/** What the quote operations hand to createQuote. */
export interface QuoteRequest {
  type: QuoteType;
  sender: QuoteLeg;
  stablecoin: QuoteLeg | null;
  receiver: QuoteLeg;
  /** The amount the partner gave, if any. */
  fixed: { side: QuoteSide; amount: Money } | null;
  partnerFee: PartnerFee | null;
}

type ParsedSide = { currency: Currency; payment_rail: PaymentRail; amount?: string };
type ParsedPartnerFee = { percentage_fee?: number; flat_fee?: string } | undefined;

function toQuoteRequest(
  type: QuoteType,
  body: { sender: ParsedSide; stablecoin?: ParsedSide; receiver: ParsedSide; partner_fee?: ParsedPartnerFee },
): QuoteRequest {
  const leg = (side: ParsedSide): QuoteLeg => ({ currency: side.currency, paymentRail: side.payment_rail });
  const fixed =
    body.sender.amount !== undefined
      ? { side: 'sender' as const, amount: Money.parse(body.sender.currency, body.sender.amount) }
      : body.receiver.amount !== undefined
        ? { side: 'receiver' as const, amount: Money.parse(body.receiver.currency, body.receiver.amount) }
        : null;
  return {
    type,
    sender: leg(body.sender),
    stablecoin: body.stablecoin ? leg(body.stablecoin) : null,
    receiver: leg(body.receiver),
    fixed,
    partnerFee: body.partner_fee
      ? {
          percentageBps: body.partner_fee.percentage_fee ?? 0,
          flat: Money.parse(body.sender.currency, body.partner_fee.flat_fee ?? '0'),
        }
      : null,
  };
}

export const createQuoteRequestSchema = z
  .object({
    sender: quoteSideRequest('sender').meta({
      id: 'QuoteSenderRequest',
      description: `Pay-in: ${(['USD', 'EUR'] as const).map((currency) => `${currency} (${fiatRailsOf(currency).join(', ')})`).join(' or ')}. Payout: USDC or USDT on ethereum or solana.`,
      ...sideBranches(allCurrencies),
    }),
    receiver: quoteSideRequest('receiver').meta({
      id: 'QuoteReceiverRequest',
      description: 'Pay-in: USDC or USDT on ethereum or solana. Payout: a fiat currency on one of its rails.',
      ...sideBranches(allCurrencies),
    }),
    partner_fee: partnerFeeRequestSchema.optional(),
  })
  .strict()
  .meta({
    ...amountOnOneSideAtMost,
    oneOf: [
      {
        title: 'Pay-in: fiat (USD or EUR) to a stablecoin',
        properties: {
          sender: { properties: { currency: { enum: [...payinCurrencies] } } },
          receiver: { properties: { currency: { enum: [...stablecoins] } } },
          partner_fee: { properties: { flat_fee: { pattern: flatFeePattern(2) } } },
        },
      },
      {
        title: 'Payout: a stablecoin to fiat',
        properties: {
          sender: { properties: { currency: { enum: [...stablecoins] } } },
          receiver: { properties: { currency: { enum: [...fiatCurrencies] } } },
          partner_fee: { properties: { flat_fee: { pattern: flatFeePattern(6) } } },
        },
      },
    ],
  })
  .superRefine((body, ctx) => {
    const raw = body as RawBody;
    const sender = knownCurrency(raw.sender);
    const receiver = knownCurrency(raw.receiver);
    if (sender && receiver) {
      if (isStablecoin(sender) && isStablecoin(receiver)) {
        ctx.addIssue({
          code: 'custom',
          path: ['receiver', 'currency'],
          message:
            'must be a fiat currency: moving a stablecoin between wallets is a wallet transfer and needs no quote',
        });
      } else if (!isStablecoin(sender) && !isStablecoin(receiver)) {
        ctx.addIssue({
          code: 'custom',
          path: ['receiver', 'currency'],
          message: `must be a stablecoin (${stablecoins.join(', ')}) for a pay-in; for fiat to fiat use POST /v1/quote/fiat-to-fiat`,
        });
      } else if (!isStablecoin(sender) && !payinCurrencies.includes(sender)) {
        ctx.addIssue({
          code: 'custom',
          path: ['sender', 'currency'],
          message: `must be ${payinCurrencies.join(' or ')} for a pay-in (or a stablecoin for a payout)`,
        });
      }
    }
    checkSides(
      raw,
      [
        { name: 'sender', currencies: allCurrencies, rails: allPaymentRails },
        { name: 'receiver', currencies: allCurrencies, rails: allPaymentRails },
      ],
      ctx,
    );
  }, always)
  .transform((body) => toQuoteRequest(isStablecoin(body.sender.currency) ? 'payout' : 'payin', body))
  .meta({ id: 'CreateQuoteRequest' });

export const createFiatToFiatQuoteRequestSchema = z
  .object({
    sender: fiatSideRequest('sender').meta({
      id: 'FiatToFiatSenderRequest',
      description: 'The fiat the sender pays in, on a local rail.',
      ...sideBranches(fiatCurrencies),
    }),
    stablecoin: z
      .object({
        currency: z.enum(stablecoins),
        payment_rail: z.enum(blockchains),
      })
      .strict()
      .meta({
        id: 'FiatToFiatStablecoinRequest',
        description: 'The intermediary stablecoin and its blockchain; it has no amount of its own to give.',
      }),
    receiver: fiatSideRequest('receiver').meta({
      id: 'FiatToFiatReceiverRequest',
      description: 'The fiat the receiver gets, on a local rail; a different currency from the sender.',
      ...sideBranches(fiatCurrencies),
    }),
    partner_fee: partnerFeeRequestSchema.optional(),
  })
  .strict()
  .meta({
    ...amountOnOneSideAtMost,
    // The receiver's currency differs from the sender's; the flat fee has the sender currency's decimals.
    oneOf: fiatCurrencies.map((currency) => ({
      properties: {
        sender: { properties: { currency: { const: currency } } },
        receiver: { properties: { currency: { enum: fiatCurrencies.filter((other) => other !== currency) } } },
        partner_fee: { properties: { flat_fee: { pattern: flatFeePattern(decimalsOf(currency)) } } },
      },
    })),
  })
  .superRefine((body, ctx) => {
    const raw = body as RawBody;
    const sender = knownCurrency(raw.sender);
    if (sender && sender === knownCurrency(raw.receiver)) {
      ctx.addIssue({
        code: 'custom',
        path: ['receiver', 'currency'],
        message: 'must differ from sender.currency: fiat to fiat converts between two currencies',
      });
    }
    checkSides(
      raw,
      [
        { name: 'sender', currencies: fiatCurrencies, rails: fiatRails },
        { name: 'stablecoin', currencies: stablecoins, rails: blockchains },
        { name: 'receiver', currencies: fiatCurrencies, rails: fiatRails },
      ],
      ctx,
    );
  }, always)
  .transform((body) => toQuoteRequest('fiat_to_fiat', body))
  .meta({ id: 'CreateFiatToFiatQuoteRequest' });

// ---- responses ----

const quoteSideSchema = z
  .object({
    currency: z.enum(allCurrencies),
    payment_rail: z.enum(allPaymentRails),
    amount: z.string().nullable().meta({
      description: "Decimal string with the currency's decimals; null on a rate-only quote.",
      example: '100.00',
    }),
  })
  .meta({ id: 'QuoteSide' });

const rateSchema = z
  .string()
  .meta({ description: 'Decimal string, 8 decimal places, rounded down.', example: '4.97500000' });

const feesSchema = z
  .object({
    currency: z.enum(allCurrencies).meta({ description: 'Every fee is in the sender currency.' }),
    service_fee: z
      .string()
      .nullable()
      .meta({ description: 'roundUp(sender amount * service_fee_percentage / 10000); null on a rate-only quote.' }),
    service_fee_percentage: z.number().int().meta({ description: 'Service fee in basis points of the sender amount.' }),
    partner_fee: z.string().nullable().meta({
      description:
        'roundUp(sender amount * partner_fee.percentage_fee / 10000) + partner_fee.flat_fee; null on a rate-only quote.',
    }),
    network_fee: z
      .string()
      .meta({ description: 'One on-chain transfer of the stablecoin, in the sender currency; known on every quote.' }),
    total: z
      .string()
      .nullable()
      .meta({ description: 'service_fee + partner_fee + network_fee; null on a rate-only quote.' }),
  })
  .meta({ id: 'QuoteFees' });

const partnerFeeSchema = z.object({ percentage_fee: z.number().int(), flat_fee: z.string() }).nullable().meta({
  id: 'PartnerFee',
  description: 'The partner fee as requested (flat_fee in the sender currency); null when none.',
});

const commonFields = {
  id: z.uuid(),
  status: z.enum(quoteStatuses).meta({
    description: 'active until used once (used) or until expires_at passes (expired).',
  }),
  fixed_side: z
    .enum(['sender', 'receiver'])
    .nullable()
    .meta({ description: 'The side whose amount the partner gave; null for a rate-only quote.' }),
  sender: quoteSideSchema,
  receiver: quoteSideSchema,
  fees: feesSchema,
  partner_fee: partnerFeeSchema,
  expires_at: timestampSchema.meta({ description: 'Exactly 5 minutes after created_at.' }),
  created_at: timestampSchema,
  updated_at: timestampSchema,
};

export const quoteSchema = z
  .object({
    id: commonFields.id,
    type: z.enum(['payin', 'payout']),
    status: commonFields.status,
    fixed_side: commonFields.fixed_side,
    sender: commonFields.sender,
    receiver: commonFields.receiver,
    quotation: rateSchema.meta({ description: 'Locked rate: receiver currency units per sender currency unit.' }),
    fees: commonFields.fees,
    partner_fee: commonFields.partner_fee,
    expires_at: commonFields.expires_at,
    created_at: commonFields.created_at,
    updated_at: commonFields.updated_at,
  })
  .meta({ id: 'Quote' });

export const fiatToFiatQuoteSchema = z
  .object({
    id: commonFields.id,
    type: z.literal('fiat_to_fiat'),
    status: commonFields.status,
    fixed_side: commonFields.fixed_side,
    sender: commonFields.sender,
    stablecoin: quoteSideSchema,
    receiver: commonFields.receiver,
    sender_quotation: rateSchema.meta({ description: 'Locked rate: stablecoin units per sender currency unit.' }),
    receiver_quotation: rateSchema.meta({ description: 'Locked rate: receiver currency units per stablecoin unit.' }),
    fees: commonFields.fees,
    partner_fee: commonFields.partner_fee,
    expires_at: commonFields.expires_at,
    created_at: commonFields.created_at,
    updated_at: commonFields.updated_at,
  })
  .meta({ id: 'FiatToFiatQuote' });

export const anyQuoteSchema = z
  .discriminatedUnion('type', [quoteSchema, fiatToFiatQuoteSchema])
  .meta({ id: 'AnyQuote' });

export type QuoteResource = z.input<typeof quoteSchema>;
export type FiatToFiatQuoteResource = z.input<typeof fiatToFiatQuoteSchema>;
export type AnyQuoteResource = z.input<typeof anyQuoteSchema>;

/** Minor units of each currency, for the OpenAPI description. */
export const minorUnitsDescription = allCurrencies.map((currency) => `${currency} ${decimalsOf(currency)}`).join(', ');
