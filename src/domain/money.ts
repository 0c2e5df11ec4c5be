// The one money type of the project. Amounts are decimal.js values held exactly at their currency's
// minor unit (fiat 2 decimals, stablecoins 6), parsed from and written as decimal strings. Nothing
// here rounds implicitly: every rounding names its direction. Pure and deterministic.
import BaseDecimal from 'decimal.js';

/**
 * decimal.js for money: 50 significant digits, so products and quotients of amounts (at most 15
 * integer digits) and rates never lose digits before an explicit rounding to a minor unit.
 */
export const Decimal = BaseDecimal.clone({
  precision: 50,
  rounding: BaseDecimal.ROUND_HALF_EVEN,
  toExpNeg: -50,
  toExpPos: 50,
});
export type Decimal = BaseDecimal;
export type DecimalValue = BaseDecimal.Value;

export const allCurrencies = ['USD', 'EUR', 'BRL', 'MXN', 'ARS', 'USDC', 'USDT'] as const;
export type Currency = (typeof allCurrencies)[number];

export const currencies = {
  USD: { kind: 'fiat', decimals: 2 },
  EUR: { kind: 'fiat', decimals: 2 },
  BRL: { kind: 'fiat', decimals: 2 },
  MXN: { kind: 'fiat', decimals: 2 },
  ARS: { kind: 'fiat', decimals: 2 },
  USDC: { kind: 'stablecoin', decimals: 6 },
  USDT: { kind: 'stablecoin', decimals: 6 },
} as const satisfies Record<Currency, { kind: 'fiat' | 'stablecoin'; decimals: number }>;

export type FiatCurrency = { [C in Currency]: (typeof currencies)[C]['kind'] extends 'fiat' ? C : never }[Currency];
export type Stablecoin = Exclude<Currency, FiatCurrency>;
export const fiatCurrencies: readonly FiatCurrency[] = allCurrencies.filter(isFiat);
export const stablecoins: readonly Stablecoin[] = allCurrencies.filter(isStablecoin);

export function isCurrency(code: unknown): code is Currency {
  return typeof code === 'string' && Object.prototype.hasOwnProperty.call(currencies, code);
}
/**
 * A currency read as text (a bank message, a report's row): one the code does not know is corrupt data that must stop
 * the work rather than be priced with some other currency's decimals. Columns are the currency enum already.
 */
export function currencyOf(code: string): Currency {
  if (!isCurrency(code)) throw new Error(`unknown currency ${JSON.stringify(code)}`);
  return code;
}
/** A stablecoin column's value (wallets and their transfers hold stablecoins only): anything else is corrupt data. */
export function stablecoinOf(code: Currency | null): Stablecoin {
  if (code === null || !isStablecoin(code)) throw new Error(`not a stablecoin: ${code}`);
  return code;
}
export function isFiat(code: Currency): code is FiatCurrency {
  return currencies[code].kind === 'fiat';
}
export function isStablecoin(code: Currency): code is Stablecoin {
  return currencies[code].kind === 'stablecoin';
}
export function decimalsOf(currency: Currency): number {
  return currencies[currency].decimals;
}

/**
 * `down` and `up` are toward zero and away from zero (what the customer receives rounds down,
 * what the customer pays rounds up); `half_even` is banker's rounding for neutral figures.
 */
export type Rounding = 'down' | 'up' | 'half_even';

const roundingModes: Record<Rounding, BaseDecimal.Rounding> = {
  down: BaseDecimal.ROUND_DOWN,
  up: BaseDecimal.ROUND_UP,
  half_even: BaseDecimal.ROUND_HALF_EVEN,
};

/** Rounds to a number of decimal places in the given direction. */
export function roundTo(value: DecimalValue, decimals: number, rounding: Rounding): Decimal {
  return new Decimal(value).toDecimalPlaces(decimals, roundingModes[rounding]);
}

const decimalStringPattern = /^-?\d{1,15}(\.\d+)?$/;

/** Why a string is not a valid amount of this currency, or null when it is. */
export function amountTextProblem(text: string, currency: Currency): string | null {
  if (!decimalStringPattern.test(text)) {
    return 'must be a decimal number as a string, e.g. "100.50" (no exponent, at most 15 integer digits)';
  }
  const fraction = text.split('.')[1] ?? '';
  if (fraction.length > decimalsOf(currency))
    return `must have at most ${decimalsOf(currency)} decimal places for ${currency}`;
  return null;
}

export class MoneyError extends Error {
  override name = 'MoneyError';
}

/**
 * What an amount is built from: a decimal string or a Decimal. Never a JavaScript number: a binary
 * float holds most decimal amounts only approximately (0.1 + 0.2 !== 0.3).
 */
export type AmountValue = string | Decimal;

/**
 * The rule behind AmountValue, for run time too (a cast or an untyped caller): why the value cannot
 * be an amount, or null. The ledger applies the same rule to its entries.
 */
