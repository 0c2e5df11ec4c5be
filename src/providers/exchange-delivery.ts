// Production's conversion of leg 1 (fiat -> stablecoin) once a liquidity provider is configured: FirmQuoteRails executes
// the leg's firm quote at the provider (src/providers/liquidity/firm-quotes.ts), and that execution is the conversion;
// this adapter completes the step under the execution's id and answers the workflow's lookup from the provider's
// record of the leg (its client reference is the step's idempotency key). The provider's delivery of the stablecoin on
// chain is not observed here (docs/production.md). Everything else goes to `others` (production's unconnected rails:
// sell-backs and returns to the sender have no adapter yet, so those steps wait for an operator).
import {
  RailUnavailableError,
  type ConversionRequest,
  type FiatRails,
  type PayoutRequest,
  type RailOperationKind,
  type RailOutcome,
  type RailRequest,
  type ReturnRequest,
  type SellBackOutcome,
  type SellBackRequest,
} from './fiat-rails';
import type { LiquidityClient } from './liquidity/client';
import { ProviderUnavailableError, type OperationLookup } from './unavailable';

export class ExchangeExecutionRails implements FiatRails {
  constructor(
    private readonly liquidity: LiquidityClient,
    private readonly others: FiatRails,
  ) {}

  async convertToStablecoin(request: ConversionRequest): Promise<RailOutcome & { status: 'completed' }> {
    let execution: string | null;
    try {
      execution = await this.executionOf(request.idempotencyKey);
    } catch (error) {
      if (error instanceof ProviderUnavailableError) throw new RailUnavailableError(error.message);
      throw error;
    }
    if (!execution) throw new RailUnavailableError(`liquidity provider: ${request.idempotencyKey} is not executed`);
    return { status: 'completed', providerReference: execution };
  }

  payOut(request: PayoutRequest): Promise<RailOutcome> {
    return this.others.payOut(request);
  }

  returnToSender(request: ReturnRequest): Promise<RailOutcome & { status: 'completed' }> {
    return this.others.returnToSender(request);
  }

  sellBack(request: SellBackRequest): Promise<SellBackOutcome> {
    return this.others.sellBack(request);
  }

  async lookUp(kind: RailOperationKind, request: RailRequest): Promise<OperationLookup<RailOutcome | SellBackOutcome>> {
    if (kind !== 'conversion') return this.others.lookUp(kind, request);
    const execution = await this.executionOf(request.idempotencyKey);
    return execution
      ? { state: 'executed', outcome: { status: 'completed', providerReference: execution } }
      : { state: 'not_executed' };
  }

  /** The provider's execution id of the leg's firm quote, or null when none was executed. */
  private async executionOf(idempotencyKey: string): Promise<string | null> {
    const quotes = await this.liquidity.quotesFor(idempotencyKey);
    return quotes.find((quote) => quote.execution)?.execution?.id ?? null;
  }
}
