// Quote pricing without I/O: the sandbox market data, the fee and rounding rules, and the identity
// "sender amount = converted amount + fees; converted amount and receiver amount follow from the
// locked rates" for many random quotes. Expected values are recomputed here with plain decimal.js.
import { loadConfig, parseAmountRanges } from '../src/config';
import { Currency, Decimal, DecimalValue, decimalsOf, Money, stablecoins } from '../src/domain/money';
import {
  FeesExceedAmountError,
  lockRate,
  networkFeeInSenderCurrency,
  payinCurrencies,
  priceQuote,
  QuoteTerms,
  QuoteType,
} from '../src/domain/quotes';
import { blockchains, railsByCurrency } from '../src/domain/rails';
import { SandboxRateProvider, UnconfiguredRateProvider } from '../src/providers/rates';

const provider = new SandboxRateProvider();

/** Deterministic pseudo-random numbers (mulberry32), so a failure can be replayed. */
function randomSource(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => items[int(0, items.length - 1)] as T;
  return { int, pick, chance: (p: number) => next() < p };
}

const up = (value: DecimalValue, currency: Currency) =>
  new Decimal(value).toDecimalPlaces(decimalsOf(currency), Decimal.ROUND_UP);
const down = (value: DecimalValue, currency: Currency) =>
  new Decimal(value).toDecimalPlaces(decimalsOf(currency), Decimal.ROUND_DOWN);

/** A random amount between 0 and `maxUnits` whole units, in the currency's minor units. */
function randomAmount(random: ReturnType<typeof randomSource>, currency: Currency, maxUnits: number): Money {
  const minor =
    BigInt(random.int(1, maxUnits * 10 ** Math.min(decimalsOf(currency), 2))) *
      BigInt(10 ** Math.max(0, decimalsOf(currency) - 2)) +
    BigInt(random.int(0, 10 ** Math.max(0, decimalsOf(currency) - 2) - 1));
  return Money.fromMinorUnits(currency, minor);
}

async function randomTerms(random: ReturnType<typeof randomSource>): Promise<QuoteTerms> {
  const type = random.pick<QuoteType>(['payin', 'payout', 'fiat_to_fiat']);
  const fiats: Currency[] = ['USD', 'EUR', 'BRL', 'MXN', 'ARS'];
  const stablecoin = random.pick(stablecoins);
  const chain = random.pick(blockchains);
  let path: Currency[];
  if (type === 'payin') path = [random.pick(payinCurrencies), stablecoin];
  else if (type === 'payout') path = [stablecoin, random.pick(fiats)];
  else {
    const sender = random.pick(fiats);
    path = [sender, stablecoin, random.pick(fiats.filter((currency) => currency !== sender))];
  }
  const rates: Decimal[] = [];
  for (let leg = 0; leg + 1 < path.length; leg += 1) {
    rates.push(lockRate(await provider.exchangeRate(path[leg] as Currency, path[leg + 1] as Currency)));
  }
  const sender = path[0] as Currency;
  const leg = (currency: Currency) => ({ currency, paymentRail: random.pick(railsByCurrency[currency]) });
  return {
    type,
    sender: leg(sender),
    stablecoin: type === 'fiat_to_fiat' ? { currency: stablecoin, paymentRail: chain } : null,
    receiver: leg(path[path.length - 1] as Currency),
    rates,
    serviceFeeBps: random.pick([0, 1, 30, 50, 99, 250, 1000]),
    partnerFee: random.chance(0.7)
      ? {
          percentageBps: random.int(0, 1000),
          flat: random.chance(0.5) ? randomAmount(random, sender, 20) : Money.zero(sender),
        }
      : null,
    networkFee: networkFeeInSenderCurrency(sender, await provider.networkFee(stablecoin, chain), rates[0] as Decimal),
  };
}

/** Fees of a sender amount, recomputed from the documented rule. */
function expectedFees(terms: QuoteTerms, sender: Decimal): { service: Decimal; partner: Decimal; total: Decimal } {
  const currency = terms.sender.currency;
  const service = up(sender.times(terms.serviceFeeBps).div(10_000), currency);
  const partner = terms.partnerFee
    ? up(sender.times(terms.partnerFee.percentageBps).div(10_000), currency).plus(terms.partnerFee.flat.amount)
    : new Decimal(0);
  return { service, partner, total: service.plus(partner).plus(terms.networkFee.amount) };
}

function currenciesOf(terms: QuoteTerms): Currency[] {
  return terms.stablecoin
    ? [terms.sender.currency, terms.stablecoin.currency, terms.receiver.currency]
    : [terms.sender.currency, terms.receiver.currency];
}

