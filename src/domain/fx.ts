// The service's foreign-exchange risk between a partner's locked quote (minutes) and the liquidity provider's firm
// quote at execution (seconds), without I/O: the partner's rate from the provider's indicative price and a buffer,
// the guards (a stale price, a move beyond the band), and what each leg's execution gained or lost against the locked
// rate, booked to the FX gain/loss account (docs/ledger.md).
import { Decimal, Money } from './money';
import { entry, ledgerAccounts, type LedgerEntryInput } from './ledger';

export interface FxPolicy {
  /** Taken off the provider's indicative price in the partner's rate: what carries the service's risk. */
  bufferBps: number;
  /** A firm price further than this from the locked rate (either way) is not executed. */
  bandBps: number;
  /** An indicative price older than this is stale: no partner quote is priced from it. */
  maxPriceAgeSeconds: number;
}

/** The partner's rate: the provider's indicative mid less the buffer (rounded down to 8 places, as quotes lock). */
export function partnerRateFrom(mid: Decimal, policy: FxPolicy): Decimal {
  return mid.times(new Decimal(10_000 - policy.bufferBps).div(10_000)).toDecimalPlaces(8, Decimal.ROUND_DOWN);
}

/** Why an indicative price observed at `observedAt` cannot price a quote now, or null. */
export function stalePriceProblem(observedAt: Date, now: Date, policy: FxPolicy): string | null {
  const ageSeconds = (now.getTime() - observedAt.getTime()) / 1000;
  return ageSeconds > policy.maxPriceAgeSeconds
    ? `the liquidity provider's price is ${Math.round(ageSeconds)} s old (at most ${policy.maxPriceAgeSeconds} s)`
    : null;
}

/** Why a firm price cannot be executed against the locked rate (moved beyond the band), or null. */
export function bandProblem(lockedRate: Decimal, firmPrice: Decimal, policy: FxPolicy): string | null {
  const movedBps = firmPrice.minus(lockedRate).abs().div(lockedRate).times(10_000);
  return movedBps.gt(policy.bandBps)
    ? `the firm price ${firmPrice.toString()} moved ${movedBps.toDecimalPlaces(1).toString()} bps from the locked rate ${lockedRate.toString()} (band ${policy.bandBps} bps)`
    : null;
}

/**
 * What an execution gained (positive) or lost against the locked rate, in what it bought: `executed` is what the
 * provider gave for the amount sold, `atLockedRate` what the partner's quote promised for it.
 */
export function fxResult(executed: Money, atLockedRate: Money): Money {
  return executed.minus(atLockedRate);
}

/**
 * The result booked: the FX desk's position in the bought currency absorbs the difference, the FX gain/loss account
 * shows it (positive a gain). Balanced; nothing when the execution matched the locked rate.
 */
export function fxResultEntries(result: Money): LedgerEntryInput[] {
  if (result.isZero()) return [];
  return [
    entry(ledgerAccounts.fx(result.currency), result.negated()),
    entry(ledgerAccounts.fxGainLoss(result.currency), result),
  ];
}
