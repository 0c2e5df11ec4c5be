// Quotes over HTTP (create, get, validation, limits, scoping) and their lifetime: the quote-<id>
// workflow's 5-minute timer (time skipping) and consumption, once, through consumeQuote.
import request from 'supertest';
import { SQL_BUILDER, sqlBuilderOn, sqlPoolOf } from '../src/persistence/internal/database';
import { DomainError } from '../src/domain/errors';
import { apiErrorOf } from '../src/http/errors';
import { parseAmountRanges } from '../src/config';
import type { AmountRanges } from '../src/domain/quotes';
import { Money } from '../src/domain/money';
import { UnconfiguredRateProvider } from '../src/providers/rates';
import { termsOf } from '../src/presenters/quotes';
import { consumeQuote, priceWithinRanges } from '../src/services/quotes';
import { workflowIds } from '../src/temporal/workflow-ids';
import { consumeQuoteUpdate, quoteStateQuery } from '../workflows/quote-lifetime';
import { Harness, startHarness, TestPartner } from './support/harness';

let harness: Harness;
let partner: TestPartner;

beforeAll(async () => {
  harness = await startHarness();
  partner = await harness.createPartner();
});
afterAll(() => harness?.teardown());

const payin = (overrides: Record<string, unknown> = {}) => ({
  sender: { currency: 'USD', payment_rail: 'wire', amount: '1000.00' },
  receiver: { currency: 'USDC', payment_rail: 'ethereum' },
  ...overrides,
});

const fiatToFiat = (overrides: Record<string, unknown> = {}) => ({
  sender: { currency: 'BRL', payment_rail: 'pix', amount: '1000.00' },
  stablecoin: { currency: 'USDC', payment_rail: 'solana' },
  receiver: { currency: 'MXN', payment_rail: 'spei' },
  ...overrides,
});

