// The service's prices and conversions at a liquidity provider. A partner's quote (5 minutes) is priced from the
// provider's indicative mid less a buffer, refused while the price is stale; each settlement leg then asks a firm
// quote (seconds), refuses it beyond the band from the locked rate, executes it once, and records the execution with
// its FX gain or loss (src/persistence/fx-executions.ts). Delivery and payout stay with the rails it wraps.
import { bandProblem, type FxPolicy, partnerRateFrom, stalePriceProblem } from '../../domain/fx';
import { type Currency, Decimal, isFiat, Money, type Stablecoin } from '../../domain/money';
import type { Blockchain } from '../../domain/rails';
import type { DatabaseClient } from '../../persistence/database';
import { fxExecutionsOf, recordFxExecution } from '../../persistence/fx-executions';
import {
  type ConversionRequest,
  type FiatRails,
  type PayoutRequest,
  type RailOperationKind,
  type RailOutcome,
  type RailRequest,
  RailUnavailableError,
  type ReturnRequest,
  type SellBackOutcome,
  type SellBackRequest,
} from '../fiat-rails';
import { type RateProvider, RatesUnavailableError } from '../rates';
import type { OperationLookup } from '../unavailable';
import { type FirmQuote, LiquidityClient, LiquidityRefusal, LiquidityUnavailableError } from './client';

/** The provider's price is stale or moved beyond the band: no quote now (503 to the partner). */
export class FxPriceRefusedError extends RatesUnavailableError {
  override name = 'FxPriceRefusedError';
}

/** Partner quotes priced from the provider's indicative mid less the buffer; network fees from `fees`. */
export class LiquidityRateProvider implements RateProvider {
  constructor(
    private readonly client: LiquidityClient,
    private readonly policy: FxPolicy,
    private readonly fees: Pick<RateProvider, 'networkFee'>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async exchangeRate(from: Currency, to: Currency): Promise<Decimal> {
    if (isFiat(from) === isFiat(to)) throw new RatesUnavailableError(`no market for ${from} -> ${to}`);
    let price;
    try {
      price = await this.client.indicative(from, to);
    } catch (error) {
      if (error instanceof LiquidityUnavailableError || error instanceof LiquidityRefusal) {
        throw new RatesUnavailableError(`liquidity provider: ${error.message}`);
      }
      throw error;
    }
    const stale = stalePriceProblem(price.observedAt, this.now(), this.policy);
    if (stale) throw new FxPriceRefusedError(stale);
    return partnerRateFrom(price.mid, this.policy);
  }

  networkFee(stablecoin: Stablecoin, chain: Blockchain): Promise<Money> {
    return this.fees.networkFee(stablecoin, chain);
  }
}

/** The idempotency key is `<transactionId>:<step>` (activities/transactions.ts). */
function legOf(idempotencyKey: string): { transactionId: string; step: 'fiat_to_stablecoin' | 'stablecoin_to_fiat' } {
  const [transactionId, step] = idempotencyKey.split(':') as [string, string];
  return { transactionId, step: step as 'fiat_to_stablecoin' | 'stablecoin_to_fiat' };
}

/** Sandbox: how far a leg's firm price jumps under `simulate: fx_price_jump` (beyond any band of at most 4%). */
export const SIMULATED_PRICE_JUMP_BPS = 500;

export class FirmQuoteRails implements FiatRails {
  constructor(
    private readonly inner: FiatRails,
    private readonly client: LiquidityClient,
    private readonly policy: FxPolicy,
    private readonly prisma: DatabaseClient,
    /** Sandbox: the partners' `simulate` values become the simulator's scenarios (fx_price_jump). */
    private readonly options: { simulate?: boolean } = {},
  ) {}

  async convertToStablecoin(request: ConversionRequest): Promise<RailOutcome & { status: 'completed' }> {
    await this.simulate(request);
    await this.executeLeg(request.idempotencyKey, request.from, request.to);
    return this.inner.convertToStablecoin(request);
  }

  async payOut(request: PayoutRequest): Promise<RailOutcome> {
    // The jump meets the transaction's first leg: a payout's only one, not the payout after a conversion.
    if (this.options.simulate && request.simulate === 'fx_price_jump') {
      const { transactionId } = legOf(request.idempotencyKey);
      const executions = await fxExecutionsOf(this.prisma, [transactionId]);
      if (!executions.some((execution) => execution.step === 'fiat_to_stablecoin')) await this.simulate(request);
    }
    await this.executeLeg(request.idempotencyKey, request.from, request.amount);
    return this.inner.payOut(request);
  }

  /**
   * `fx_price_jump`: in round 0 the provider's firm price for the transaction's first leg jumps beyond the band (the leg is refused, its
   * retries run out, the transaction goes to `error`); an operator's retry (round 1 on) asks at the market again.
   */
  private async simulate(request: RailRequest): Promise<void> {
    if (!this.options.simulate || request.simulate !== 'fx_price_jump') return;
    try {
      await this.client.simulatorScenario({
        jump_reference: request.idempotencyKey,
        jump_reference_bps: request.round === 0 ? -SIMULATED_PRICE_JUMP_BPS : 0,
      });
    } catch (error) {
      if (error instanceof LiquidityUnavailableError || error instanceof LiquidityRefusal) {
        throw new RailUnavailableError(`liquidity simulator: ${error.message}`);
      }
      throw error;
    }
  }

  returnToSender(request: ReturnRequest): Promise<RailOutcome & { status: 'completed' }> {
    return this.inner.returnToSender(request);
  }

  sellBack(request: SellBackRequest): Promise<SellBackOutcome> {
    return this.inner.sellBack(request);
  }

  lookUp(kind: RailOperationKind, request: RailRequest): Promise<OperationLookup<RailOutcome | SellBackOutcome>> {
    return this.inner.lookUp(kind, request);
  }

  /**
   * Sells `sold` for what `atLockedRate` promised, at a fresh firm quote, once per leg: a quote already executed under
   * this leg's reference (an earlier attempt whose answer was lost, or a re-run) is the execution, never a second
   * one. A refusal before execution (band, expiry) or an unanswered execute throws RailUnavailableError: the
   * activity's retries and then the workflow's lookup decide, as for every rail operation.
   */
  private async executeLeg(idempotencyKey: string, sold: Money, atLockedRate: Money): Promise<FirmQuote> {
    const leg = legOf(idempotencyKey);
    try {
      let executed = (await this.client.quotesFor(idempotencyKey)).find((quote) => quote.execution);
      if (!executed) {
        const firm = await this.client.requestQuote(
          sold.currency,
          atLockedRate.currency,
          sold.toString(),
          idempotencyKey,
        );
        const lockedRate = new Decimal(atLockedRate.toString()).div(sold.toString());
        const moved = bandProblem(lockedRate, firm.price, this.policy);
        if (moved) throw new FxPriceRefusedError(moved);
        executed = await this.client.execute(firm.id);
      }
      const execution = executed.execution!;
      await recordFxExecution(this.prisma, {
        ...leg,
        quoteId: executed.id,
        sold,
        atLockedRate,
        executed: Money.rounded(atLockedRate.currency, execution.proceeds, 'down'),
        price: execution.price.toString(),
        executedAt: execution.executedAt,
      });
      return executed;
    } catch (error) {
      if (
        error instanceof LiquidityUnavailableError ||
        error instanceof LiquidityRefusal ||
        error instanceof FxPriceRefusedError
      ) {
        throw new RailUnavailableError(`liquidity provider (${leg.step}): ${error.message}`);
      }
      throw error;
    }
  }
}
