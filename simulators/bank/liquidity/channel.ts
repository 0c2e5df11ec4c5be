// A liquidity provider's firm quotes (docs/liquidity-provider.md describes the REST shape):
//   GET  /v1/prices/{base}-{quote}          indicative price, with the time it was observed
//   POST /v1/quotes                         { base, quote, side, amount, client_reference } -> a firm price that
//                                           expires in seconds
//   POST /v1/quotes/{id}/execute            executes once; a second execute answers the first result
//   GET  /v1/quotes/{id}, GET /v1/quotes?client_reference=...   what became of a quote (unknown-outcome lookups)
// Prices move: the mid of each fiat against a USD stablecoin drifts around its base (a slow sine plus jumps set by
// scenario), and every firm price is the mid less the provider's spread. Scenario controls under /_scenarios: a
// jump of the mid in basis points, stale prices (the feed stops moving and its timestamp ages), the service down
// (503 on every call), and an execution whose answer is lost.
import Router from '@koa/router';
import { json as parseJson } from 'co-body';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { BankChannel, BankSimulatorOptions } from '../channel';
import { JsonState } from '../state';

/** Units of fiat per USD stablecoin, the base the mid drifts around (the sandbox market's, src/providers/rates.ts). */
export const liquidityBaseMids: Record<string, string> = { USD: '1', EUR: '0.92', BRL: '5', MXN: '17', ARS: '1000' };
const STABLECOINS = ['USDC', 'USDT'];
/** The provider's spread on each side of the mid. */
export const LIQUIDITY_SPREAD_BPS = 15;
/** A firm quote's life. */
export const FIRM_QUOTE_SECONDS = 10;
/** The drift: amplitude (bps) and period (ms) of the sine. */
const DRIFT_BPS = 20;
const DRIFT_PERIOD_MS = 60_000;

interface Quote {
  id: string;
  base: string;
  quote: string;
  /** `sell`: the client sells `amount` of base for quote; price is units of quote per base. */
  side: 'sell';
  amount: string;
  price: string;
  proceeds: string;
  client_reference: string | null;
  created_at: string;
  expires_at: string;
  status: 'open' | 'executed' | 'expired';
  execution: { id: string; executed_at: string; price: string; amount: string; proceeds: string } | null;
  executeRequests: number;
}

interface LiquidityState {
  quotes: Record<string, Quote>;
  /** Scenario: basis points added to every mid (a jump), until reset. */
  jumpBps: number;
  /** Scenario: prices frozen at this time (a stale feed), or null. */
  staleSince: number | null;
  down: boolean;
  /** Scenario: the next N executions happen, but their answer is lost (the connection drops). */
  loseExecuteAnswers: number;
  /** Scenario: basis points added to the firm price of quotes asked under one client reference (one leg's jump). */
  referenceJumps?: Record<string, number>;
}

