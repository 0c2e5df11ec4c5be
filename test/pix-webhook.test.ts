// The service's own `pix` webhook route against the bank simulator's pix channel: the adapter registers
// <PIX_WEBHOOK_BASE_URL>/providers/api-pix/webhook/{secret} with PUT /webhook/{chave}, the simulator posts each payment
// to <url>/pix, and the route records it through the idempotent deposit path keyed by its endToEndId: a payment
// notified twice is one deposit, a late one (after the transaction was cancelled) is recorded and sent back through
// devolucao; a wrong secret is not found and records nothing.
import http from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiPixClient } from '../src/providers/pix/api-pix';
import {
  API_PIX_PROVIDER,
  ApiPixDepositProvider,
  pixTxidFor,
  referenceOfTxid,
  returnIdFor,
} from '../src/providers/pix/collections';
import { resolveErrorUpdate } from '../workflows/settlement';
import { createBankSimulatorApp } from '../simulators/bank/app';
import { createPixChannel, DEV_PIX_CLIENT } from '../simulators/bank/pix/channel';
import { createLiquidityChannel } from '../simulators/bank/liquidity/channel';
import type { BankChannel } from '../simulators/bank/channel';
import { Harness, startHarness } from './support/harness';
import {
  createTransaction,
  eventTypesOf,
  Parties,
  settlementHandle,
  setUpParties,
  transactionOf,
  untilSkipping,
  waitForStatus,
} from './support/transactions';

const COLLECTION_KEY = '11222333000181';
const WEBHOOK_SECRET = 'test-pix-webhook-secret-0123456789';
let harness: Harness;
let parties: Parties;
let simulator: http.Server;
let simulatorUrl: string;
let channel: BankChannel;
let api: http.Server;
let bank: ApiPixClient;
const stateDirs = [0, 1].map(() => mkdtempSync(path.join(os.tmpdir(), 'bank-simulator-')));

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  simulator = http.createServer();
  simulatorUrl = await listen(simulator);
  channel = createPixChannel({
    stateDir: stateDirs[0]!,
    publicUrl: simulatorUrl,
    lateDelayMs: 2_000,
    returnSettleMs: 100,
  });
  const liquidity = createLiquidityChannel({
    stateDir: stateDirs[1]!,
    publicUrl: simulatorUrl,
  });
  simulator.on('request', createBankSimulatorApp([channel, liquidity]).callback());
  await channel.start?.();
  // The API listens for real: the simulator calls it.
  api = http.createServer();
  const apiUrl = await listen(api);
  harness = await startHarness({
    PIX_API_URL: `${simulatorUrl}/pix`,
    PIX_CLIENT_ID: DEV_PIX_CLIENT.id,
    PIX_CLIENT_SECRET: DEV_PIX_CLIENT.secret,
    PIX_COLLECTION_KEY: COLLECTION_KEY,
    PIX_WEBHOOK_SECRET: WEBHOOK_SECRET,
    PIX_WEBHOOK_BASE_URL: apiUrl,
    LIQUIDITY_PROVIDER_URL: `${simulatorUrl}/liquidity`,
  });
  api.on('request', harness.createApp(harness.services).callback());
  parties = await setUpParties(harness);
  const provider = harness.services.depositProvider;
  if (!(provider instanceof ApiPixDepositProvider)) throw new Error('PIX_API_URL did not make the API Pix provider');
  await provider.registerWebhook(harness.config.pixApi!.webhook!.url, 1);
  bank = new ApiPixClient({
    baseUrl: `${simulatorUrl}/pix`,
    clientId: DEV_PIX_CLIENT.id,
    clientSecret: DEV_PIX_CLIENT.secret,
  });
});

afterAll(async () => {
  bank?.close();
  await channel?.stop?.();
  await new Promise((resolve) => simulator?.close(resolve));
  for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
  await new Promise((resolve) => api?.close(resolve));
  await harness?.teardown();
});