async function createQuote(path: string, body: object, as: TestPartner = partner) {
  const response = await as.api.post(path).send(body);
  if (response.status !== 201) throw new Error(`quote failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as { id: string; created_at: string; expires_at: string } & Record<string, unknown>;
}

const timestamps = { expires_at: expect.any(String), created_at: expect.any(String), updated_at: expect.any(String) };

describe('POST /v1/quote', () => {
  it('quotes a pay-in with the amount on the sender side: the receiver amount, rate and fees', async () => {
    const response = await partner.api.post('/v1/quote').send(payin());
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      type: 'payin',
      status: 'active',
      fixed_side: 'sender',
      sender: { currency: 'USD', payment_rail: 'wire', amount: '1000.00' },
      receiver: { currency: 'USDC', payment_rail: 'ethereum', amount: '992.996010' },
      quotation: '0.99900000',
      fees: {
        currency: 'USD',
        service_fee: '5.00',
        service_fee_percentage: 50,
        partner_fee: '0.00',
        network_fee: '1.01',
        total: '6.01',
      },
      partner_fee: null,
      ...timestamps,
    });
  });

  it('applies a partner fee (the documented example)', async () => {
    const body = payin({ partner_fee: { percentage_fee: 150, flat_fee: '2.00' } });
    const quote = await createQuote('/v1/quote', body);
    expect(quote).toMatchObject({
      receiver: { currency: 'USDC', payment_rail: 'ethereum', amount: '976.013010' },
      fees: { service_fee: '5.00', partner_fee: '17.00', network_fee: '1.01', total: '23.01' },
      partner_fee: { percentage_fee: 150, flat_fee: '2.00' },
    });
  });

  it('gives back the sender amount when asked for the receiver amount it yields', async () => {
    const quote = await createQuote('/v1/quote', {
      sender: { currency: 'USD', payment_rail: 'wire' },
      receiver: { currency: 'USDC', payment_rail: 'ethereum', amount: '976.013010' },
      partner_fee: { percentage_fee: 150, flat_fee: '2.00' },
    });
    expect(quote).toMatchObject({
      fixed_side: 'receiver',
      sender: { amount: '1000.00' },
      fees: { service_fee: '5.00', partner_fee: '17.00', network_fee: '1.01', total: '23.01' },
    });
  });

  it('answers 503 without market data (production has no feed yet) and creates nothing', async () => {
    const app = harness.createApp({ ...harness.services, rateProvider: new UnconfiguredRateProvider() });
    const count = () => harness.prisma.quote.count({ where: { partnerId: partner.partnerId } });
    const before = await count();
    const response = await request(app.callback()).post('/v1/quote').set('Authorization', partner.apiKey).send(payin());
    expect(response.status).toBe(503);
    expect(response.body.error.code).toBe('service_unavailable');
    expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
    expect(await count()).toBe(before);
  });

  it('quotes a payout with the amount on the receiver side: what the sender must send', async () => {
    const quote = await createQuote('/v1/quote', {
      sender: { currency: 'USDC', payment_rail: 'ethereum' },
      receiver: { currency: 'BRL', payment_rail: 'pix', amount: '500' },
    });
    expect(quote).toEqual({
      id: quote.id,
      type: 'payout',
      status: 'active',
      fixed_side: 'receiver',
      sender: { currency: 'USDC', payment_rail: 'ethereum', amount: '102.012576' },
      receiver: { currency: 'BRL', payment_rail: 'pix', amount: '500.00' },
      quotation: '4.97500000',
      fees: {
        currency: 'USDC',
        service_fee: '0.510063',
        service_fee_percentage: 50,
        partner_fee: '0.000000',
        network_fee: '1.000000',
        total: '1.510063',
      },
      partner_fee: null,
      ...timestamps,
    });
  });

  it('quotes a payout on the receiver side with a partner fee', async () => {
    const quote = await createQuote('/v1/quote', {
      sender: { currency: 'USDC', payment_rail: 'solana' },
      receiver: { currency: 'BRL', payment_rail: 'pix_account', amount: '1000.00' },
      partner_fee: { percentage_fee: 200, flat_fee: '1.5' },
    });
    expect(quote).toMatchObject({
      sender: { currency: 'USDC', amount: '207.707720' },
      receiver: { currency: 'BRL', amount: '1000.00' },
      fees: { service_fee: '1.038539', partner_fee: '5.654155', network_fee: '0.010000', total: '6.702694' },
      partner_fee: { percentage_fee: 200, flat_fee: '1.500000' },
    });
  });

  it('quotes a payout on the sender side with a percentage-only partner fee', async () => {
    const quote = await createQuote('/v1/quote', {
      sender: { currency: 'USDT', payment_rail: 'solana', amount: '250.5' },
      receiver: { currency: 'MXN', payment_rail: 'spei' },
      partner_fee: { percentage_fee: 75 },
    });
    expect(quote).toMatchObject({
      sender: { amount: '250.500000' },
      receiver: { amount: '4188.27' },
      quotation: '16.93200000',
      fees: { service_fee: '1.252500', partner_fee: '1.878750', network_fee: '0.010000', total: '3.141250' },
      partner_fee: { percentage_fee: 75, flat_fee: '0.000000' },
    });
  });

  it('quotes only the rate when no amount is given', async () => {
    const quote = await createQuote('/v1/quote', {
      sender: { currency: 'USDT', payment_rail: 'solana' },
      receiver: { currency: 'ARS', payment_rail: 'cvu' },
      partner_fee: { flat_fee: '0.5' },
    });
    expect(quote).toEqual({
      id: quote.id,
      type: 'payout',
      status: 'active',
      fixed_side: null,
      sender: { currency: 'USDT', payment_rail: 'solana', amount: null },
      receiver: { currency: 'ARS', payment_rail: 'cvu', amount: null },
      quotation: '990.00000000',
      fees: {
        currency: 'USDT',
        service_fee: null,
        service_fee_percentage: 50,
        partner_fee: null,
        network_fee: '0.010000',
        total: null,
      },
      partner_fee: { percentage_fee: 0, flat_fee: '0.500000' },
      ...timestamps,
    });
  });

  it('quotes a EUR pay-in into USDT', async () => {
    const quote = await createQuote('/v1/quote', {
      sender: { currency: 'EUR', payment_rail: 'sepa', amount: '200' },
      receiver: { currency: 'USDT', payment_rail: 'solana' },
    });
    // network roundUp(0.01 / 1.0847826) = 0.01; service 1.00; C = 198.99; 198.99 x 1.0847826 = 215.86088957...
    expect(quote).toMatchObject({
      quotation: '1.08478260',
      fees: { service_fee: '1.00', network_fee: '0.01', total: '1.01' },
      receiver: { amount: '215.860889' },
    });
  });

  it('stores the quote with its locked terms', async () => {
    const quote = await createQuote('/v1/quote', payin({ partner_fee: { percentage_fee: 150, flat_fee: '2.00' } }));
    const row = await harness.prisma.quote.findUniqueOrThrow({ where: { id: quote.id } });
    expect({
      partnerId: row.partnerId,
      type: row.type,
      status: row.status,
      fixedSide: row.fixedSide,
      senderAmount: row.senderAmount?.toFixed(2),
      receiverAmount: row.receiverAmount?.toFixed(6),
      rates: row.rates.map((rate) => rate.toFixed(8)),
      serviceFeeBps: row.serviceFeeBps,
      partnerFeeBps: row.partnerFeeBps,
      partnerFlatFee: row.partnerFlatFee?.toFixed(2),
      networkFee: row.networkFee.toFixed(2),
      usedBy: row.usedBy,
    }).toEqual({
      partnerId: partner.partnerId,
      type: 'payin',
      status: 'active',
      fixedSide: 'sender',
      senderAmount: '1000.00',
      receiverAmount: '976.013010',
      rates: ['0.99900000'],
      serviceFeeBps: 50,
      partnerFeeBps: 150,
      partnerFlatFee: '2.00',
      networkFee: '1.01',
      usedBy: null,
    });
    // Quotes have no webhook event types (SPEC 6): nothing is recorded in the outbox.
    expect(await harness.prisma.event.count({ where: { resourceId: quote.id } })).toBe(0);
  });
});

describe('POST /v1/quote/fiat-to-fiat', () => {
  it('quotes with the amount on the sender side, with a partner fee', async () => {
    const response = await partner.api
      .post('/v1/quote/fiat-to-fiat')
      .send(fiatToFiat({ partner_fee: { percentage_fee: 100, flat_fee: '5.00' } }));
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.any(String),
      type: 'fiat_to_fiat',
      status: 'active',
      fixed_side: 'sender',
      sender: { currency: 'BRL', payment_rail: 'pix', amount: '1000.00' },
      stablecoin: { currency: 'USDC', payment_rail: 'solana', amount: '195.008060' },
      receiver: { currency: 'MXN', payment_rail: 'spei', amount: '3301.87' },
      sender_quotation: '0.19900000',
      receiver_quotation: '16.93200000',
      fees: {
        currency: 'BRL',
        service_fee: '5.00',
        service_fee_percentage: 50,
        partner_fee: '15.00',
        network_fee: '0.06',
        total: '20.06',
      },
      partner_fee: { percentage_fee: 100, flat_fee: '5.00' },
      ...timestamps,
    });
  });

  it('quotes with the amount on the receiver side, without and with a partner fee', async () => {
    const body = {
      sender: { currency: 'EUR', payment_rail: 'sepa' },
      stablecoin: { currency: 'USDT', payment_rail: 'ethereum' },
      receiver: { currency: 'ARS', payment_rail: 'cvu', amount: '100000' },
    };
    const plain = await createQuote('/v1/quote/fiat-to-fiat', body);
    expect(plain).toMatchObject({
      fixed_side: 'receiver',
      sender: { currency: 'EUR', amount: '94.53' },
      stablecoin: { currency: 'USDT', amount: '101.010102' },
      receiver: { currency: 'ARS', amount: '100000.00' },
      sender_quotation: '1.08478260',
      receiver_quotation: '990.00000000',
      fees: { service_fee: '0.48', partner_fee: '0.00', network_fee: '0.93', total: '1.41' },
    });
    const withFee = await createQuote('/v1/quote/fiat-to-fiat', {
      ...body,
      partner_fee: { percentage_fee: 150, flat_fee: '2.5' },
    });
    expect(withFee).toMatchObject({
      sender: { amount: '98.53' },
      stablecoin: { amount: '101.010102' },
      receiver: { amount: '100000.00' },
      fees: { service_fee: '0.50', partner_fee: '3.98', network_fee: '0.93', total: '5.41' },
    });
  });

  it('quotes only the rates when no amount is given', async () => {
    const quote = await createQuote('/v1/quote/fiat-to-fiat', {
      sender: { currency: 'USD', payment_rail: 'ach' },
      stablecoin: { currency: 'USDC', payment_rail: 'ethereum' },
      receiver: { currency: 'BRL', payment_rail: 'pix_account' },
    });
    expect(quote).toMatchObject({
      fixed_side: null,
      sender: { currency: 'USD', payment_rail: 'ach', amount: null },
      stablecoin: { currency: 'USDC', payment_rail: 'ethereum', amount: null },
      receiver: { currency: 'BRL', payment_rail: 'pix_account', amount: null },
      sender_quotation: '0.99900000',
      receiver_quotation: '4.97500000',
      fees: { currency: 'USD', service_fee: null, partner_fee: null, network_fee: '1.01', total: null },
      partner_fee: null,
    });
  });
});

describe('limits', () => {
  async function refused(path: string, body: object) {
    const response = await partner.api.post(path).send(body);
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('amount_out_of_range');
    return response.body.error.message as string;
  }

  it('refuses BRL amounts outside 1-1000, naming the range, and accepts the bounds', async () => {
    expect(
      await refused(
        '/v1/quote/fiat-to-fiat',
        fiatToFiat({ sender: { currency: 'BRL', payment_rail: 'pix', amount: '1000.01' } }),
      ),
    ).toBe('sender.amount 1000.01 BRL is outside the allowed range of 1 to 1000 BRL.');
    expect(
      await refused(
        '/v1/quote/fiat-to-fiat',
        fiatToFiat({ sender: { currency: 'BRL', payment_rail: 'pix', amount: '0.99' } }),
      ),
    ).toBe('sender.amount 0.99 BRL is outside the allowed range of 1 to 1000 BRL.');
    const payout = (amount: string) => ({
      sender: { currency: 'USDC', payment_rail: 'ethereum' },
      receiver: { currency: 'BRL', payment_rail: 'pix', amount },
    });
    expect(await refused('/v1/quote', payout('1000.01'))).toContain('1 to 1000 BRL');
    expect(await refused('/v1/quote', payout('0.5'))).toContain('1 to 1000 BRL');
    expect((await createQuote('/v1/quote', payout('1000'))).receiver).toMatchObject({ amount: '1000.00' });
    expect((await createQuote('/v1/quote', payout('1'))).sender).toMatchObject({ amount: '1.207042' });
  });

  it('refuses a computed amount outside its range', async () => {
    const message = await refused('/v1/quote', {
      sender: { currency: 'USDC', payment_rail: 'ethereum', amount: '1000' },
      receiver: { currency: 'BRL', payment_rail: 'pix' },
    });
    expect(message).toBe('receiver.amount would be 4945.15 BRL, outside the allowed range of 1 to 1000 BRL.');
    // 1 BRL buys 3.13 MXN: below the 20 MXN minimum.
    expect(
      await refused(
        '/v1/quote/fiat-to-fiat',
        fiatToFiat({ sender: { currency: 'BRL', payment_rail: 'pix', amount: '1' } }),
      ),
    ).toBe('receiver.amount would be 3.13 MXN, outside the allowed range of 20 to 1000000 MXN.');
  });

  it('applies the documented ranges of the other currencies', async () => {
    expect(
      await refused('/v1/quote', payin({ sender: { currency: 'USD', payment_rail: 'wire', amount: '50000.01' } })),
    ).toBe('sender.amount 50000.01 USD is outside the allowed range of 1 to 50000 USD.');
    expect(
      await refused('/v1/quote', {
        sender: { currency: 'USDT', payment_rail: 'solana' },
        receiver: { currency: 'ARS', payment_rail: 'cvu', amount: '999.99' },
      }),
    ).toBe('receiver.amount 999.99 ARS is outside the allowed range of 1000 to 50000000 ARS.');
  });

  it('refuses a sender amount that does not cover the fees', async () => {
    expect(
      await refused('/v1/quote', payin({ sender: { currency: 'USD', payment_rail: 'wire', amount: '1.02' } })),
    ).toBe('sender.amount 1.02 USD does not cover the fees of 1.02 USD.');
  });

  it('follows AMOUNT_RANGES', async () => {
    const ranges = parseAmountRanges('USD:10-20') as AmountRanges;
    const app = harness.createApp({ ...harness.services, config: { ...harness.config, amountRanges: ranges } });
    const api = () => request(app.callback()).post('/v1/quote').set('Authorization', partner.apiKey);
    const tooLarge = await api().send(payin({ sender: { currency: 'USD', payment_rail: 'wire', amount: '20.01' } }));
    expect(tooLarge.status).toBe(422);
    expect(tooLarge.body.error.message).toBe('sender.amount 20.01 USD is outside the allowed range of 10 to 20 USD.');
    const inside = await api().send(payin({ sender: { currency: 'USD', payment_rail: 'wire', amount: '20' } }));
    expect(inside.status).toBe(201);
  });

  it('checks the amount of a rate-only quote when it is given', async () => {
    const quote = await createQuote('/v1/quote', {
      sender: { currency: 'USDC', payment_rail: 'solana' },
      receiver: { currency: 'BRL', payment_rail: 'pix' },
    });
    const row = await harness.prisma.quote.findUniqueOrThrow({ where: { id: quote.id } });
    const terms = termsOf(row);
    const priced = priceWithinRanges(
      terms,
      { side: 'receiver', amount: Money.parse('BRL', '500') },
      harness.config.amountRanges,
    );
    // C = roundUp(500 / 4.975) = 100.502513; S = 101.017602 (101.017601 leaves 100.502512 after fees).
    expect(priced.sender.toString()).toBe('101.017602');
    expect(() =>
      priceWithinRanges(terms, { side: 'receiver', amount: Money.parse('BRL', '1500') }, harness.config.amountRanges),
    ).toThrow('receiver.amount 1500.00 BRL is outside the allowed range of 1 to 1000 BRL.');
  });
});

describe('validation', () => {
  async function details(path: string, body: unknown) {
    const response = await partner.api.post(path).send(body as object);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('validation_error');
    return response.body.error.details as { code: string; param: string; message: string }[];
  }
  const one = (code: string, param: string, message: string | RegExp) => [
    { code, param, message: typeof message === 'string' ? message : expect.stringMatching(message) },
  ];

  it('reports every missing field of an empty body', async () => {
    expect(await details('/v1/quote', {})).toEqual([
      { code: 'missing_param', param: 'sender', message: 'is required' },
      { code: 'missing_param', param: 'receiver', message: 'is required' },
    ]);
    expect(await details('/v1/quote/fiat-to-fiat', {})).toEqual([
      { code: 'missing_param', param: 'sender', message: 'is required' },
      { code: 'missing_param', param: 'stablecoin', message: 'is required' },
      { code: 'missing_param', param: 'receiver', message: 'is required' },
    ]);
    expect(await details('/v1/quote', { sender: {}, receiver: { currency: 'USDC' } })).toEqual([
      { code: 'missing_param', param: 'sender.currency', message: 'is required' },
      { code: 'missing_param', param: 'sender.payment_rail', message: 'is required' },
      { code: 'missing_param', param: 'receiver.payment_rail', message: 'is required' },
    ]);
  });

  it.each([
    [
      'an unknown currency',
      payin({ sender: { currency: 'GBP', payment_rail: 'wire' } }),
      'invalid_param',
      'sender.currency',
      /^must be one of: "USD", "EUR"/,
    ],
    [
      'an unknown rail',
      payin({ receiver: { currency: 'USDC', payment_rail: 'polygon' } }),
      'invalid_param',
      'receiver.payment_rail',
      /^must be one of: "pix"/,
    ],
    [
      'a rail of another currency',
      payin({ sender: { currency: 'USD', payment_rail: 'sepa' } }),
      'invalid_param',
      'sender.payment_rail',
      'must be one of wire, ach for USD',
    ],
    [
      'a chain for fiat',
      payin({ sender: { currency: 'EUR', payment_rail: 'solana' } }),
      'invalid_param',
      'sender.payment_rail',
      'must be one of sepa for EUR',
    ],
    [
      'a fiat rail for a stablecoin',
      payin({ receiver: { currency: 'USDC', payment_rail: 'wire' } }),
      'invalid_param',
      'receiver.payment_rail',
      'must be one of ethereum, solana for USDC',
    ],
    [
      'a pay-in in BRL',
      payin({ sender: { currency: 'BRL', payment_rail: 'pix' } }),
      'invalid_param',
      'sender.currency',
      'must be USD or EUR for a pay-in (or a stablecoin for a payout)',
    ],
    [
      'fiat on both sides',
      payin({ receiver: { currency: 'BRL', payment_rail: 'pix' } }),
      'invalid_param',
      'receiver.currency',
      /^must be a stablecoin \(USDC, USDT\) for a pay-in; for fiat to fiat use POST \/v1\/quote\/fiat-to-fiat/,
    ],
    [
      'stablecoins on both sides',
      payin({ sender: { currency: 'USDT', payment_rail: 'solana' } }),
      'invalid_param',
      'receiver.currency',
      /wallet transfer and needs no quote/,
    ],
    [
      'amounts on both sides',
      payin({ receiver: { currency: 'USDC', payment_rail: 'ethereum', amount: '10' } }),
      'invalid_param',
      'receiver.amount',
      'cannot be combined with sender.amount: give the amount on one side only, or on neither',
    ],
    [
      'a number as amount',
      payin({ sender: { currency: 'USD', payment_rail: 'wire', amount: 100 } }),
      'invalid_param',
      'sender.amount',
      'must be a string',
    ],
    [
      'a negative amount',
      payin({ sender: { currency: 'USD', payment_rail: 'wire', amount: '-5' } }),
      'invalid_param',
      'sender.amount',
      'must be a decimal number as a string, e.g. "100.50"',
    ],
    [
      'an exponent',
      payin({ sender: { currency: 'USD', payment_rail: 'wire', amount: '1e3' } }),
      'invalid_param',
      'sender.amount',
      'must be a decimal number as a string, e.g. "100.50"',
    ],
    [
      'a zero amount',
      payin({ sender: { currency: 'USD', payment_rail: 'wire', amount: '0.00' } }),
      'invalid_param',
      'sender.amount',
      'must be greater than 0',
    ],
    [
      'cents of a cent',
      payin({ sender: { currency: 'USD', payment_rail: 'wire', amount: '10.001' } }),
      'invalid_param',
      'sender.amount',
      'must have at most 2 decimal places for USD',
    ],
    [
      '7 decimals of USDC',
      {
        sender: { currency: 'USDC', payment_rail: 'ethereum', amount: '1.1234567' },
        receiver: { currency: 'MXN', payment_rail: 'spei' },
      },
      'invalid_param',
      'sender.amount',
      'must have at most 6 decimal places for USDC',
    ],
    [
      'a fractional percentage fee',
      payin({ partner_fee: { percentage_fee: 1.5 } }),
      'invalid_param',
      'partner_fee.percentage_fee',
      'must be an int',
    ],
    [
      'a percentage fee as a string',
      payin({ partner_fee: { percentage_fee: '150' } }),
      'invalid_param',
      'partner_fee.percentage_fee',
      'must be a number',
    ],
    [
      'a percentage fee above 10%',
      payin({ partner_fee: { percentage_fee: 1001 } }),
      'invalid_param',
      'partner_fee.percentage_fee',
      'must be at most 1000',
    ],
    [
      'a negative percentage fee',
      payin({ partner_fee: { percentage_fee: -1 } }),
      'invalid_param',
      'partner_fee.percentage_fee',
      'must be at least 0',
    ],
    [
      'a flat fee as a number',
      payin({ partner_fee: { flat_fee: 2 } }),
      'invalid_param',
      'partner_fee.flat_fee',
      'must be a string',
    ],
    [
      'a negative flat fee',
      payin({ partner_fee: { flat_fee: '-2' } }),
      'invalid_param',
      'partner_fee.flat_fee',
      'must be a decimal number as a string, e.g. "2.50"',
    ],
    [
      'a flat fee finer than the sender currency',
      payin({ partner_fee: { flat_fee: '2.001' } }),
      'invalid_param',
      'partner_fee.flat_fee',
      'must have at most 2 decimal places for USD (the sender currency)',
    ],
    [
      'an unknown partner_fee field',
      payin({ partner_fee: { fixed_fee: '2' } }),
      'invalid_param',
      'partner_fee.fixed_fee',
      'is not a known field',
    ],
    ['an unknown field', payin({ amount: '10' }), 'invalid_param', 'amount', 'is not a known field'],
    [
      'a stablecoin side',
      payin({ stablecoin: { currency: 'USDC', payment_rail: 'solana' } }),
      'invalid_param',
      'stablecoin',
      'is not a known field',
    ],
    [
      'an unknown side field',
      payin({ receiver: { currency: 'USDC', payment_rail: 'solana', wallet_id: 'x' } }),
      'invalid_param',
      'receiver.wallet_id',
      'is not a known field',
    ],
  ])('POST /v1/quote refuses %s', async (_, body, code, param, message) => {
    expect(await details('/v1/quote', body)).toEqual(one(code, param, message));
  });

  it.each([
    [
      'a stablecoin as sender',
      fiatToFiat({ sender: { currency: 'USDC', payment_rail: 'pix' } }),
      'sender.currency',
      /^must be one of: "USD", "EUR", "BRL", "MXN", "ARS"$/,
    ],
    [
      'a chain as the sender rail',
      fiatToFiat({ sender: { currency: 'BRL', payment_rail: 'solana' } }),
      'sender.payment_rail',
      /^must be one of: "pix"/,
    ],
    [
      'a fiat intermediary',
      fiatToFiat({ stablecoin: { currency: 'USD', payment_rail: 'solana' } }),
      'stablecoin.currency',
      'must be one of: "USDC", "USDT"',
    ],
    [
      'a fiat rail for the stablecoin',
      fiatToFiat({ stablecoin: { currency: 'USDC', payment_rail: 'pix' } }),
      'stablecoin.payment_rail',
      'must be one of: "ethereum", "solana"',
    ],
    [
      'an amount on the stablecoin',
      fiatToFiat({ stablecoin: { currency: 'USDC', payment_rail: 'solana', amount: '5' } }),
      'stablecoin.amount',
      'is not a known field',
    ],
    [
      'the same currency on both sides',
      fiatToFiat({ receiver: { currency: 'BRL', payment_rail: 'pix_account' } }),
      'receiver.currency',
      'must differ from sender.currency: fiat to fiat converts between two currencies',
    ],
    [
      'a rail of another currency',
      fiatToFiat({ receiver: { currency: 'MXN', payment_rail: 'pix' } }),
      'receiver.payment_rail',
      'must be one of spei for MXN',
    ],
    [
      'ARS on sepa',
      fiatToFiat({ receiver: { currency: 'ARS', payment_rail: 'sepa' } }),
      'receiver.payment_rail',
      'must be one of cvu for ARS',
    ],
    [
      'amounts on both sides',
      fiatToFiat({ receiver: { currency: 'MXN', payment_rail: 'spei', amount: '100' } }),
      'receiver.amount',
      /^cannot be combined with sender.amount/,
    ],
    [
      'cents of a cent',
      fiatToFiat({ sender: { currency: 'BRL', payment_rail: 'pix', amount: '1.001' } }),
      'sender.amount',
      'must have at most 2 decimal places for BRL',
    ],
    [
      'a flat fee finer than the sender currency',
      fiatToFiat({ partner_fee: { flat_fee: '0.001' } }),
      'partner_fee.flat_fee',
      'must have at most 2 decimal places for BRL (the sender currency)',
    ],
    [
      'a missing stablecoin rail',
      fiatToFiat({ stablecoin: { currency: 'USDT' } }),
      'stablecoin.payment_rail',
      'is required',
    ],
  ])('POST /v1/quote/fiat-to-fiat refuses %s', async (_, body, param, message) => {
    const code = message === 'is required' ? 'missing_param' : 'invalid_param';
    expect(await details('/v1/quote/fiat-to-fiat', body)).toEqual(one(code, param, message));
  });

  it('reports every problem at once', async () => {
    const problems = await details('/v1/quote/fiat-to-fiat', {
      sender: { currency: 'BRL', payment_rail: 'spei', amount: '5.555' },
      stablecoin: { currency: 'USDC', payment_rail: 'tron' },
      receiver: { currency: 'BRL', payment_rail: 'pix', amount: '1' },
      partner_fee: { percentage_fee: 5000, flat_fee: '1.234' },
    });
    expect(problems.map((problem) => problem.param).sort()).toEqual(
      [
        'partner_fee.flat_fee',
        'partner_fee.percentage_fee',
        'receiver.amount',
        'receiver.currency',
        'sender.amount',
        'sender.payment_rail',
        'stablecoin.payment_rail',
      ].sort(),
    );
  });

  it('creates nothing when the request is invalid', async () => {
    const before = await harness.prisma.quote.count({ where: { partnerId: partner.partnerId } });
    await details('/v1/quote', payin({ sender: { currency: 'USD', payment_rail: 'wire', amount: '1.001' } }));
    expect(await harness.prisma.quote.count({ where: { partnerId: partner.partnerId } })).toBe(before);
  });
});

describe('GET /v1/quotes/{id}', () => {
  it('returns either kind of quote as it was created', async () => {
    const payinQuote = await createQuote('/v1/quote', payin());
    const f2f = await createQuote('/v1/quote/fiat-to-fiat', fiatToFiat());
    for (const quote of [payinQuote, f2f]) {
      const response = await partner.api.get(`/v1/quotes/${quote.id}`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual(quote);
    }
  });

  it("answers another partner's quote, an unknown id and a malformed id with 404", async () => {
    const quote = await createQuote('/v1/quote', payin());
    const intruder = await harness.createPartner('Intruder');
    for (const id of [quote.id, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const response = await intruder.api.get(`/v1/quotes/${id}`);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
  });

  it('is documented in the OpenAPI description with the pricing rules', async () => {
    const document = (await harness.http.get('/openapi.json')).body;
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/v1/quote', '/v1/quote/fiat-to-fiat', '/v1/quotes/{id}']),
    );
    expect(document.paths['/v1/quote'].post.description).toContain(
      'receiver roundDown(976.99 x 0.999) = 976.013010 USDC',
    );
    expect(Object.keys(document.paths['/v1/quote'].post.responses)).toEqual(
      expect.arrayContaining(['201', '400', '422']),
    );
  });
});

describe('lifetime', () => {
  const handleOf = (quoteId: string) => harness.env.client.workflow.getHandle(workflowIds.quote(quoteId));

  async function expectDomainError(promise: Promise<unknown>, code: string): Promise<DomainError> {
    const error = await promise.then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe(code);
    return error as DomainError;
  }

  it('expires exactly 5 minutes after creation', async () => {
    const quote = await createQuote('/v1/quote', payin());
    expect(Date.parse(quote.expires_at) - Date.parse(quote.created_at)).toBe(5 * 60 * 1000);
    expect(await handleOf(quote.id).query(quoteStateQuery)).toMatchObject({ status: 'active', usedBy: null });
  });

  it('is usable at 4:59 and returns the locked amounts', async () => {
    const quote = await createQuote('/v1/quote/fiat-to-fiat', fiatToFiat());
    await harness.env.sleep(4 * 60_000 + 59_000);
    const consumed = await consumeQuote(harness.services, partner.partnerId, quote.id, 'fiat_to_fiat', 'transaction-1');
    expect(consumed.quote).toEqual({ ...quote, status: 'used', updated_at: expect.any(String) });
    expect(consumed.terms.rates.map((rate) => rate.toFixed(8))).toEqual(['0.19900000', '16.93200000']);
    // Fees 5.00 + 0.06; C = 994.94 BRL; 994.94 x 0.199 = 197.99306; x 16.932 = 3352.418...
    expect(consumed.amounts?.receiver.format()).toBe('3352.41 MXN');
    expect(consumed.amounts?.stablecoin?.format()).toBe('197.993060 USDC');
    expect(consumed.amounts?.fees.total.format()).toBe('5.06 BRL');
    expect(await handleOf(quote.id).result()).toBe('used');
    const row = await harness.prisma.quote.findUniqueOrThrow({ where: { id: quote.id } });
    expect([row.status, row.usedBy]).toEqual(['used', 'transaction-1']);
    expect((await partner.api.get(`/v1/quotes/${quote.id}`)).body.status).toBe('used');
  });

  it('answers quote_expired at 5:00, persists expiry and shows it on GET', async () => {
    const quote = await createQuote('/v1/quote', payin());
    await harness.env.sleep('5 minutes');
    const error = await expectDomainError(
      consumeQuote(harness.services, partner.partnerId, quote.id, 'payin', 'transaction-2'),
      'quote_expired',
    );
    expect(apiErrorOf(error)?.status).toBe(422);
    expect(error.message).toBe(`Quote ${quote.id} expired at ${quote.expires_at}; request a new quote.`);
    expect(await handleOf(quote.id).result()).toBe('expired');
    expect((await partner.api.get(`/v1/quotes/${quote.id}`)).body).toEqual({
      ...quote,
      status: 'expired',
      updated_at: expect.any(String),
    });
  });

  it('answers quote_expired long after, from the table once the workflow has completed', async () => {
    const quote = await createQuote('/v1/quote', payin());
    expect(await handleOf(quote.id).result()).toBe('expired');
    await harness.env.sleep('1 hour');
    await expectDomainError(
      consumeQuote(harness.services, partner.partnerId, quote.id, 'payin', 'transaction-3'),
      'quote_expired',
    );
  });

  it('refuses at 5:00 in the workflow itself, whatever the API checked before', async () => {
    const quote = await createQuote('/v1/quote', payin());
    const handle = handleOf(quote.id);
    await harness.env.sleep('5 minutes');
    const refusal = await handle
      .executeUpdate(consumeQuoteUpdate, { args: [{ consumerId: 'direct', expectedType: 'payin' }] })
      .then(
        () => null,
        (error: unknown) => error,
      );
    // Refused by the validator, or the workflow already completed after persisting the expiry.
    expect(refusal).not.toBeNull();
    expect(await handle.result()).toBe('expired');
    expect((await harness.prisma.quote.findUniqueOrThrow({ where: { id: quote.id } })).status).toBe('expired');
  });

  it('is used once: a second consumer gets quote_already_used, the same consumer its answer again', async () => {
    const quote = await createQuote('/v1/quote', payin());
    const first = await consumeQuote(harness.services, partner.partnerId, quote.id, 'payin', 'transaction-4');
    const again = await consumeQuote(harness.services, partner.partnerId, quote.id, 'payin', 'transaction-4');
    expect(again.quote).toEqual(first.quote);
    const error = await expectDomainError(
      consumeQuote(harness.services, partner.partnerId, quote.id, 'payin', 'transaction-5'),
      'quote_already_used',
    );
    expect(apiErrorOf(error)?.status).toBe(422);
    // The timer does not turn a used quote into an expired one.
    await harness.env.sleep('10 minutes');
    expect((await partner.api.get(`/v1/quotes/${quote.id}`)).body.status).toBe('used');
  });

  it('is used once under concurrent attempts', async () => {
    const quote = await createQuote('/v1/quote', payin());
    const attempts = await Promise.allSettled(
      Array.from({ length: 8 }, (_, index) =>
        consumeQuote(harness.services, partner.partnerId, quote.id, 'payin', `concurrent-${index}`),
      ),
    );
    const succeeded = attempts.filter((attempt) => attempt.status === 'fulfilled');
    const refused = attempts.filter((attempt): attempt is PromiseRejectedResult => attempt.status === 'rejected');
    expect(succeeded).toHaveLength(1);
    expect(refused.map((attempt) => (attempt.reason as DomainError).code)).toEqual(Array(7).fill('quote_already_used'));
    const row = await harness.prisma.quote.findUniqueOrThrow({ where: { id: quote.id } });
    expect(row.status).toBe('used');
    const winner = (succeeded[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof consumeQuote>>>).value;
    expect(row.usedBy).toBe(`concurrent-${attempts.indexOf(succeeded[0] as never)}`);
    expect(winner.quote.status).toBe('used');
  });

  it('is used once under concurrent updates sent straight to the workflow', async () => {
    const quote = await createQuote('/v1/quote', payin());
    const handle = handleOf(quote.id);
    const attempts = await Promise.allSettled(
      Array.from({ length: 5 }, (_, index) =>
        handle.executeUpdate(consumeQuoteUpdate, { args: [{ consumerId: `direct-${index}`, expectedType: 'payin' }] }),
      ),
    );
    expect(attempts.filter((attempt) => attempt.status === 'fulfilled')).toHaveLength(1);
    expect(await handle.result()).toBe('used');
  });

  it('refuses by the wall clock once expires_at has passed, even before the timer fires', async () => {
    const quote = await createQuote('/v1/quote', payin());
    // As if the API's clock were past expires_at while the workflow had not run its timer yet.
    const past = new Date(Date.now() - 10 * 60_000);
    await harness.prisma.quote.update({
      where: { id: quote.id },
      data: { createdAt: past, expiresAt: new Date(past.getTime() + 5 * 60_000) },
    });
    await expectDomainError(
      consumeQuote(harness.services, partner.partnerId, quote.id, 'payin', 'late'),
      'quote_expired',
    );
    expect(await handleOf(quote.id).query(quoteStateQuery)).toMatchObject({ status: 'active', usedBy: null });
  });

  describe('when the workflow completes between reading the quote and asking it', () => {
    /** Services whose first read of the quote returns `row`, as read just before the workflow completed. */
    function readingFirst(row: object) {
      // The quote is read with SQL on the client's pool (findQuoteOrThrow): its first read answers `row`.
      let served = false;
      const pool = sqlPoolOf(harness.prisma);
      const staleClient = (client: { query: (...args: unknown[]) => unknown }) =>
        new Proxy(client, {
          get: (target, property) =>
            property === 'query'
              ? (text: unknown, ...rest: unknown[]) => {
                  if (!served && typeof text === 'string' && /^select \* from "quotes" where "id" = \$1$/.test(text)) {
                    served = true;
                    return Promise.resolve({ rows: [row], command: 'SELECT', rowCount: 1 });
                  }
                  return target.query(text, ...rest);
                }
              : Reflect.get(target, property),
        });
      const stalePool = new Proxy(pool, {
        get: (target, property) =>
          property === 'connect' ? async () => staleClient(await target.connect()) : Reflect.get(target, property),
      });
      const staleBuilder = sqlBuilderOn(stalePool);
      const prisma = new Proxy(harness.prisma, {
        get: (target, property) => (property === SQL_BUILDER ? staleBuilder : Reflect.get(target, property)),
      });
      return { ...harness.services, prisma, servedStale: () => served };
    }

    it('answers from the table: used by another consumer, or by the same one', async () => {
      const quote = await createQuote('/v1/quote', payin());
      const before = await harness.prisma.quote.findUniqueOrThrow({ where: { id: quote.id } });
      await consumeQuote(harness.services, partner.partnerId, quote.id, 'payin', 'first');
      const second = readingFirst(before);
      await expectDomainError(
        consumeQuote(second, partner.partnerId, quote.id, 'payin', 'second'),
        'quote_already_used',
      );
      const first = readingFirst(before);
      const again = await consumeQuote(first, partner.partnerId, quote.id, 'payin', 'first');
      expect(again.quote.status).toBe('used');
      expect([second.servedStale(), first.servedStale()]).toEqual([true, true]);
    });

    it('answers from the table: expired', async () => {
      const quote = await createQuote('/v1/quote', payin());
      const before = await harness.prisma.quote.findUniqueOrThrow({ where: { id: quote.id } });
      expect(await handleOf(quote.id).result()).toBe('expired');
      const late = readingFirst(before);
      await expectDomainError(consumeQuote(late, partner.partnerId, quote.id, 'payin', 'late'), 'quote_expired');
      expect(late.servedStale()).toBe(true);
    });
  });

  it('stays active when a use cannot be persisted, and still expires', async () => {
    const quote = await createQuote('/v1/quote', payin());
    const handle = handleOf(quote.id);
    // As if the quote's creation had been rolled back after its workflow started.
    await harness.prisma.quote.delete({ where: { id: quote.id } });
    const failure = await handle
      .executeUpdate(consumeQuoteUpdate, { args: [{ consumerId: 'orphan', expectedType: 'payin' }] })
      .then(
        () => null,
        (error: unknown) => error as { cause?: { cause?: Error } },
      );
    // The update fails with the activity's failure, whose cause is the activity's own error.
    expect(failure?.cause?.cause?.message).toBe(`quote ${quote.id} cannot be used: it is missing`);
    expect(await handle.query(quoteStateQuery)).toMatchObject({ status: 'active', usedBy: null });
    expect(await handle.result()).toBe('expired');
  });

  it('refuses another type of quote without using it', async () => {
    const quote = await createQuote('/v1/quote', payin());
    const error = await expectDomainError(
      consumeQuote(harness.services, partner.partnerId, quote.id, 'fiat_to_fiat', 'transaction-6'),
      'quote_type_mismatch',
    );
    expect(error.message).toBe('quote_id is a payin quote; this operation needs a fiat_to_fiat quote.');
    expect(await handleOf(quote.id).query(quoteStateQuery)).toMatchObject({ status: 'active' });
  });

  it("answers not_found for another partner's quote and an unknown or malformed id, without using it", async () => {
    const quote = await createQuote('/v1/quote', payin());
    const intruder = await harness.createPartner('Intruder');
    for (const id of [quote.id, '00000000-0000-4000-8000-000000000000', 'nope']) {
      await expectDomainError(
        consumeQuote(harness.services, intruder.partnerId, id, 'payin', 'transaction-7'),
        'not_found',
      );
    }
    expect((await partner.api.get(`/v1/quotes/${quote.id}`)).body.status).toBe('active');
  });
});