describe('sandbox market data', () => {
  it.each([
    ['USD', 'USDC', '0.99900000'],
    ['EUR', 'USDT', '1.08478260'],
    ['USDC', 'BRL', '4.97500000'],
    ['BRL', 'USDC', '0.19900000'],
    ['USDT', 'MXN', '16.93200000'],
    ['MXN', 'USDC', '0.05858823'],
    ['USDC', 'ARS', '990.00000000'],
    ['ARS', 'USDT', '0.00099000'],
    ['USDC', 'USD', '0.99900000'],
    ['USDT', 'EUR', '0.91816000'],
  ] as const)('locks %s -> %s at %s', async (from, to, rate) => {
    expect(lockRate(await provider.exchangeRate(from, to)).toFixed(8)).toBe(rate);
  });

  it('charges 1 on ethereum and 0.01 on solana, in the stablecoin', async () => {
    expect((await provider.networkFee('USDC', 'ethereum')).format()).toBe('1.000000 USDC');
    expect((await provider.networkFee('USDT', 'solana')).format()).toBe('0.010000 USDT');
  });

  it('has no market between two fiat currencies or two stablecoins', async () => {
    await expect(provider.exchangeRate('BRL', 'MXN')).rejects.toThrow('no market for BRL -> MXN');
    await expect(provider.exchangeRate('USDC', 'USDT')).rejects.toThrow('no market');
  });

  it('production refuses to quote until a market-data feed is configured', async () => {
    await expect(new UnconfiguredRateProvider().exchangeRate('USD', 'USDC')).rejects.toThrow('no market-data feed');
    await expect(new UnconfiguredRateProvider().networkFee('USDC', 'solana')).rejects.toThrow('no network-fee feed');
  });

  it('converts the network fee to the sender currency at the locked rate, rounded up', () => {
    const fee = Money.parse('USDC', '1');
    expect(networkFeeInSenderCurrency('USD', fee, new Decimal('0.999')).format()).toBe('1.01 USD');
    expect(networkFeeInSenderCurrency('BRL', Money.parse('USDC', '0.01'), new Decimal('0.199')).format()).toBe(
      '0.06 BRL',
    );
    expect(networkFeeInSenderCurrency('USDC', fee, new Decimal('4.975')).format()).toBe('1.000000 USDC');
  });
});

describe('the reconciliation identity', () => {
  const random = randomSource(20261122);
  const CASES = 1500;

  it(`holds for ${CASES} random quotes with the amount on the sender side`, async () => {
    let priced = 0;
    for (let i = 0; i < CASES; i += 1) {
      const terms = await randomTerms(random);
      const path = currenciesOf(terms);
      const sender = randomAmount(random, terms.sender.currency, random.pick([3, 1000, 100_000]));
      const fees = expectedFees(terms, sender.amount);
      if (sender.amount.lte(fees.total)) {
        expect(() => priceQuote(terms, { side: 'sender', amount: sender })).toThrow(FeesExceedAmountError);
        continue;
      }
      const quote = priceQuote(terms, { side: 'sender', amount: sender });
      priced += 1;
      expect(quote.sender.equals(sender)).toBe(true);
      expect(quote.fees.service.amount.equals(fees.service)).toBe(true);
      expect(quote.fees.partner.amount.equals(fees.partner)).toBe(true);
      expect(quote.fees.network.equals(terms.networkFee)).toBe(true);
      expect(quote.fees.total.amount.equals(fees.total)).toBe(true);
      // S = C + fees, to the minor unit.
      expect(quote.converted.plus(quote.fees.total).equals(quote.sender)).toBe(true);
      // Each leg: next = roundDown(previous x rate).
      let along = quote.converted.amount;
      terms.rates.forEach((rate, leg) => {
        along = down(along.times(rate), path[leg + 1] as Currency);
        if (terms.stablecoin && leg === 0) expect(quote.stablecoin?.amount.equals(along)).toBe(true);
      });
      expect(quote.receiver.amount.equals(along)).toBe(true);
      expect(quote.receiver.currency).toBe(terms.receiver.currency);
    }
    expect(priced).toBeGreaterThan(CASES * 0.8);
  });

  it(`holds for ${CASES} random quotes with the amount on the receiver side, with the smallest sender amount`, async () => {
    for (let i = 0; i < CASES; i += 1) {
      const terms = await randomTerms(random);
      const path = currenciesOf(terms);
      const receiver = randomAmount(random, terms.receiver.currency, random.pick([3, 1000, 100_000]));
      const quote = priceQuote(terms, { side: 'receiver', amount: receiver });
      expect(quote.receiver.equals(receiver)).toBe(true);
      // Backwards along the legs: previous = roundUp(next / rate).
      let needed = receiver.amount;
      for (let leg = terms.rates.length - 1; leg >= 0; leg -= 1) {
        needed = up(needed.div(terms.rates[leg] as Decimal), path[leg] as Currency);
        if (terms.stablecoin && leg === 1) expect(quote.stablecoin?.amount.equals(needed)).toBe(true);
      }
      expect(quote.converted.amount.equals(needed)).toBe(true);
      const fees = expectedFees(terms, quote.sender.amount);
      expect(quote.fees.total.amount.equals(fees.total)).toBe(true);
      expect(quote.fees.service.amount.equals(fees.service)).toBe(true);
      expect(quote.fees.partner.amount.equals(fees.partner)).toBe(true);
      // S = C + fees exactly, and one minor unit less would not cover C.
      expect(quote.sender.amount.equals(needed.plus(fees.total))).toBe(true);
      const less = quote.sender.minus(Money.minorUnit(quote.sender.currency)).amount;
      expect(less.minus(expectedFees(terms, less).total).lt(needed)).toBe(true);
      // What C buys covers the receiver amount: the rounding remainder stays with the service.
      let bought = quote.converted.amount;
      terms.rates.forEach((rate, leg) => (bought = down(bought.times(rate), path[leg + 1] as Currency)));
      expect(bought.gte(receiver.amount)).toBe(true);
    }
  });
});