export function numberAmountProblem(value: unknown): string | null {
  return typeof value === 'number'
    ? `amounts are decimal strings or Decimals, never JavaScript numbers (got ${String(value)})`
    : null;
}

function refuseNumber(value: unknown): void {
  const problem = numberAmountProblem(value);
  if (problem) throw new TypeError(problem);
}

/** An amount of one currency, always exactly representable in that currency's minor unit. */
export class Money {
  readonly amount: Decimal;

  private constructor(
    readonly currency: Currency,
    amount: Decimal,
  ) {
    // No negative zero: "-0.00" is never shown.
    this.amount = amount.isZero() ? new Decimal(0) : amount;
  }

  /** Exactly this value; refuses values with more decimals than the currency has. */
  static of(currency: Currency, value: AmountValue): Money {
    refuseNumber(value);
    const amount = new Decimal(value);
    if (!amount.isFinite()) throw new MoneyError(`${String(value)} is not a finite amount`);
    if (amount.decimalPlaces() > decimalsOf(currency)) {
      throw new MoneyError(`${amount.toFixed()} has more than ${decimalsOf(currency)} decimal places for ${currency}`);
    }
    return new Money(currency, amount);
  }

  /** Parses a decimal string such as "1000" or "-12.5" (see amountTextProblem for the rules). */
  static parse(currency: Currency, text: string): Money {
    const problem = amountTextProblem(text, currency);
    if (problem) throw new MoneyError(`${JSON.stringify(text)} ${problem}`);
    return new Money(currency, new Decimal(text));
  }

  /** Any value rounded to the currency's minor unit in the given direction. */
  static rounded(currency: Currency, value: AmountValue, rounding: Rounding): Money {
    refuseNumber(value);
    return new Money(currency, roundTo(value, decimalsOf(currency), rounding));
  }

  static zero(currency: Currency): Money {
    return new Money(currency, new Decimal(0));
  }

  /** The smallest representable amount: 0.01 for fiat, 0.000001 for stablecoins. */
  static minorUnit(currency: Currency): Money {
    return Money.fromMinorUnits(currency, 1n);
  }

  static fromMinorUnits(currency: Currency, units: bigint): Money {
    return new Money(currency, new Decimal(units.toString()).div(new Decimal(10).pow(decimalsOf(currency))));
  }

  toMinorUnits(): bigint {
    return BigInt(this.amount.times(new Decimal(10).pow(decimalsOf(this.currency))).toFixed(0));
  }

  plus(other: Money): Money {
    return new Money(this.currency, this.amount.plus(this.sameCurrency(other).amount));
  }

  minus(other: Money): Money {
    return new Money(this.currency, this.amount.minus(this.sameCurrency(other).amount));
  }

  /** The same amount with the opposite sign (a debit of a credit). */
  negated(): Money {
    return new Money(this.currency, this.amount.neg());
  }

  /** This amount times a factor, rounded to the minor unit. */
  times(factor: DecimalValue, rounding: Rounding): Money {
    return Money.rounded(this.currency, this.amount.times(factor), rounding);
  }

  /** `basisPoints` / 10 000 of this amount (150 bps = 1.5%), rounded to the minor unit. */
  basisPoints(basisPoints: number, rounding: Rounding): Money {
    return this.times(new Decimal(basisPoints).div(10_000), rounding);
  }

  /** Converts at `rate` units of `to` per unit of this currency, rounded to the minor unit of `to`. */
  convert(rate: DecimalValue, to: Currency, rounding: Rounding): Money {
    return Money.rounded(to, this.amount.times(rate), rounding);
  }

  compare(other: Money): -1 | 0 | 1 {
    return this.amount.comparedTo(this.sameCurrency(other).amount) as -1 | 0 | 1;
  }
  equals(other: Money): boolean {
    return this.currency === other.currency && this.amount.equals(other.amount);
  }
  gt(other: Money): boolean {
    return this.compare(other) > 0;
  }
  gte(other: Money): boolean {
    return this.compare(other) >= 0;
  }
  lt(other: Money): boolean {
    return this.compare(other) < 0;
  }
  lte(other: Money): boolean {
    return this.compare(other) <= 0;
  }
  isZero(): boolean {
    return this.amount.isZero();
  }
  isPositive(): boolean {
    return this.amount.gt(0);
  }
  isNegative(): boolean {
    return this.amount.lt(0);
  }

  /** Fixed to the currency's decimals: "100.00", "98.500000". */
  toString(): string {
    return this.amount.toFixed(decimalsOf(this.currency));
  }

  toJSON(): string {
    return this.toString();
  }

  /** "100.00 USD", for messages. */
  format(): string {
    return `${this.toString()} ${this.currency}`;
  }

  private sameCurrency(other: Money): Money {
    if (other.currency !== this.currency) {
      throw new MoneyError(`cannot combine ${this.currency} with ${other.currency}`);
    }
    return other;
  }
}
