// Firm quotes at the bank simulator's liquidity channel (started here on a free port): the partner's quote priced
// from the provider's indicative price less the buffer, a BRL -> MXN fiat-to-fiat whose two legs each execute a fresh
// firm quote with the FX gain or loss booked (balanced, with the execution), the FX result per pair, and the guards:
// a stale price and the provider down refuse quotes with 503, a price beyond the band executes nothing, and an
// execution whose answer was lost is found by its reference, never executed twice.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fxResultByPair } from '../src/persistence/fx-executions';
import { fxResultCommand } from '../scripts/fx-result';
import { createBankSimulatorApp } from '../simulators/bank/app';
import { createLiquidityChannel, LIQUIDITY_SPREAD_BPS } from '../simulators/bank/liquidity/channel';
import { Harness, startHarness } from './support/harness';
import {
  createQuote,
  createTransaction,
  deposit,
  fiatToFiatQuoteBody,
  ledgerOf,
  Parties,
  setUpParties,
  waitForStatus,
} from './support/transactions';

let harness: Harness;
let parties: Parties;
let simulator: http.Server;
let liquidityUrl: string;
const BUFFER_BPS = 30;
const BAND_BPS = 100;
const stateDir = mkdtempSync(path.join(os.tmpdir(), 'bank-simulator-'));