describe('pricing edge cases', () => {
  const terms: QuoteTerms = {
    type: 'payin',
    sender: { currency: 'USD', paymentRail: 'wire' },
    stablecoin: null,
    receiver: { currency: 'USDC', paymentRail: 'ethereum' },
    rates: [new Decimal('0.999')],
    serviceFeeBps: 50,
    partnerFee: { percentageBps: 150, flat: Money.parse('USD', '2') },
    networkFee: Money.parse('USD', '1.01'),
  };

  it('prices the documented example', () => {
    const quote = priceQuote(terms, { side: 'sender', amount: Money.parse('USD', '1000') });
    expect(JSON.parse(JSON.stringify(quote))).toEqual({
      fixedSide: 'sender',
      sender: '1000.00',
      stablecoin: null,
      receiver: '976.013010',
      fees: { service: '5.00', partner: '17.00', network: '1.01', total: '23.01' },
      converted: '976.99',
    });
  });

  it('refuses a sender amount that the fees use up, and accepts one minor unit more', () => {
    // 3.09: service 0.02 + partner 0.05 + 2.00 + network 1.01 = 3.08 leaves 0.01.
    expect(() => priceQuote(terms, { side: 'sender', amount: Money.parse('USD', '3.08') })).toThrow(
      '3.08 USD does not cover the fees of 3.08 USD',
    );
    const quote = priceQuote(terms, { side: 'sender', amount: Money.parse('USD', '3.09') });
    expect(quote.converted.toString()).toBe('0.01');
    expect(quote.receiver.toString()).toBe('0.009990');
  });

  it('refuses an amount in the wrong currency', () => {
    expect(() => priceQuote(terms, { side: 'receiver', amount: Money.parse('USD', '1') })).toThrow(
      'the receiver amount must be in USDC',
    );
  });
});

describe('AMOUNT_RANGES', () => {
  const base = { DATABASE_URL: 'postgresql://localhost/x', APP_ENV: 'sandbox' };

  it('defaults to BRL 1-1000 and the documented ranges', () => {
    const ranges = loadConfig(base).amountRanges;
    expect(
      Object.fromEntries(Object.entries(ranges).map(([code, r]) => [code, `${r.min.toString()}-${r.max.toString()}`])),
    ).toEqual({
      USD: '1.00-50000.00',
      EUR: '1.00-50000.00',
      BRL: '1.00-1000.00',
      MXN: '20.00-1000000.00',
      ARS: '1000.00-50000000.00',
      USDC: '1.000000-50000.000000',
      USDT: '1.000000-50000.000000',
    });
  });

  it('overrides the listed currencies only', () => {
    const ranges = loadConfig({ ...base, AMOUNT_RANGES: ' USD:10-25000.5 , BRL:0.5-2000' }).amountRanges;
    expect(ranges.USD.min.format()).toBe('10.00 USD');
    expect(ranges.USD.max.format()).toBe('25000.50 USD');
    expect(ranges.BRL.min.format()).toBe('0.50 BRL');
    expect(ranges.EUR.max.format()).toBe('50000.00 EUR');
  });

  it.each([
    ['BRL=1-1000', 'must look like BRL:1-1000'],
    ['GBP:1-10', 'unknown currency GBP'],
    ['USD:1-abc', 'bounds must be a decimal number'],
    ['USD:1.001-10', 'at most 2 decimal places'],
    ['USD:0-10', 'needs 0 < min <= max'],
    ['USD:10-5', 'needs 0 < min <= max'],
  ])('refuses %s, naming the variable', (value, problem) => {
    expect(() => loadConfig({ ...base, AMOUNT_RANGES: value })).toThrow(`Invalid configuration: AMOUNT_RANGES`);
    expect(parseAmountRanges(value)).toEqual(expect.stringContaining(problem));
  });

  it('reads QUOTE_SERVICE_FEE_BPS within 0-1000', () => {
    expect(loadConfig(base).quoteServiceFeeBps).toBe(50);
    expect(loadConfig({ ...base, QUOTE_SERVICE_FEE_BPS: '0' }).quoteServiceFeeBps).toBe(0);
    expect(() => loadConfig({ ...base, QUOTE_SERVICE_FEE_BPS: '1001' })).toThrow('QUOTE_SERVICE_FEE_BPS');
    expect(() => loadConfig({ ...base, QUOTE_SERVICE_FEE_BPS: '2.5' })).toThrow('QUOTE_SERVICE_FEE_BPS');
  });
});
