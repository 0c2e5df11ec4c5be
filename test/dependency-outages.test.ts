// No process of ours dies because a dependency went away. The production API entry point (src/server.ts) and a
// worker run as real OS processes; PostgreSQL ends every one of their sessions (pg_terminate_backend, what a
// restart or failover does) while requests, database transactions and settlements are in flight, then the
// database and Temporal are cut off. Both processes must stay up, answer 503 with Retry-After meanwhile (never a
// 500, never a hang), and finish every settlement, exactly once, when the dependency is back.
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { connectionName } from '../src/persistence/database';
import { Harness, startHarness } from './support/harness';
import { ServiceProcess, startApiProcess, startWorkerProcess } from './support/service-processes';
import { databaseUrlThrough, TcpProxy } from './support/tcp-proxy';
import {
  createTransaction,
  expectLedgerInvariants,
  fiatToFiatQuoteBody,
  ledgerOf,
  Parties,
  setUpParties,
  TransactionBody,
  waitForStatus,
} from './support/transactions';

let harness: Harness;
let databaseProxy: TcpProxy;
let temporalProxy: TcpProxy;
let api: { service: ServiceProcess; url: string };
let worker: ServiceProcess;
let parties: Parties;

// Short bounds, so an outage is answered within seconds.
const bounds = {
  DATABASE_CONNECT_TIMEOUT_SECONDS: '2',
  DATABASE_STATEMENT_TIMEOUT_SECONDS: '5',
  TEMPORAL_CALL_TIMEOUT_SECONDS: '3',
  REQUEST_TIMEOUT_SECONDS: '8',
};

beforeAll(async () => {
  harness = await startHarness({}, { inProcessWorker: false });
  databaseProxy = await TcpProxy.forAddress(new URL(harness.config.databaseUrl).host).start();
  temporalProxy = await TcpProxy.forAddress(harness.env.address).start();
  const through = { databaseUrl: databaseUrlThrough(harness.config.databaseUrl, databaseProxy) };
  [api, worker] = await Promise.all([
    startApiProcess(harness, { ...through, temporalAddress: temporalProxy.address, env: bounds }),
    startWorkerProcess(harness, { temporalAddress: temporalProxy.address }),
  ]);
  parties = await setUpParties(harness);
}, 180_000);

afterEach(() => {
  // Whatever happened above, neither process may have died of it.
  expect({ api: api.service.running(), worker: worker.running() }).toEqual({ api: true, worker: true });
});

afterAll(async () => {
  // The worker killed: a graceful stop here waits for its pending long polls to come back from the test server.
  await Promise.all([api?.service.stop('SIGTERM'), worker?.stop('SIGKILL')]);
  await databaseProxy?.stop();
  await temporalProxy?.stop();
  await harness?.teardown();
});

const asPartner = () => request(api.url);
const authorization = () => parties.partner.apiKey;

interface Answer {
  what: string;
  status: number;
  retryAfter?: string;
  code?: string;
}

/** One request to the API process as the partner; a dropped connection is an answer too (status 0). */
async function send(
  what: string,
  method: 'get' | 'post',
  path: string,
  body?: object,
  idempotencyKey?: string,
): Promise<Answer> {
  let call = asPartner()[method](path).set('Authorization', authorization()).timeout(30_000);
  if (idempotencyKey) call = call.set('Idempotency-Key', idempotencyKey);
  try {
    const response = body ? await call.send(body) : await call;
    return {
      what,
      status: response.status,
      retryAfter: response.headers['retry-after'],
      code: (response.body as { error?: { code?: string } })?.error?.code,
    };
  } catch (error) {
    return { what, status: 0, code: (error as Error).message };
  }
}