beforeAll(async () => {
  simulator = http.createServer();
  await new Promise<void>((resolve) => simulator.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(simulator.address() as AddressInfo).port}`;
  simulator.on('request', createBankSimulatorApp([createLiquidityChannel({ stateDir, publicUrl: base })]).callback());
  liquidityUrl = `${base}/liquidity`;
  harness = await startHarness({
    LIQUIDITY_PROVIDER_URL: liquidityUrl,
    FX_BUFFER_BPS: String(BUFFER_BPS),
    FX_BAND_BPS: String(BAND_BPS),
    FX_MAX_PRICE_AGE_SECONDS: '2',
  });
  parties = await setUpParties(harness);
});

afterEach(async () => {
  await scenario({ reset: true });
});

afterAll(async () => {
  await harness?.teardown();
  await new Promise((resolve) => simulator?.close(resolve));
  rmSync(stateDir, { recursive: true, force: true });
});

async function scenario(body: object): Promise<void> {
  const response = await fetch(`${liquidityUrl}/_scenarios`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
}

function saveExample(name: string, value: unknown): void {
  const dir = path.join(__dirname, '..', 'test-artifacts', 'pix-fx');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, name), `${JSON.stringify(value, null, 2)}\n`);
}

const fxRows = (transactionId: string) =>
  harness.prisma.fxExecution.findMany({ where: { transactionId }, orderBy: { executedAt: 'asc' } });

describe('partner quotes from the indicative price', () => {
  it('prices BRL -> USDC from the provider’s mid less the buffer', async () => {
    const quote = await createQuote(parties.partner.api);
    const mid = (await (await fetch(`${liquidityUrl}/v1/prices/BRL-USDC`)).json()) as { mid: string };
    const locked = Number(quote.sender_quotation);
    const expected = Number(mid.mid) * (1 - BUFFER_BPS / 10_000);
    // Same second, the drift moves the mid by well under 1 bp.
    expect(Math.abs(locked - expected) / expected).toBeLessThan(0.0005);
  });

  it('refuses a quote with 503 while the price is stale, and while the provider is down', async () => {
    await scenario({ stale: true });
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const stale = await parties.partner.api.post('/v1/quote/fiat-to-fiat').send(fiatToFiatQuoteBody());
    expect(stale.status).toBe(503);
    expect(JSON.stringify(stale.body)).toMatch(/s old/);
    await scenario({ stale: false, down: true });
    const down = await parties.partner.api.post('/v1/quote/fiat-to-fiat').send(fiatToFiatQuoteBody());
    expect(down.status).toBe(503);
  });
});

describe('a settlement’s two firm quotes', () => {
  it('executes each leg at a fresh firm quote and books the difference to FX gain/loss, balanced', async () => {
    const since = new Date(Date.now() - 1000);
    const transaction = await createTransaction(parties);
    await deposit(parties, transaction);
    await waitForStatus(harness, transaction.id, 'completed');
    const executions = await fxRows(transaction.id);
    expect(executions.map((row) => [row.step, row.soldCurrency, row.boughtCurrency])).toEqual([
      ['fiat_to_stablecoin', 'BRL', 'USDC'],
      ['stablecoin_to_fiat', 'USDC', 'MXN'],
    ]);
    for (const row of executions) {
      // The buffer (30 bps) is wider than the provider's spread (15 bps): each leg gains about the difference.
      const gainBps = Number(row.result) / Number(row.atLockedRate);
      expect(gainBps).toBeGreaterThan(0);
      expect(gainBps).toBeLessThan(((BUFFER_BPS - LIQUIDITY_SPREAD_BPS) * 3) / 10_000);
      expect(Number(row.executedAmount) - Number(row.atLockedRate)).toBeCloseTo(Number(row.result), 6);
    }
    const ledger = await ledgerOf(harness, transaction.id);
    expect(ledger.balanced).toBe(true);
    expect(ledger.references).toEqual(expect.arrayContaining(['fx:fiat_to_stablecoin', 'fx:stablecoin_to_fiat']));
    expect(ledger.net['fx_gain_loss:USDC']).toBe(executions[0]!.result.toFixed());
    expect(ledger.net['fx_gain_loss:MXN']).toBe(executions[1]!.result.toFixed());
    const byPair = await fxResultByPair(harness.prisma, since, new Date(Date.now() + 1000));
    expect(byPair.map((row) => row.pair)).toEqual(expect.arrayContaining(['BRL/USDC', 'USDC/MXN']));
    const printed = await fxResultCommand(
      ['--from', since.toISOString(), '--to', new Date(Date.now() + 1000).toISOString()],
      harness.prisma,
    );
    expect(printed.pairs).toEqual(byPair);
    const postings = await harness.prisma.ledgerTransaction.findMany({
      where: { reference: { startsWith: `transaction:${transaction.id}:fx:` } },
      include: { entries: { include: { account: true } } },
    });
    // Examples for docs/examples/fx/ (the lead's note): the two executions, their postings, the command's output.
    saveExample('settlement-firm-quotes.json', {
      transaction_id: transaction.id,
      executions,
      postings: postings.map((posting) => ({
        reference: posting.reference,
        description: posting.description,
        entries: posting.entries.map((e) => ({
          account: e.account.systemCode,
          currency: e.currency,
          amount: e.amount,
        })),
      })),
    });
    saveExample('fx-result.json', printed);
  });

  it('finds an execution whose answer was lost by its reference and never executes a leg twice', async () => {
    const transaction = await createTransaction(parties);
    await scenario({ lose_execute_answers: 1 });
    await deposit(parties, transaction);
    await waitForStatus(harness, transaction.id, 'completed');
    const executions = await fxRows(transaction.id);
    expect(executions).toHaveLength(2);
    const quotes = (await (
      await fetch(`${liquidityUrl}/v1/quotes?client_reference=${transaction.id}:fiat_to_stablecoin`)
    ).json()) as { data: Array<{ id: string; status: string }> };
    expect(quotes.data.filter((quote) => quote.status === 'executed')).toHaveLength(1);
    const detail = (await (await fetch(`${liquidityUrl}/_scenarios/quotes/${quotes.data[0]!.id}`)).json()) as {
      execute_requests: number;
    };
    expect(detail.execute_requests).toBe(1);
  });

  it('executes nothing when the firm price moved beyond the band since the partner’s quote', async () => {
    const transaction = await createTransaction(parties);
    await scenario({ jump_bps: 500 });
    await deposit(parties, transaction);
    await waitForStatus(harness, transaction.id, 'error');
    expect(await fxRows(transaction.id)).toHaveLength(0);
    const quotes = (await (
      await fetch(`${liquidityUrl}/v1/quotes?client_reference=${transaction.id}:fiat_to_stablecoin`)
    ).json()) as { data: Array<{ status: string }> };
    expect(quotes.data.length).toBeGreaterThan(0);
    expect(quotes.data.every((quote) => quote.status !== 'executed')).toBe(true);
  });
});