/** Examples for the lead's note (test-artifacts/pix-fx/). */
function saveExample(name: string, value: unknown): void {
  const dir = path.join(__dirname, '..', 'test-artifacts', 'pix-fx');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, name), `${JSON.stringify(value, null, 2)}\n`);
}

async function simulatorCall(method: string, pathname: string, body?: object): Promise<any> {
  const response = await fetch(`${simulatorUrl}/pix${pathname}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`simulator ${method} ${pathname}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** Deliveries the simulator made of one payment (url and the service's answer). */
async function deliveriesOf(endToEndId: string): Promise<Array<{ url: string; status: number | null }>> {
  const { deliveries } = (await simulatorCall('GET', '/_scenarios/deliveries')) as {
    deliveries: Array<{ endToEndId: string; url: string; status: number | null }>;
  };
  return deliveries.filter((delivery) => delivery.endToEndId === endToEndId);
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const depositsOf = (transactionId: string) =>
  harness.prisma.transactionDeposit.findMany({ where: { transactionId }, orderBy: { receivedAt: 'asc' } });

it('registers the service’s webhook URL with the bank under the collection key', async () => {
  const token = await fetch(`${simulatorUrl}/pix/oauth/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${DEV_PIX_CLIENT.id}:${DEV_PIX_CLIENT.secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials&scope=webhook.read',
  }).then((response) => response.json() as Promise<{ access_token: string }>);
  const hook = await fetch(`${simulatorUrl}/pix/webhook/${COLLECTION_KEY}`, {
    headers: { authorization: `Bearer ${token.access_token}` },
  }).then((response) => response.json() as Promise<{ webhookUrl: string }>);
  expect(hook.webhookUrl).toBe(`${harness.config.pixApi!.webhook!.url}`);
  expect(hook.webhookUrl).toMatch(/\/providers\/api-pix\/webhook\/[A-Za-z0-9_-]{24,}$/);
});

it('records a payment the bank notifies twice once, and the transaction settles from it', async () => {
  const transaction = await createTransaction(parties);
  const paid = await simulatorCall('POST', '/_scenarios/payments', {
    txid: pixTxidFor(transaction.sender_deposit_instructions.reference),
    nomePagador: 'João Pereira',
    scenarios: ['duplicate_notification'],
  });
  const endToEndId = paid.endToEndId as string;
  await until(async () => (await deliveriesOf(endToEndId)).length === 2, 15_000, 'two deliveries');
  const deliveries = await deliveriesOf(endToEndId);
  // Both answered 200 by the service's route: the second is the first's deposit again.
  expect(deliveries.map((delivery) => delivery.status)).toEqual([200, 200]);
  expect(deliveries[0]!.url).toBe(`${harness.config.pixApi!.webhook!.url}/pix`);
  const deposits = await depositsOf(transaction.id);
  expect(deposits).toHaveLength(1);
  expect(deposits[0]).toMatchObject({
    provider: API_PIX_PROVIDER,
    providerReference: endToEndId,
    senderName: 'João Pereira',
  });
  expect(deposits[0]!.amount.toString()).toBe(Number(transaction.sender.amount).toString());
  await untilSkipping(
    harness,
    async () => (await transactionOf(parties, transaction.id)).status === 'completed',
    'the transaction completes',
  );
});

it('records a payment notified late, after the transaction was cancelled, and sends it back', async () => {
  const transaction = await createTransaction(parties);
  const paid = await simulatorCall('POST', '/_scenarios/payments', {
    txid: pixTxidFor(transaction.sender_deposit_instructions.reference),
    scenarios: ['late_payment'],
    delayMs: 1_500,
  });
  const endToEndId = paid.endToEndId as string;
  const cancelled = await parties.partner.api.put(`/v1/transactions/${transaction.id}`).send({ status: 'cancelled' });
  expect(cancelled.status).toBe(200);
  expect(await deliveriesOf(endToEndId)).toHaveLength(0);
  await until(async () => (await deliveriesOf(endToEndId)).length === 1, 15_000, 'the late notification');
  expect((await deliveriesOf(endToEndId)).map((delivery) => delivery.status)).toEqual([200]);
  expect(await depositsOf(transaction.id)).toHaveLength(1);
  const [late] = await depositsOf(transaction.id);
  expect(late).toMatchObject({ providerReference: endToEndId, returnReason: 'not_awaiting_deposit' });
  await untilSkipping(
    harness,
    async () => (await depositsOf(transaction.id))[0]!.status === 'returned',
    'the late deposit returned',
  );
  expect((await transactionOf(parties, transaction.id)).status).toBe('cancelled');
  // Sent back through devolucao, under the id of the deposit's return key: DEVOLVIDO at the bank.
  const atBank = await bank.getPix(endToEndId);
  expect(atBank.devolucoes).toEqual([
    expect.objectContaining({
      id: returnIdFor(`deposit:${late!.id}:return`),
      valor: atBank.valor,
      status: 'DEVOLVIDO',
    }),
  ]);
});

it('reads the deposit reference back from a txid, a reference ending in the pad letter P included', () => {
  expect(referenceOfTxid(pixTxidFor('TX2QYE3EPENP'))).toBe('TX2QYE3EPENP');
  expect(referenceOfTxid(pixTxidFor('TX7K2M9QH4RD'))).toBe('TX7K2M9QH4RD');
  expect(referenceOfTxid('TX7K2M9QH4RDPPPPPPPPPPPPPX')).toBeNull();
});

it('answers 404 to a wrong secret and records nothing', async () => {
  const transaction = await createTransaction(parties);
  const body = {
    pix: [
      {
        endToEndId: 'E99999004202611262300abcdefghijk',
        txid: pixTxidFor(transaction.sender_deposit_instructions.reference),
        valor: transaction.sender.amount,
        horario: new Date().toISOString(),
      },
    ],
  };
  const wrong = await harness.http
    .post('/providers/api-pix/webhook/not-the-secret-not-the-secret-00/pix')
    .set('content-type', 'application/json')
    .send(body);
  expect(wrong.status).toBe(404);
  expect(wrong.body.error.code).toBe('not_found');
  expect(JSON.stringify(wrong.body)).not.toContain('not-the-secret');
  expect(await depositsOf(transaction.id)).toHaveLength(0);
  const right = await harness.http
    .post(`/providers/api-pix/webhook/${WEBHOOK_SECRET}/pix`)
    .set('content-type', 'application/json')
    .send(body);
  expect(right.status).toBe(200);
  expect(right.body.recorded).toEqual([
    { end_to_end_id: body.pix[0]!.endToEndId, deposit_id: expect.any(String), status: 'accepted' },
  ]);
  expect(await depositsOf(transaction.id)).toHaveLength(1);
});

describe('returns through devolucao', () => {
  /** A transaction paid at the bank with another amount than its charge's: it is refunded in full (devolucao). */
  async function paidWrongAmount(scenarios: string[] = []) {
    const transaction = await createTransaction(parties);
    const paid = await simulatorCall('POST', '/_scenarios/payments', {
      txid: pixTxidFor(transaction.sender_deposit_instructions.reference),
      valor: '999.99',
      scenarios,
    });
    return { transaction, endToEndId: paid.endToEndId as string };
  }

  it('refunds a pix deposit by devolucao: DEVOLVIDO, the rtrId as the refund’s reference, payin.refunded', async () => {
    const { transaction, endToEndId } = await paidWrongAmount();
    await waitForStatus(harness, transaction.id, 'refunded');
    const refunded = await transactionOf(parties, transaction.id);
    expect(refunded).toMatchObject({ status: 'refunded', failure_reason: 'deposit_amount_mismatch' });
    const atBank = await bank.getPix(endToEndId);
    expect(atBank.devolucoes).toEqual([
      expect.objectContaining({
        id: returnIdFor(`${transaction.id}:refund`),
        valor: '999.99',
        natureza: 'ORIGINAL',
        status: 'DEVOLVIDO',
      }),
    ]);
    const leg = await harness.prisma.transactionLeg.findFirstOrThrow({
      where: { transactionId: transaction.id, kind: 'refund' },
    });
    expect(leg.providerReference).toBe(atBank.devolucoes![0]!.rtrId);
    const events = await eventTypesOf(harness, transaction.id);
    expect(events).toContain('payin.refunded');
    saveExample('service-refund-devolucao.json', {
      transaction: { id: refunded.id, status: refunded.status, failure_reason: refunded.failure_reason },
      refund_leg: { status: leg.status, provider_reference: leg.providerReference },
      pix_at_the_bank: atBank,
      events,
    });
  });

  it('a return the payer’s bank refuses (NAO_REALIZADO) puts the refund in error; the operator’s retry returns it', async () => {
    const { transaction, endToEndId } = await paidWrongAmount(['return_refused']);
    await waitForStatus(harness, transaction.id, 'error');
    let atBank = await bank.getPix(endToEndId);
    // Refused once, never asked twice in that round (the refusal is not retried).
    expect(atBank.devolucoes).toEqual([
      expect.objectContaining({ id: returnIdFor(`${transaction.id}:refund`), status: 'NAO_REALIZADO' }),
    ]);
    expect(await eventTypesOf(harness, transaction.id)).toContain('payin.error');
    await settlementHandle(harness, transaction.id).executeUpdate(resolveErrorUpdate, { args: [{ action: 'retry' }] });
    await waitForStatus(harness, transaction.id, 'refunded');
    atBank = await bank.getPix(endToEndId);
    expect(atBank.devolucoes!.map((devolucao) => [devolucao.id, devolucao.status])).toEqual([
      [returnIdFor(`${transaction.id}:refund`), 'NAO_REALIZADO'],
      [returnIdFor(`${transaction.id}:refund`, 1), 'DEVOLVIDO'],
    ]);
    const events = await eventTypesOf(harness, transaction.id);
    expect(events.slice(events.indexOf('payin.error'))).toEqual(
      expect.arrayContaining(['payin.error', 'payin.processing', 'payin.refunded']),
    );
  });
});

describe('the sandbox’s simulate values drive the simulators', () => {
  const sandboxDeposit = async (id: string, body: Record<string, unknown>) => {
    const response = await parties.partner.api.post(`/v1/sandbox/transactions/${id}/deposit`).send(body);
    expect(response.status).toBe(201);
    return response.body as { id: string; status: string; provider_reference: string };
  };

  it('pix_notified_twice: the payment made at the bank, its two notifications one deposit', async () => {
    const transaction = await createTransaction(parties);
    const deposit = await sandboxDeposit(transaction.id, {
      amount: transaction.sender.amount,
      sender_name: 'João Pereira',
      simulate: 'pix_notified_twice',
    });
    expect(deposit).toMatchObject({ status: 'accepted', provider_reference: expect.stringMatching(/^E99999004/) });
    const atBank = await bank.getPix(deposit.provider_reference);
    expect(atBank.txid).toBe(pixTxidFor(transaction.sender_deposit_instructions.reference));
    await until(async () => (await deliveriesOf(deposit.provider_reference)).length === 2, 15_000, 'two deliveries');
    const deliveries = await deliveriesOf(deposit.provider_reference);
    expect(deliveries.map((delivery) => delivery.status)).toEqual([200, 200]);
    const deposits = await depositsOf(transaction.id);
    expect(deposits).toHaveLength(1);
    saveExample('sandbox-deposit-through-the-bank.json', {
      sandbox_deposit_answer: deposit,
      cob: await bank.getCob(pixTxidFor(transaction.sender_deposit_instructions.reference)),
      webhook_deliveries: deliveries.map((delivery) => ({
        ...delivery,
        url: delivery.url.replace(WEBHOOK_SECRET, '{secret}'),
      })),
      deposits: deposits.map((row) => ({
        provider: row.provider,
        provider_reference: row.providerReference,
        status: row.status,
      })),
    });
    await untilSkipping(
      harness,
      async () => (await transactionOf(parties, transaction.id)).status === 'completed',
      'the transaction completes',
    );
  });

  it('pix_late_notification: recorded at once, the bank’s notification still due', async () => {
    const transaction = await createTransaction(parties);
    const deposit = await sandboxDeposit(transaction.id, {
      amount: transaction.sender.amount,
      simulate: 'pix_late_notification',
    });
    const { pending } = (await simulatorCall('GET', '/_scenarios/deliveries')) as {
      pending: Array<{ endToEndId: string; dueAt: number }>;
    };
    const due = pending.find((item) => item.endToEndId === deposit.provider_reference);
    expect(due!.dueAt - Date.now()).toBeGreaterThan(10_000);
    expect(await deliveriesOf(deposit.provider_reference)).toHaveLength(0);
    expect(await depositsOf(transaction.id)).toHaveLength(1);
  });

  it('return_error: the refund’s devolucao is refused at the bank (error), the operator’s retry returns it', async () => {
    const transaction = await createTransaction(parties);
    const deposit = await sandboxDeposit(transaction.id, { amount: '999.99', simulate: 'return_error' });
    await waitForStatus(harness, transaction.id, 'error');
    expect((await bank.getPix(deposit.provider_reference)).devolucoes).toEqual([
      expect.objectContaining({ status: 'NAO_REALIZADO' }),
    ]);
    await settlementHandle(harness, transaction.id).executeUpdate(resolveErrorUpdate, { args: [{ action: 'retry' }] });
    await waitForStatus(harness, transaction.id, 'refunded');
    expect((await bank.getPix(deposit.provider_reference)).devolucoes!.map((d) => d.status)).toEqual([
      'NAO_REALIZADO',
      'DEVOLVIDO',
    ]);
  });

  it('fx_price_jump: the leg’s firm price jumps beyond the band, nothing executed (error); the retry executes once', async () => {
    const transaction = await createTransaction(parties);
    await sandboxDeposit(transaction.id, { amount: transaction.sender.amount, simulate: 'fx_price_jump' });
    await waitForStatus(harness, transaction.id, 'error');
    const reference = `${transaction.id}:fiat_to_stablecoin`;
    const quotes = (await fetch(
      `${simulatorUrl}/liquidity/v1/quotes?client_reference=${encodeURIComponent(reference)}`,
    ).then((response) => response.json())) as { data: Array<{ status: string }> };
    expect(quotes.data.length).toBeGreaterThan(0);
    expect(quotes.data.filter((quote) => quote.status === 'executed')).toHaveLength(0);
    expect(await harness.prisma.fxExecution.count({ where: { transactionId: transaction.id } })).toBe(0);
    await settlementHandle(harness, transaction.id).executeUpdate(resolveErrorUpdate, { args: [{ action: 'retry' }] });
    await waitForStatus(harness, transaction.id, 'completed');
    const executions = await harness.prisma.fxExecution.findMany({ where: { transactionId: transaction.id } });
    expect(executions.map((execution) => execution.step).sort()).toEqual(['fiat_to_stablecoin', 'stablecoin_to_fiat']);
    // The settlement report shows each leg's executed rate and FX result beside the locked rates.
    const date = new Date().toISOString().slice(0, 10);
    const report = await parties.partner.api.get(`/v1/reports/settlements?date=${date}&format=json`);
    expect(report.status).toBe(200);
    const row = (report.body.items as Array<Record<string, string | null>>).find(
      (item) => item.transaction_id === transaction.id,
    );
    const [leg1, leg2] = ['fiat_to_stablecoin', 'stablecoin_to_fiat'].map((step) =>
      executions.find((execution) => execution.step === step)!,
    );
    expect(row!.status).toBe('completed');
    expect(Number(row!.sender_executed_rate)).toBe(Number(leg1!.price));
    expect(Number(row!.receiver_executed_rate)).toBe(Number(leg2!.price));
    expect(row!.sender_fx_result).toBe(leg1!.result.toFixed(6));
    expect(row!.receiver_fx_result).toBe(leg2!.result.toFixed(2));
    expect(Number(row!.sender_executed_rate)).not.toBe(Number(row!.sender_quotation));
    saveExample('settlement-report-fx-row.json', row);
  });
});
