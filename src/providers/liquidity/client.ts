// A liquidity provider's REST API (docs/liquidity-provider.md): indicative prices, firm quotes that live seconds,
// execution of a quote by id (once: a second execute answers the first result), and lookups by our client reference
// when an execution's answer was lost. Bounded timeouts, no retry here (the activities' policies retry).
import { Decimal } from '../../domain/money';
import { ProviderUnavailableError } from '../unavailable';

export interface LiquidityConfig {
  /** e.g. http://127.0.0.1:4100/liquidity (the bank simulator's channel). */
  baseUrl: string;
  timeoutMs?: number;
}

export interface IndicativePrice {
  base: string;
  quote: string;
  mid: Decimal;
  bid: Decimal;
  observedAt: Date;
}

export interface FirmQuote {
  id: string;
  base: string;
  quote: string;
  amount: string;
  /** Units of quote per one base. */
  price: Decimal;
  proceeds: string;
  clientReference: string | null;
  expiresAt: Date;
  status: 'open' | 'executed' | 'expired';
  execution: { id: string; executedAt: Date; price: Decimal; proceeds: string } | null;
}

/** The provider did not answer (down, timeout, 5xx): for an execute, whether it happened is unknown. */
export class LiquidityUnavailableError extends ProviderUnavailableError {
  override name = 'LiquidityUnavailableError';
}

/** The provider answered with a refusal (unknown pair, expired quote): nothing was done. */
export class LiquidityRefusal extends Error {
  override name = 'LiquidityRefusal';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface QuoteBody {
  id: string;
  base: string;
  quote: string;
  amount: string;
  price: string;
  proceeds: string;
  client_reference: string | null;
  expires_at: string;
  status: FirmQuote['status'];
  execution: { id: string; executed_at: string; price: string; proceeds: string } | null;
}

function firmQuoteOf(body: QuoteBody): FirmQuote {
  return {
    id: body.id,
    base: body.base,
    quote: body.quote,
    amount: body.amount,
    price: new Decimal(body.price),
    proceeds: body.proceeds,
    clientReference: body.client_reference,
    expiresAt: new Date(body.expires_at),
    status: body.status,
    execution: body.execution
      ? {
          id: body.execution.id,
          executedAt: new Date(body.execution.executed_at),
          price: new Decimal(body.execution.price),
          proceeds: body.execution.proceeds,
        }
      : null,
  };
}

export class LiquidityClient {
  private readonly timeoutMs: number;

  constructor(private readonly config: LiquidityConfig) {
    this.timeoutMs = config.timeoutMs ?? 5_000;
  }

  async indicative(base: string, quote: string): Promise<IndicativePrice> {
    const body = (await this.call('GET', `/v1/prices/${base}-${quote}`)) as {
      mid: string;
      bid: string;
      observed_at: string;
    };
    return {
      base,
      quote,
      mid: new Decimal(body.mid),
      bid: new Decimal(body.bid),
      observedAt: new Date(body.observed_at),
    };
  }

  /** A firm price to sell `amount` of base for quote. */
  async requestQuote(base: string, quote: string, amount: string, clientReference: string): Promise<FirmQuote> {
    return firmQuoteOf(
      (await this.call('POST', '/v1/quotes', {
        base,
        quote,
        side: 'sell',
        amount,
        client_reference: clientReference,
      })) as QuoteBody,
    );
  }

  async execute(quoteId: string): Promise<FirmQuote> {
    return firmQuoteOf((await this.call('POST', `/v1/quotes/${encodeURIComponent(quoteId)}/execute`)) as QuoteBody);
  }

  /** Every quote asked under our reference (an execution whose answer was lost is found here). */
  async quotesFor(clientReference: string): Promise<FirmQuote[]> {
    const body = (await this.call('GET', `/v1/quotes?client_reference=${encodeURIComponent(clientReference)}`)) as {
      data: QuoteBody[];
    };
    return body.data.map(firmQuoteOf);
  }

  /**
   * Sandbox only: the simulator's scenario control (`<baseUrl>/_scenarios`), through which the partners' `simulate`
   * values reach it. A real provider has no such path; nothing calls this outside the sandbox.
   */
  async simulatorScenario(body: object): Promise<void> {
    await this.call('POST', '/_scenarios', body);
  }

  private async call(method: string, path: string, body?: object): Promise<unknown> {
    let response: Response;
    try {
      response = await fetch(`${this.config.baseUrl}${path}`, {
        method,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw new LiquidityUnavailableError(`liquidity provider ${method} ${path}: ${(error as Error).message}`);
    }
    const text = await response.text().catch(() => '');
    const parsed = (text ? JSON.parse(text) : {}) as { error?: string; message?: string };
    if (response.status >= 500 || response.status === 429) {
      throw new LiquidityUnavailableError(`liquidity provider ${method} ${path} answered ${response.status}`);
    }
    if (response.status >= 400) {
      throw new LiquidityRefusal(
        response.status,
        parsed.error ?? 'refused',
        parsed.message ?? `status ${response.status}`,
      );
    }
    return parsed;
  }
}