export function createLiquidityChannel(options: BankSimulatorOptions): BankChannel {
  const state = new JsonState<LiquidityState>(options.stateDir, 'liquidity', () => ({
    quotes: {},
    jumpBps: 0,
    staleSince: null,
    down: false,
    loseExecuteAnswers: 0,
  }));
  const router = new Router();

  /** Units of `quote` per one `base`, at the mid, observed at `at` (the stale scenario freezes `at`). */
  const mid = (base: string, quote: string): { mid: Decimal; at: number } | null => {
    const at = state.data.staleSince ?? Date.now();
    const fiatPerUsd = (currency: string): Decimal | null => {
      if (STABLECOINS.includes(currency)) return new Decimal(1);
      const baseMid = liquidityBaseMids[currency];
      if (!baseMid || currency === 'USD') return baseMid ? new Decimal(baseMid) : null;
      const drift = Math.round(DRIFT_BPS * Math.sin((2 * Math.PI * at) / DRIFT_PERIOD_MS));
      return new Decimal(baseMid).times(new Decimal(10_000 + drift + state.data.jumpBps).div(10_000));
    };
    const b = fiatPerUsd(base);
    const q = fiatPerUsd(quote);
    if (!b || !q || STABLECOINS.includes(base) === STABLECOINS.includes(quote)) return null;
    return { mid: q.div(b), at };
  };

  router.use(async (ctx, next) => {
    if (state.data.down && !ctx.path.includes('/_scenarios')) {
      ctx.status = 503;
      ctx.body = { error: 'service_unavailable', message: 'the liquidity provider is down (scenario)' };
      return;
    }
    return next();
  });

  router.get('/v1/prices/:pair', (ctx) => {
    const [base, quote] = ctx.params.pair!.split('-');
    const observed = base && quote ? mid(base, quote) : null;
    if (!observed) return refuse(ctx, 404, 'unknown_pair', `no market for ${ctx.params.pair}`);
    const spread = observed.mid.times(LIQUIDITY_SPREAD_BPS).div(10_000);
    ctx.body = {
      base,
      quote,
      mid: observed.mid.toSignificantDigits(12).toString(),
      bid: observed.mid.minus(spread).toSignificantDigits(12).toString(),
      ask: observed.mid.plus(spread).toSignificantDigits(12).toString(),
      observed_at: new Date(observed.at).toISOString(),
    };
  });

  router.post('/v1/quotes', async (ctx) => {
    const body = (await parseJson(ctx.req, { limit: '16kb' }).catch(() => ({}))) as Record<string, unknown>;
    const base = String(body.base ?? '');
    const quote = String(body.quote ?? '');
    const amount = typeof body.amount === 'string' && /^\d+(\.\d+)?$/.test(body.amount) ? body.amount : null;
    if (body.side !== 'sell' || !amount || new Decimal(amount).lte(0)) {
      return refuse(ctx, 422, 'invalid_request', 'side must be sell and amount a positive decimal string');
    }
    const observed = mid(base, quote);
    if (!observed) return refuse(ctx, 404, 'unknown_pair', `no market for ${base}-${quote}`);
    const referenceJump =
      typeof body.client_reference === 'string' ? (state.data.referenceJumps?.[body.client_reference] ?? 0) : 0;
    const price = observed.mid
      .times(new Decimal(10_000 - LIQUIDITY_SPREAD_BPS + referenceJump).div(10_000))
      .toSignificantDigits(12);
    const now = Date.now();
    const firm: Quote = {
      id: `lq_${randomUUID()}`,
      base,
      quote,
      side: 'sell',
      amount,
      price: price.toString(),
      proceeds: new Decimal(amount).times(price).toString(),
      client_reference: typeof body.client_reference === 'string' ? body.client_reference : null,
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + FIRM_QUOTE_SECONDS * 1000).toISOString(),
      status: 'open',
      execution: null,
      executeRequests: 0,
    };
    state.data.quotes[firm.id] = firm;
    state.save();
    ctx.status = 201;
    ctx.body = quoteResource(firm);
  });

  router.post('/v1/quotes/:id/execute', (ctx) => {
    const firm = state.data.quotes[ctx.params.id!];
    if (!firm) return refuse(ctx, 404, 'quote_not_found', 'no such quote');
    firm.executeRequests += 1;
    if (!firm.execution) {
      if (Date.parse(firm.expires_at) < Date.now()) {
        firm.status = 'expired';
        state.save();
        return refuse(ctx, 410, 'quote_expired', `the quote expired at ${firm.expires_at}`);
      }
      firm.execution = {
        id: `lx_${randomUUID()}`,
        executed_at: new Date().toISOString(),
        price: firm.price,
        amount: firm.amount,
        proceeds: firm.proceeds,
      };
      firm.status = 'executed';
    }
    state.save();
    if (state.data.loseExecuteAnswers > 0) {
      state.data.loseExecuteAnswers -= 1;
      state.save();
      // Executed, and the answer never reaches the client.
      ctx.req.socket.destroy();
      return;
    }
    ctx.body = quoteResource(firm);
  });

  router.get('/v1/quotes/:id', (ctx) => {
    const firm = state.data.quotes[ctx.params.id!];
    if (!firm) return refuse(ctx, 404, 'quote_not_found', 'no such quote');
    ctx.body = quoteResource(firm);
  });

  router.get('/v1/quotes', (ctx) => {
    const reference = String(ctx.query.client_reference ?? '');
    ctx.body = {
      data: Object.values(state.data.quotes)
        .filter((q) => reference && q.client_reference === reference)
        .map(quoteResource),
    };
  });

  router.post('/_scenarios', async (ctx) => {
    const body = (await parseJson(ctx.req, { limit: '16kb' }).catch(() => ({}))) as Record<string, unknown>;
    if (typeof body.jump_bps === 'number') state.data.jumpBps = body.jump_bps;
    if (typeof body.stale === 'boolean') state.data.staleSince = body.stale ? Date.now() : null;
    if (typeof body.down === 'boolean') state.data.down = body.down;
    if (typeof body.lose_execute_answers === 'number') state.data.loseExecuteAnswers = body.lose_execute_answers;
    // A jump for one client reference only (the sandbox's simulate fx_price_jump): 0 removes it.
    if (typeof body.jump_reference === 'string' && typeof body.jump_reference_bps === 'number') {
      const jumps = (state.data.referenceJumps ??= {});
      if (body.jump_reference_bps === 0) delete jumps[body.jump_reference];
      else jumps[body.jump_reference] = body.jump_reference_bps;
    }
    if (body.reset === true)
      Object.assign(state.data, {
        jumpBps: 0,
        staleSince: null,
        down: false,
        loseExecuteAnswers: 0,
        referenceJumps: {},
      });
    state.save();
    ctx.body = scenarioResource(state.data);
  });

  router.get('/_scenarios', (ctx) => {
    ctx.body = scenarioResource(state.data);
  });

  /** How many execute requests a quote received (tests: never a second execution). */
  router.get('/_scenarios/quotes/:id', (ctx) => {
    const firm = state.data.quotes[ctx.params.id!];
    if (!firm) return refuse(ctx, 404, 'quote_not_found', 'no such quote');
    ctx.body = { ...quoteResource(firm), execute_requests: firm.executeRequests };
  });

  return { name: 'liquidity', routes: router };
}

function scenarioResource(data: LiquidityState) {
  return {
    jump_bps: data.jumpBps,
    stale_since: data.staleSince === null ? null : new Date(data.staleSince).toISOString(),
    down: data.down,
    lose_execute_answers: data.loseExecuteAnswers,
  };
}

function quoteResource(firm: Quote) {
  const expired = firm.status === 'open' && Date.parse(firm.expires_at) < Date.now();
  return {
    id: firm.id,
    base: firm.base,
    quote: firm.quote,
    side: firm.side,
    amount: firm.amount,
    price: firm.price,
    proceeds: firm.proceeds,
    client_reference: firm.client_reference,
    created_at: firm.created_at,
    expires_at: firm.expires_at,
    status: expired ? 'expired' : firm.status,
    execution: firm.execution,
  };
}

function refuse(ctx: Context, status: number, code: string, message: string) {
  ctx.status = status;
  ctx.body = { error: code, message };
}
