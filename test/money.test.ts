// The money type: currencies and minor units, parsing decimal strings, rounding, arithmetic, formatting.
import {
  amountTextProblem,
  currencies,
  currencyOf,
  Decimal,
  fiatCurrencies,
  isCurrency,
  Money,
  MoneyError,
  roundTo,
  stablecoins,
} from '../src/domain/money';

describe('currencyOf', () => {
  it('reads a currency column and refuses a value it does not know', () => {
    expect(currencyOf('BRL')).toBe('BRL');
    expect(() => currencyOf('BTC')).toThrow('unknown currency "BTC"');
    expect(() => currencyOf('brl')).toThrow();
  });
});

describe('currency table', () => {
  it('has 2 decimals for fiat and 6 for stablecoins', () => {
    expect(fiatCurrencies).toEqual(['USD', 'EUR', 'BRL', 'MXN', 'ARS']);
    expect(stablecoins).toEqual(['USDC', 'USDT']);
    for (const code of fiatCurrencies) expect(currencies[code].decimals).toBe(2);
    for (const code of stablecoins) expect(currencies[code].decimals).toBe(6);
  });

  it('recognises currency codes exactly', () => {
    expect(isCurrency('BRL')).toBe(true);
    expect(isCurrency('brl')).toBe(false);
    expect(isCurrency('toString')).toBe(false);
    expect(isCurrency(5)).toBe(false);
  });
});

describe('parsing', () => {
  it.each([
    ['USD', '100', '100.00'],
    ['USD', '100.5', '100.50'],
    ['USD', '0.01', '0.01'],
    ['BRL', '-12.30', '-12.30'],
    ['USDC', '1.123456', '1.123456'],
    ['USDC', '000123.4', '123.400000'],
    ['ARS', '999999999999999.99', '999999999999999.99'],
  ] as const)('parses %s %s as %s', (currency, text, shown) => {
    expect(Money.parse(currency, text).toString()).toBe(shown);
  });

  it.each([
    ['USD', '10.001', 'must have at most 2 decimal places for USD'],
    ['USDT', '1.1234567', 'must have at most 6 decimal places for USDT'],
    ['USD', '1e3', 'must be a decimal number as a string'],
    ['USD', '1.', 'must be a decimal number as a string'],
    ['USD', '.5', 'must be a decimal number as a string'],
    ['USD', ' 1', 'must be a decimal number as a string'],
    ['USD', '+1', 'must be a decimal number as a string'],
    ['USD', '1,00', 'must be a decimal number as a string'],
    ['USD', 'NaN', 'must be a decimal number as a string'],
    ['USD', '1000000000000000', 'must be a decimal number as a string'],
  ] as const)('refuses %s %j', (currency, text, problem) => {
    expect(amountTextProblem(text, currency)).toContain(problem);
    expect(() => Money.parse(currency, text)).toThrow(MoneyError);
  });

  it('Money.of refuses values finer than the minor unit instead of rounding them', () => {
    expect(() => Money.of('BRL', '0.005')).toThrow('more than 2 decimal places for BRL');
    expect(() => Money.of('USD', 'Infinity')).toThrow(MoneyError);
    expect(Money.of('USDC', '0.000001').toString()).toBe('0.000001');
  });

  it('refuses JavaScript numbers at run time too (the type already does), in Money.of and Money.rounded', () => {
    // Casts stand for an untyped caller: 0.1 is a binary float, not the decimal amount 0.1.
    expect(() => Money.of('USD', 0.1 as unknown as string)).toThrow(TypeError);
    expect(() => Money.of('USD', Infinity as unknown as string)).toThrow('never JavaScript numbers');
    expect(() => Money.rounded('USD', 1.005 as unknown as string, 'up')).toThrow(TypeError);
    expect(Money.of('USD', new Decimal('0.1')).toString()).toBe('0.10');
  });
});

describe('rounding', () => {
  it.each([
    ['1.005', 'down', '1.00'],
    ['1.005', 'up', '1.01'],
    ['1.005', 'half_even', '1.00'],
    ['1.015', 'half_even', '1.02'],
    ['1.000', 'up', '1.00'],
    ['-1.005', 'down', '-1.00'],
    ['-1.005', 'up', '-1.01'],
  ] as const)('rounds %s %s to %s', (value, rounding, expected) => {
    expect(Money.rounded('USD', value, rounding).toString()).toBe(expected);
  });

  it('rounds to any number of places', () => {
    expect(roundTo('4.9749999999', 8, 'down').toFixed()).toBe('4.97499999');
    expect(roundTo('0.000000001', 8, 'up').toFixed()).toBe('0.00000001');
  });

  it('keeps every digit of products and quotients until the explicit rounding', () => {
    // 21 significant digits: the default decimal.js precision (20) would already have rounded this.
    const amount = Money.of('USDC', '999999999999999.999999');
    expect(amount.times('1', 'down').toString()).toBe('999999999999999.999999');
    expect(amount.convert('1.00000000', 'USDT', 'down').toString()).toBe('999999999999999.999999');
    expect(Money.rounded('BRL', new Decimal(1).div(3), 'up').toString()).toBe('0.34');
  });
});

describe('arithmetic', () => {
  it('adds, subtracts and compares amounts of one currency', () => {
    const a = Money.parse('EUR', '10.10');
    const b = Money.parse('EUR', '0.20');
    expect(a.plus(b).toString()).toBe('10.30');
    expect(b.minus(a).toString()).toBe('-9.90');
    expect(a.minus(a).toString()).toBe('0.00');
    expect(Money.parse('EUR', '-0').toString()).toBe('0.00');
    expect(a.gt(b) && b.lt(a) && a.gte(a) && a.lte(a)).toBe(true);
    expect(a.compare(b)).toBe(1);
    expect(a.equals(Money.parse('EUR', '10.1'))).toBe(true);
    expect(a.equals(Money.parse('USD', '10.10'))).toBe(false);
    expect(Money.zero('EUR').isZero()).toBe(true);
    expect(b.minus(a).isNegative()).toBe(true);
    expect(a.isPositive()).toBe(true);
  });

  it('refuses to combine two currencies', () => {
    expect(() => Money.parse('USD', '1').plus(Money.parse('EUR', '1'))).toThrow('cannot combine USD with EUR');
    expect(() => Money.parse('USDC', '1').gt(Money.parse('USDT', '1'))).toThrow(MoneyError);
  });

  it('takes basis points and converts with explicit rounding', () => {
    expect(Money.parse('USD', '1000').basisPoints(150, 'up').toString()).toBe('15.00');
    expect(Money.parse('USD', '0.99').basisPoints(50, 'up').toString()).toBe('0.01');
    expect(Money.parse('USD', '0.99').basisPoints(50, 'down').toString()).toBe('0.00');
    expect(Money.parse('USDC', '100').convert('4.975', 'BRL', 'down').format()).toBe('497.50 BRL');
    expect(Money.parse('BRL', '1').convert('0.199', 'USDC', 'down').format()).toBe('0.199000 USDC');
  });

  it('converts to and from minor units', () => {
    expect(Money.parse('BRL', '12.34').toMinorUnits()).toBe(1234n);
    expect(Money.parse('USDC', '1.5').toMinorUnits()).toBe(1_500_000n);
    expect(Money.fromMinorUnits('USD', 5n).toString()).toBe('0.05');
    expect(Money.minorUnit('USDT').toString()).toBe('0.000001');
  });

  it('serialises as its decimal string', () => {
    expect(JSON.stringify({ amount: Money.parse('MXN', '7') })).toBe('{"amount":"7.00"}');
  });
});
