// Issue 38's chaos at the liquidity provider (the bank simulator's `liquidity` channel; the chaos stack must start the
// simulator and give the API and workers LIQUIDITY_PROVIDER_URL=<simulator>/liquidity; BANK_SIMULATOR_URL names the
// simulator here):
// - fx-band-jump: the provider's price jumps beyond the band while settlements run. Every transaction ends completed or
//   in error, never with a leg executed twice, and every execution's FX posting is balanced.
// - fx-quotes-down: the quote service is down while partners ask for quotes: every answer is 503 in the error shape
//   (never a 500, never a quote made), and quotes work again once it is back.
import type { HttpClient } from '../http';
import { approvedCustomer, call, createFiatToFiatQuote, fiatToFiatAccounts, fiatToFiatBody, idOf } from '../fixtures';
import { RunSize, ScenarioReport } from '../report';
import type { ChaosSystem } from '../system';
import { pause } from '../../lib/wait';

function liquidityUrl(): string {
  const base = process.env.BANK_SIMULATOR_URL;
  if (!base) throw new Error('BANK_SIMULATOR_URL is not set: the chaos stack does not run the bank simulator yet');
  return `${base.replace(/\/$/, '')}/liquidity`;
}

async function scenarioControl(body: object): Promise<void> {
  const response = await fetch(`${liquidityUrl()}/_scenarios`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`liquidity scenario control answered ${response.status}`);
}

async function executedQuotes(reference: string): Promise<number> {
  const response = await fetch(`${liquidityUrl()}/v1/quotes?client_reference=${encodeURIComponent(reference)}`);
  const body = (await response.json()) as { data: Array<{ status: string }> };
  return body.data.filter((quote) => quote.status === 'executed').length;
}

async function finalStatus(api: HttpClient, id: string, limitMs: number): Promise<string> {
  const deadline = Date.now() + limitMs;
  let status = 'unknown';
  while (Date.now() < deadline) {
    const outcome = await api.send({ method: 'GET', path: `/v1/transactions/${id}` });
    if (outcome.kind === 'response' && outcome.status === 200) {
      status = (outcome.body as { status: string }).status;
      if (['completed', 'error', 'refunded', 'failed'].includes(status)) return status;
    }
    await pause(500);
  }
  return status;
}

export async function fxBandJumpScenario(system: ChaosSystem, report: ScenarioReport, size: RunSize): Promise<void> {
  const partner = await system.createPartner('chaos fx band');
  const { api } = partner;
  const customerId = await approvedCustomer(api);
  const accounts = await fiatToFiatAccounts(api, customerId);
  const count = size.quick ? 6 : 30;
  const ids: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const quoteId = await createFiatToFiatQuote(api);
    const created = await call(
      api,
      {
        method: 'POST',
        path: '/v1/fiat-to-fiat',
        json: fiatToFiatBody({ approvedCustomerId: customerId, fiatToFiatQuoteId: quoteId, ...accounts }),
      },
      201,
      'fiat-to-fiat',
    );
    const id = idOf(created);
    ids.push(id);
    const amount = (created.body as { sender: { amount: string } }).sender.amount;
    // Every other deposit lands while the price is 5% off the locked rate (the band is FX_BAND_BPS, 100 by default).
    await scenarioControl({ jump_bps: index % 2 === 0 ? 0 : 500 });
    await call(
      api,
      { method: 'POST', path: `/v1/sandbox/transactions/${id}/deposit`, json: { amount } },
      201,
      'deposit',
    );
  }
  await pause(3_000);
  await scenarioControl({ reset: true });
  const outcomes: Record<string, number> = {};
  for (const id of ids) {
    report.cases += 1;
    const status = await finalStatus(api, id, size.quick ? 120_000 : 600_000);
    outcomes[status] = (outcomes[status] ?? 0) + 1;
    report.check(['completed', 'error'].includes(status), () => `transaction ${id} ended ${status}`);
    for (const step of ['fiat_to_stablecoin', 'stablecoin_to_fiat']) {
      const executed = await executedQuotes(`${id}:${step}`);
      report.check(executed <= 1, () => `transaction ${id} ${step}: ${executed} executions`);
      const recorded = await system.prisma.fxExecution.count({ where: { transactionId: id, step } });
      report.check(
        recorded === executed,
        () => `transaction ${id} ${step}: ${executed} executed, ${recorded} recorded`,
      );
    }
  }
  const unbalanced = await system.prisma.$queryRaw<Array<{ reference: string }>>`
    SELECT lt.reference FROM ledger_transactions lt JOIN ledger_entries e ON e.transaction_id = lt.id
    WHERE lt.reference LIKE 'transaction:%:fx:%' AND lt.reference = ANY(${ids.flatMap((id) => [
      `transaction:${id}:fx:fiat_to_stablecoin`,
      `transaction:${id}:fx:stablecoin_to_fiat`,
    ])}::text[])
    GROUP BY lt.reference, e.currency HAVING sum(e.amount) <> 0`;
  report.check(
    unbalanced.length === 0,
    () => `unbalanced FX postings: ${unbalanced.map((r) => r.reference).join(', ')}`,
  );
  Object.assign(report.notes, outcomes);
}

export async function fxQuotesDownScenario(system: ChaosSystem, report: ScenarioReport, size: RunSize): Promise<void> {
  const partner = await system.createPartner('chaos fx down');
  const { api } = partner;
  const before = await system.prisma.quote.count({ where: { partnerId: partner.partnerId } });
  await scenarioControl({ down: true });
  const asks = size.quick ? 20 : 200;
  let refused = 0;
  try {
    for (let index = 0; index < asks; index += 1) {
      report.cases += 1;
      const outcome = await api.send({
        method: 'POST',
        path: '/v1/quote/fiat-to-fiat',
        json: {
          sender: { currency: 'BRL', payment_rail: 'pix', amount: '500.00' },
          stablecoin: { currency: 'USDC', payment_rail: 'solana' },
          receiver: { currency: 'MXN', payment_rail: 'spei' },
        },
      });
      const status = outcome.kind === 'response' ? outcome.status : 0;
      if (status === 503) refused += 1;
      report.check(status === 503, () => `quote while the provider is down answered ${status}`);
    }
  } finally {
    await scenarioControl({ reset: true });
  }
  const made = (await system.prisma.quote.count({ where: { partnerId: partner.partnerId } })) - before;
  report.check(made === 0, () => `${made} quotes were made while the provider was down`);
  await createFiatToFiatQuote(api);
  report.notes['503s'] = refused;
}
