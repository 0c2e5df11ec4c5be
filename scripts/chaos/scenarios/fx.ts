// Issue 38's chaos at the bank simulator's `liquidity` and `pix` channels. The chaos stack starts the simulator
// (BANK_SIMULATOR_URL); each scenario here runs an API and a worker of their own (`api-bank`, `worker-bank`, on the
// task queue `payments-bank`) configured with bankSimulatorServiceEnv, so the other scenarios' API and worker keep the
// sandbox rails whose operations they count:
// - fx-band-jump: the provider's price jumps beyond the band while settlements run. Every transaction ends completed or
//   in error, never with a leg executed twice, and every execution's FX posting is balanced.
// - fx-quotes-down: the quote service is down while partners ask for quotes: every answer is 503 in the error shape
//   (never a 500, never a quote made), and quotes work again once it is back.
// - pix-webhook: the bank notifies each payment twice and late (API Pix `pix` webhook, the simulator's scenarios),
//   some after their transaction was cancelled, and the API is killed while notifications are due (the bank
//   notifies again). Every payment is one deposit; a transaction still awaiting it completes; a cancelled one's
//   payment is sent back once through devolucao (DEVOLVIDO at the bank).
import { HttpClient } from '../http';
import { freePort } from '../../lib/ports';
import { tsEntry } from '../../lib/entry-points';
import { StackProcess } from '../../lib/stack';
import { approvedCustomer, call, createFiatToFiatQuote, fiatToFiatAccounts, fiatToFiatBody, idOf } from '../fixtures';
import { RunSize, ScenarioReport } from '../report';
import type { ChaosSystem } from '../system';
import { pause } from '../../lib/wait';
import { ApiPixClient } from '../../../src/providers/pix/api-pix';
import { pixTxidFor, returnIdFor } from '../../../src/providers/pix/collections';
import { bankSimulatorServiceEnv } from '../../lib/stack';

function liquidityUrl(): string {
  const base = process.env.BANK_SIMULATOR_URL;
  if (!base) throw new Error('BANK_SIMULATOR_URL is not set: the chaos stack does not run the bank simulator yet');
  return `${base.replace(/\/$/, '')}/liquidity`;
}

interface BankServices {
  http: HttpClient;
  api: StackProcess;
  /** A partner of the run, talking to this API. */
  partner(name: string): Promise<{ partnerId: string; api: HttpClient }>;
}

/** Runs `scenario` against an API and a worker of its own that use the bank simulator; both removed afterwards. */
async function withBankServices(system: ChaosSystem, scenario: (bank: BankServices) => Promise<void>): Promise<void> {
  const port = await freePort();
  const simulatorUrl = liquidityUrl().replace(/\/liquidity$/, '');
  const env: NodeJS.ProcessEnv = {
    ...system.apiEnv,
    PORT: String(port),
    TEMPORAL_TASK_QUEUE: 'payments-bank',
    ...bankSimulatorServiceEnv(simulatorUrl, `http://127.0.0.1:${port}`),
  };
  const http = new HttpClient(port);
  try {
    const [api] = await Promise.all([
      system.stack.start({
        name: 'api-bank',
        ...tsEntry('src/server.ts'),
        env,
        ready: async () => {
          const live = await http.send({ method: 'GET', path: '/health/live', timeoutMs: 1000 });
          return live.kind === 'response' && live.status === 200;
        },
      }),
      system.stack.start({
        name: 'worker-bank',
        ...tsEntry('src/worker.ts'),
        env: { ...env, ...system.temporalTlsEnv('worker') },
        ready: (worker) => worker.recentOutput().includes('"msg":"worker running"'),
      }),
    ]);
    await scenario({
      http,
      api,
      async partner(name) {
        const created = await system.createPartner(name);
        return { partnerId: created.partnerId, api: http.with({ Authorization: created.apiKey }) };
      },
    });
  } finally {
    await system.stack.remove('api-bank');
    await system.stack.remove('worker-bank');
  }
}

async function scenarioControl(body: object): Promise<void> {
  const response = await fetch(`${liquidityUrl()}/_scenarios`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`liquidity scenario control answered ${response.status}`);
}

