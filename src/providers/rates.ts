// Market data for quotes: the rate at which one currency converts into another, and the cost of an
// on-chain stablecoin transfer. Quotes lock what the provider answers (rates rounded down to 8 places).
import { Currency, Decimal, FiatCurrency, isFiat, Money, Stablecoin } from '../domain/money';
import type { Blockchain } from '../domain/rails';
import { ProviderUnavailableError, Unconnected } from './unavailable';

export interface RateProvider {
  /** Units of `to` obtained for one unit of `from`, spread included. One side is a stablecoin. */
  exchangeRate(from: Currency, to: Currency): Promise<Decimal>;
  /** Cost of one transfer of `stablecoin` on `chain`, charged in that stablecoin. */
  networkFee(stablecoin: Stablecoin, chain: Blockchain): Promise<Money>;
}

export class RatesUnavailableError extends ProviderUnavailableError {
  override name = 'RatesUnavailableError';
}

/**
 * Sandbox: fixed, documented market data. Both stablecoins are worth exactly 1 USD. Mid rates are
 * units of fiat per stablecoin; each conversion loses the fiat's spread:
 *   stablecoin -> fiat: mid * (1 - spread)        fiat -> stablecoin: (1 / mid) * (1 - spread)
 */
export const sandboxMarket = {
  midRates: { USD: '1', EUR: '0.92', BRL: '5', MXN: '17', ARS: '1000' },
  spreadBps: { USD: 10, EUR: 20, BRL: 50, MXN: 40, ARS: 100 },
  networkFees: { ethereum: '1', solana: '0.01' },
} as const satisfies {
  midRates: Record<FiatCurrency, string>;
  spreadBps: Record<FiatCurrency, number>;
  networkFees: Record<Blockchain, string>;
};

export class SandboxRateProvider implements RateProvider {
  async exchangeRate(from: Currency, to: Currency): Promise<Decimal> {
    const fiat = isFiat(from) ? from : isFiat(to) ? to : null;
    if (fiat === null || (isFiat(from) && isFiat(to)))
      throw new RatesUnavailableError(`no market for ${from} -> ${to}`);
    const mid = new Decimal(sandboxMarket.midRates[fiat]);
    const afterSpread = new Decimal(1).minus(new Decimal(sandboxMarket.spreadBps[fiat]).div(10_000));
    return (isFiat(to) ? mid : new Decimal(1).div(mid)).times(afterSpread);
  }

  async networkFee(stablecoin: Stablecoin, chain: Blockchain): Promise<Money> {
    return Money.of(stablecoin, sandboxMarket.networkFees[chain]);
  }
}

/**
 * Production until a market-data feed is integrated: refuses to quote rather than invent prices
 * (POST quote answers 500 internal_error and logs why).
 */
export class UnconfiguredRateProvider implements RateProvider, Unconnected {
  readonly unconnected = 'no market-data feed is connected (src/providers/rates.ts RateProvider)';

  async exchangeRate(from: Currency, to: Currency): Promise<Decimal> {
    throw new RatesUnavailableError(`no market-data feed is configured for ${from} -> ${to} in production`);
  }

  async networkFee(stablecoin: Stablecoin, chain: Blockchain): Promise<Money> {
    throw new RatesUnavailableError(`no network-fee feed is configured for ${stablecoin} on ${chain} in production`);
  }
}

/**
 * Production's network fees from the operator's published schedule (NETWORK_FEES, per chain, in stablecoin units),
 * charged to the partner as the sandbox charges its own; rates come from the liquidity provider, which wraps this.
 */
export class ScheduledNetworkFees implements RateProvider {
  constructor(private readonly fees: Partial<Record<Blockchain, string>>) {}

  async exchangeRate(from: Currency, to: Currency): Promise<Decimal> {
    throw new RatesUnavailableError(`no market-data feed is configured for ${from} -> ${to} in production`);
  }

  async networkFee(stablecoin: Stablecoin, chain: Blockchain): Promise<Money> {
    const fee = this.fees[chain];
    if (fee === undefined) throw new RatesUnavailableError(`no network fee is scheduled for ${chain} (NETWORK_FEES)`);
    return Money.of(stablecoin, fee);
  }
}