/** Sends the deposit with one Idempotency-Key until it is taken (201), as a partner retries a 503. */
async function depositUntilTaken(transaction: TransactionBody, answers: Answer[]): Promise<void> {
  const key = randomUUID();
  const deadline = Date.now() + 90_000;
  for (;;) {
    const answer = await send(
      'deposit',
      'post',
      `/v1/sandbox/transactions/${transaction.id}/deposit`,
      { amount: transaction.sender.amount },
      key,
    );
    answers.push(answer);
    if (answer.status === 201) return;
    if (Date.now() > deadline) throw new Error(`deposit never taken: ${JSON.stringify(answer)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Problems with the answers: anything but success, a 503 with Retry-After, or (a retry with the key of a request
 * that failed) 409 idempotency_key_in_use until the failed request's key is freed.
 */
function unexpected(answers: Answer[]): Answer[] {
  return answers.filter(
    (answer) =>
      !(
        answer.status === 200 ||
        answer.status === 201 ||
        (answer.status === 503 && Number(answer.retryAfter) > 0) ||
        (answer.status === 409 && answer.code === 'idempotency_key_in_use' && answer.what === 'deposit')
      ),
  );
}

async function terminateBackendsOf(role: string, pid: number): Promise<number> {
  const name = connectionName(role, undefined, pid);
  const rows = await harness.prisma.$queryRaw<Array<{ terminated: boolean }>>`
    SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity
    WHERE application_name = ${name} OR application_name LIKE ${`${name}/%`}`;
  return rows.filter((row) => row.terminated).length;
}

async function expectSettled(transaction: TransactionBody): Promise<void> {
  await waitForStatus(harness, transaction.id, 'completed');
  const final = (await parties.partner.api.get(`/v1/transactions/${transaction.id}`)).body as TransactionBody;
  expectLedgerInvariants(await ledgerOf(harness, transaction.id), final, parties.partner.partnerId, parties.wallet.id);
  const deposits = await harness.prisma.transactionDeposit.findMany({ where: { transactionId: transaction.id } });
  expect(deposits.map((deposit) => deposit.status)).toEqual(['accepted']);
}

it('stays up while PostgreSQL ends every session of the API and the worker, answers 503 while the database is away, and settles everything after', async () => {
  const transactions = await Promise.all([1, 2, 3].map(() => createTransaction(parties)));
  const answers: Answer[] = [];
  let load = true;
  const reader = async () => {
    while (load) {
      const transaction = transactions[answers.length % transactions.length] as TransactionBody;
      answers.push(await send('read', 'get', `/v1/transactions/${transaction.id}`));
    }
  };
  const quoter = async () => {
    while (load) {
      answers.push(await send('quote', 'post', '/v1/quote/fiat-to-fiat', fiatToFiatQuoteBody(), randomUUID()));
    }
  };
  const traffic = [reader(), reader(), quoter()];
  try {
    const deposits = Promise.all(transactions.map((transaction) => depositUntilTaken(transaction, answers)));
    deposits.catch(() => undefined); // awaited below; not unhandled should an expectation fail first

    // PostgreSQL ends their sessions again and again for 3 s: idle ones in the pools, ones mid-statement, ones
    // inside a database transaction (settlement steps, writes), the relay's and the listeners'.
    const terminated = { api: 0, worker: 0 };
    const until = Date.now() + 3_000;
    while (Date.now() < until) {
      terminated.api += await terminateBackendsOf('api', api.service.pid);
      terminated.worker += await terminateBackendsOf('worker', worker.pid);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(terminated.api).toBeGreaterThan(0);
    expect(terminated.worker).toBeGreaterThan(0);

    // Then the database is away from the API altogether: a read answers 503 with Retry-After, within its bounds.
    databaseProxy.cut();
    try {
      const startedAt = Date.now();
      const away = await send('read while the database is away', 'get', `/v1/transactions/${transactions[0]!.id}`);
      expect(away).toMatchObject({ status: 503, code: 'service_unavailable' });
      expect(Number(away.retryAfter)).toBeGreaterThan(0);
      expect(Date.now() - startedAt).toBeLessThan(15_000);
    } finally {
      databaseProxy.restore();
    }
    await deposits;
  } finally {
    load = false;
    await Promise.all(traffic);
  }
  // With what the API logged, should it have answered anything else (an unhandled error is logged there).
  const wrong = unexpected(answers);
  expect({ wrong, apiLog: wrong.length > 0 ? api.service.output() : '' }).toEqual({ wrong: [], apiLog: '' });
  expect(answers.filter((answer) => answer.status === 503).length).toBeGreaterThan(0);
  // And it serves again.
  expect((await send('read after', 'get', `/v1/transactions/${transactions[0]!.id}`)).status).toBe(200);
  for (const transaction of transactions) await expectSettled(transaction);
}, 240_000);

it('stays up while Temporal is away: writes that need it answer 503 and change nothing, reads still answer, and the same request succeeds once it is back', async () => {
  const transaction = await createTransaction(parties);
  const key = randomUUID();
  const depositPath = `/v1/sandbox/transactions/${transaction.id}/deposit`;
  temporalProxy.cut();
  try {
    const refused = await send('deposit', 'post', depositPath, { amount: transaction.sender.amount }, key);
    expect(refused).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    const quote = await send('quote', 'post', '/v1/quote/fiat-to-fiat', fiatToFiatQuoteBody(), randomUUID());
    expect(quote).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect((await send('read', 'get', `/v1/transactions/${transaction.id}`)).status).toBe(200);
    expect(await harness.prisma.transactionDeposit.count({ where: { transactionId: transaction.id } })).toBe(0);
  } finally {
    temporalProxy.restore();
  }
  // The partner retries with the same key: taken once, settled once.
  const deadline = Date.now() + 60_000;
  let retried = await send('deposit again', 'post', depositPath, { amount: transaction.sender.amount }, key);
  while (retried.status === 503 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    retried = await send('deposit again', 'post', depositPath, { amount: transaction.sender.amount }, key);
  }
  expect(retried.status).toBe(201);
  await expectSettled(transaction);
}, 180_000);