async function quotesOf(reference: string): Promise<Array<{ status: string }>> {
  const response = await fetch(`${liquidityUrl()}/v1/quotes?client_reference=${encodeURIComponent(reference)}`);
  return ((await response.json()) as { data: Array<{ status: string }> }).data;
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

export function fxBandJumpScenario(system: ChaosSystem, report: ScenarioReport, size: RunSize): Promise<void> {
  return withBankServices(system, (bank) => fxBandJump(system, bank, report, size));
}

async function fxBandJump(system: ChaosSystem, bank: BankServices, report: ScenarioReport, size: RunSize) {
  const { api } = await bank.partner('chaos fx band');
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
  let refusedQuotes = 0;
  for (const id of ids) {
    report.cases += 1;
    const status = await finalStatus(api, id, size.quick ? 120_000 : 600_000);
    outcomes[status] = (outcomes[status] ?? 0) + 1;
    report.check(['completed', 'error'].includes(status), () => `transaction ${id} ended ${status}`);
    for (const step of ['fiat_to_stablecoin', 'stablecoin_to_fiat'] as const) {
      const quotes = await quotesOf(`${id}:${step}`);
      const executed = quotes.filter((quote) => quote.status === 'executed').length;
      // Firm quotes asked but not executed: refused beyond the band (or expired) before a later one went through.
      refusedQuotes += quotes.length - executed;
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
  report.notes.refused_firm_quotes = refusedQuotes;
}

export function fxQuotesDownScenario(system: ChaosSystem, report: ScenarioReport, size: RunSize): Promise<void> {
  return withBankServices(system, (bank) => fxQuotesDown(system, bank, report, size));
}

async function fxQuotesDown(system: ChaosSystem, bank: BankServices, report: ScenarioReport, size: RunSize) {
  const partner = await bank.partner('chaos fx down');
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

function pixSimulatorUrl(): string {
  return `${liquidityUrl().replace(/\/liquidity$/, '')}/pix`;
}

async function pixScenario(method: string, pathname: string, body?: object): Promise<any> {
  const response = await fetch(`${pixSimulatorUrl()}/_scenarios${pathname}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (!response.ok) throw new Error(`pix scenario ${pathname} answered ${response.status}`);
  return response.json();
}

export function pixWebhookScenario(system: ChaosSystem, report: ScenarioReport, size: RunSize): Promise<void> {
  return withBankServices(system, (bank) => pixWebhook(system, bank, report, size));
}

async function pixWebhook(system: ChaosSystem, services: BankServices, report: ScenarioReport, size: RunSize) {
  const { api } = await services.partner('chaos pix webhook');
  const customerId = await approvedCustomer(api);
  const accounts = await fiatToFiatAccounts(api, customerId);
  const env = bankSimulatorServiceEnv('', '');
  const bank = new ApiPixClient({
    baseUrl: pixSimulatorUrl(),
    clientId: env.PIX_CLIENT_ID!,
    clientSecret: env.PIX_CLIENT_SECRET!,
  });
  const count = size.quick ? 8 : 40;
  const payments: Array<{ id: string; endToEndId: string; cancelled: boolean }> = [];
  try {
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
      const reference = (created.body as { sender_deposit_instructions: { reference: string } })
        .sender_deposit_instructions.reference;
      // Notified twice, 4-8 s late; every third transaction is cancelled before its notification arrives.
      const paid = await pixScenario('POST', '/payments', {
        txid: pixTxidFor(reference),
        scenarios: ['duplicate_notification', 'late_payment'],
        delayMs: 4_000 + (index % 5) * 1_000,
      });
      const cancelled = index % 3 === 0;
      if (cancelled) {
        await call(
          api,
          { method: 'PUT', path: `/v1/transactions/${id}`, json: { status: 'cancelled' } },
          200,
          'cancel',
        );
      }
      payments.push({ id, endToEndId: paid.endToEndId as string, cancelled });
    }
    // While notifications are due, the API is killed and comes back: refused deliveries are sent again by the bank.
    await pause(3_500);
    await services.api.restart('SIGKILL');
    report.kills += 1;
    report.restarts += 1;
    const deadline = Date.now() + (size.quick ? 120_000 : 600_000);
    for (const payment of payments) {
      report.cases += 1;
      const expected = payment.cancelled ? 'cancelled' : 'completed';
      let status = 'unknown';
      let depositStatus: string | null = null;
      while (Date.now() < deadline) {
        status = await finalStatus(api, payment.id, 2_000).catch(() => 'unknown');
        const deposits = await system.prisma.transactionDeposit.findMany({ where: { transactionId: payment.id } });
        depositStatus = deposits[0]?.status ?? null;
        const settled = payment.cancelled ? depositStatus === 'returned' : status === 'completed';
        if (settled) break;
        await pause(1_000);
      }
      report.check(status === expected, () => `transaction ${payment.id} ended ${status}, expected ${expected}`);
      const deposits = await system.prisma.transactionDeposit.findMany({ where: { transactionId: payment.id } });
      report.check(
        deposits.length === 1 && deposits[0]!.providerReference === payment.endToEndId,
        () => `payment ${payment.endToEndId}: ${deposits.length} deposits of transaction ${payment.id}`,
      );
      const pix = await bank.getPix(payment.endToEndId);
      const returns = pix.devolucoes ?? [];
      if (payment.cancelled) {
        report.check(
          depositStatus === 'returned',
          () => `late payment ${payment.endToEndId}: deposit ${depositStatus}`,
        );
        report.check(
          returns.length === 1 &&
            returns[0]!.status === 'DEVOLVIDO' &&
            returns[0]!.id === returnIdFor(`deposit:${deposits[0]?.id}:return`),
          () => `late payment ${payment.endToEndId}: returns ${JSON.stringify(returns)}`,
        );
      } else {
        report.check(returns.length === 0, () => `payment ${payment.endToEndId} of a completed transaction returned`);
      }
    }
    const { deliveries } = (await pixScenario('GET', '/deliveries')) as {
      deliveries: Array<{ endToEndId: string; status: number | null }>;
    };
    const ours = deliveries.filter((delivery) => payments.some((p) => p.endToEndId === delivery.endToEndId));
    const refused = ours.filter((delivery) => delivery.status !== 200).length;
    for (const payment of payments) {
      const answered = ours.filter((d) => d.endToEndId === payment.endToEndId && d.status === 200).length;
      report.check(answered >= 2, () => `payment ${payment.endToEndId}: ${answered} notifications answered 200`);
    }
    report.notes.deliveries = ours.length;
    report.notes.refused_while_down = refused;
    report.notes.returned = payments.filter((payment) => payment.cancelled).length;
  } finally {
    bank.close();
  }
}
