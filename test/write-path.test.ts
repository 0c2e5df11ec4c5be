// The write path (docs/write-path.md): no Temporal call inside a database transaction, every committed
// resource gets its workflow, outages answer 503 within the deadline and leave nothing half-made, recovery
// needs no restart. Outages are real: the API reaches PostgreSQL and Temporal through TCP proxies we cut.
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import request from 'supertest';
import { DatabaseClient } from '../src/persistence/database';
import { createPrismaClient, prismaOf } from '../src/persistence/internal/database';
import { writePathFaults } from '../src/temporal/write-then-start';
import { temporalIsReachable } from '../src/temporal/health';
import { workflowIds } from '../src/temporal/workflow-ids';
import { individualCustomer, uploadIndividualDocuments } from './support/fixtures';
import { Harness, startHarness, TestPartner } from './support/harness';
import { databaseUrlThrough, TcpProxy } from './support/tcp-proxy';

let harness: Harness;
let partner: TestPartner;
let temporalProxy: TcpProxy;
let databaseProxy: TcpProxy;
let proxiedPrisma: DatabaseClient;
let proxiedConnection: Connection;
let api: request.Agent;
let services: Harness['services'];

const REQUEST_TIMEOUT_MS = 4_000;

beforeAll(async () => {
  harness = await startHarness();
  partner = await harness.createPartner();
  temporalProxy = await TcpProxy.forAddress(harness.env.address).start();
  databaseProxy = await TcpProxy.forAddress(new URL(harness.config.databaseUrl).host).start();
  const config = {
    ...harness.config,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    temporal: { ...harness.config.temporal, callTimeoutMs: 1_500 },
    database: { connectMs: 1_000, statementMs: 2_000 },
  };
  proxiedPrisma = createPrismaClient(databaseUrlThrough(harness.config.databaseUrl, databaseProxy), {
    role: 'test',
    poolSize: 3,
    timeouts: config.database,
  });
  proxiedConnection = Connection.lazy({ address: temporalProxy.address });
  services = {
    ...harness.services,
    config,
    prisma: proxiedPrisma,
    temporal: new Client({ connection: proxiedConnection, namespace: harness.env.namespace ?? 'default' }),
  };
  api = request.agent(harness.createApp(services).callback()).set('Authorization', partner.apiKey) as never;
});

afterEach(async () => {
  writePathFaults.beforeCommit = undefined;
  writePathFaults.afterCommit = undefined;
  temporalProxy.restore();
  databaseProxy.restore();
  // The client reconnects with a backoff: the next test starts once the engine answers through the proxy again.
  for (let attempt = 0; attempt < 60 && !(await temporalIsReachable(services.temporal, 1_000)); attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
});

afterAll(async () => {
  await prismaOf(proxiedPrisma)?.$disconnect();
  await proxiedConnection?.close().catch(() => undefined);
  await temporalProxy?.stop();
  await databaseProxy?.stop();
  await harness?.teardown();
});

const customersWithEmail = (email: string) => harness.prisma.customer.findMany({ where: { email } });

async function workflowExists(workflowId: string): Promise<boolean> {
  try {
    await harness.env.client.workflow.getHandle(workflowId).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

function expectServiceUnavailable(response: request.Response, startedAt: number): void {
  expect(response.status).toBe(503);
  expect(response.body).toEqual({ error: { code: 'service_unavailable', message: expect.any(String) } });
  expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
  // Bounded by the deadline (a hang would last until the test's own timeout); the margin absorbs a loaded machine.
  expect(Date.now() - startedAt).toBeLessThan(REQUEST_TIMEOUT_MS * 2 + 2_000);
}

describe('Temporal outage', () => {
  it('answers 503 to a create within the deadline, leaves nothing behind, and succeeds once Temporal is back', async () => {
    const body = individualCustomer({ email: 'temporal-outage@example.com' });
    temporalProxy.cut();
    const startedAt = Date.now();
    const refused = await api.post('/v1/customers').send(body);
    expectServiceUnavailable(refused, startedAt);
    expect(await customersWithEmail('temporal-outage@example.com')).toEqual([]);
    expect(await harness.prisma.workflowStart.count({ where: { partnerId: partner.partnerId, startedAt: null } })).toBe(
      0,
    );

    temporalProxy.restore();
    let created: request.Response | undefined;
    for (let attempt = 0; attempt < 20 && created?.status !== 201; attempt += 1) {
      created = await api.post('/v1/customers').send(body);
      if (created.status !== 201) await new Promise((resolve) => setTimeout(resolve, 250)); // client reconnect backoff
    }
    expect(created?.status).toBe(201);
    expect(await workflowExists(workflowIds.customerVerification(created?.body.id))).toBe(true);
  });

  it('answers /health/ready 503 while Temporal is down and 200 when it is back', async () => {
    expect((await api.get('/health/live')).status).toBe(200);
    temporalProxy.cut();
    const down = await api.get('/health/ready');
    expect(down.status).toBe(503);
    expect(down.body.error.message).toContain('temporal unavailable');
    temporalProxy.restore();
    let ready: request.Response | undefined;
    for (let attempt = 0; attempt < 20 && ready?.status !== 200; attempt += 1) {
      ready = await api.get('/health/ready');
      if (ready.status !== 200) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(ready?.body).toEqual({ status: 'ok', checks: { database: 'ok', migrations: 'ok', temporal: 'ok' } });
  });
});

describe('a workflow with no worker to answer', () => {
  it('answers an update from HTTP 503 within the deadline, and frees the Idempotency-Key for a retry', async () => {
    // Same engine, but a task queue no worker polls: the customer's workflow exists and nobody runs it.
    const unserved = {
      ...harness.services,
      config: {
        ...harness.config,
        requestTimeoutMs: REQUEST_TIMEOUT_MS,
        temporal: { ...harness.config.temporal, taskQueue: `nobody-${partner.partnerId}`, callTimeoutMs: 1_500 },
      },
    };
    const unservedApi = request.agent(harness.createApp(unserved).callback()).set('Authorization', partner.apiKey);
    const created = await unservedApi.post('/v1/customers').send(individualCustomer());
    expect(created.status).toBe(201);
    await uploadIndividualDocuments(unservedApi as never, created.body.id);
    for (const attempt of [1, 2]) {
      const startedAt = Date.now();
      const check = await unservedApi
        .post(`/v1/customers/${created.body.id}/check`)
        .set('Idempotency-Key', 'no-worker-1');
      expectServiceUnavailable(check, startedAt);
      expect(attempt).toBeLessThan(3); // the second attempt is served again, not 409: the key was freed
    }
    expect((await harness.prisma.customer.findUniqueOrThrow({ where: { id: created.body.id } })).status).toBe(
      'pending',
    );
  });
});

describe('database outage', () => {
  it('answers 503 within the deadline while PostgreSQL is unreachable, then recovers without a restart', async () => {
    databaseProxy.cut();
    const startedAt = Date.now();
    expectServiceUnavailable(await api.get('/v1/customers'), startedAt);
    const createdAt = Date.now();
    expectServiceUnavailable(await api.post('/v1/customers').send(individualCustomer()), createdAt);
    const ready = await api.get('/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.error.message).toContain('database unavailable');

    databaseProxy.restore();
    const after = await api.get('/v1/customers');
    expect(after.status).toBe(200);
  });
});

describe('failures injected around the commit', () => {
  it('a commit that fails leaves no row, no start intent and no workflow', async () => {
    const intents = () => harness.prisma.workflowStart.count({ where: { partnerId: partner.partnerId } });
    const before = await intents();
    writePathFaults.beforeCommit = async () => {
      throw new Error('injected: commit fails');
    };
    const response = await api.post('/v1/customers').send(individualCustomer({ email: 'commit-fails@example.com' }));
    expect(response.status).toBe(500);
    expect(await customersWithEmail('commit-fails@example.com')).toEqual([]);
    expect(await intents()).toBe(before);
  });

  it('a process dying between the commit and the start: the relay starts the workflow, the customer proceeds', async () => {
    writePathFaults.afterCommit = async () => {
      throw new Error('injected: process dies after the commit');
    };
    const response = await api
      .post('/v1/customers')
      .send(individualCustomer({ email: 'dies-after-commit@example.com' }));
    expect(response.status).toBe(500);
    const [customer] = await customersWithEmail('dies-after-commit@example.com');
    expect(customer).toBeDefined();
    const workflowId = workflowIds.customerVerification(customer?.id as string);
    expect(await workflowExists(workflowId)).toBe(false);

    expect(await harness.startRelay.sweep()).toBeGreaterThanOrEqual(1);
    expect(await workflowExists(workflowId)).toBe(true);
    expect((await harness.prisma.workflowStart.findUniqueOrThrow({ where: { workflowId } })).startedAt).not.toBeNull();
    // A second sweep (or a second worker) does not start it again.
    expect(await harness.startRelay.sweep()).toBe(0);
  });

  it('Temporal failing right after the commit: 201 now, the workflow starts when the relay sweeps', async () => {
    writePathFaults.afterCommit = async () => temporalProxy.cut();
    const response = await api.post('/v1/customers').send(individualCustomer({ email: 'start-fails@example.com' }));
    expect(response.status).toBe(201);
    const workflowId = workflowIds.customerVerification(response.body.id);
    expect((await harness.prisma.workflowStart.findUniqueOrThrow({ where: { workflowId } })).startedAt).toBeNull();
    expect(await workflowExists(workflowId)).toBe(false);
    temporalProxy.restore();
    await harness.startRelay.sweep();
    expect(await workflowExists(workflowId)).toBe(true);
  });

  it('a request that needs a workflow not started yet starts it from its intent instead of failing', async () => {
    writePathFaults.afterCommit = async () => temporalProxy.cut();
    const created = await api.post('/v1/customers').send(individualCustomer({ email: 'needed-early@example.com' }));
    expect(created.status).toBe(201);
    writePathFaults.afterCommit = undefined;
    temporalProxy.restore();
    const workflowId = workflowIds.customerVerification(created.body.id);
    expect(await workflowExists(workflowId)).toBe(false);
    await uploadIndividualDocuments(partner.api, created.body.id);

    // The check is an update of the verification workflow: before the relay sweeps, the request starts it.
    let check = await api.post(`/v1/customers/${created.body.id}/check`);
    let retried = false;
    for (let attempt = 0; attempt < 20 && check.status === 503; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 250)); // client reconnect backoff
      retried = true;
      check = await api.post(`/v1/customers/${created.body.id}/check`);
    }
    // A 503 may come after the update was delivered (the API's deadline passed on a loaded machine): the retry then
    // finds the review started, as a partner retrying would.
    const startedByAnEarlierTry = retried && check.body?.error?.code === 'customer_verification_in_progress';
    expect({ status: check.status, body: startedByAnEarlierTry ? null : check.body }).toEqual({
      status: startedByAnEarlierTry ? 422 : 204,
      body: startedByAnEarlierTry ? null : {},
    });
    expect((await api.get(`/v1/customers/${created.body.id}`)).body.status).toBe('under_review');
    expect(await workflowExists(workflowId)).toBe(true);
    expect((await harness.prisma.workflowStart.findUniqueOrThrow({ where: { workflowId } })).startedAt).not.toBeNull();
  });
});

describe('creates at once', () => {
  it('every workflow started by concurrent creates is marked started (marks share UPDATEs), so the relay starts none again', async () => {
    const quoteBody = {
      sender: { currency: 'BRL', payment_rail: 'pix', amount: '100.00' },
      stablecoin: { currency: 'USDC', payment_rail: 'solana' },
      receiver: { currency: 'MXN', payment_rail: 'spei' },
    };
    const responses = await Promise.all(
      Array.from({ length: 12 }, () => partner.api.post('/v1/quote/fiat-to-fiat').send(quoteBody)),
    );
    expect(responses.map((response) => response.status)).toEqual(responses.map(() => 201));
    const workflowIdsOfQuotes = responses.map((response) => workflowIds.quote(response.body.id));
    const intents = await harness.prisma.workflowStart.findMany({ where: { workflowId: { in: workflowIdsOfQuotes } } });
    expect(intents).toHaveLength(12);
    expect(intents.filter((intent) => intent.startedAt === null)).toEqual([]);
    for (const workflowId of workflowIdsOfQuotes) expect(await workflowExists(workflowId)).toBe(true);
    expect(await harness.startRelay.sweep({ minAgeMs: 0 })).toBe(0);
  });
});

describe('idempotency across a crash', () => {
  it('a crash after the commit cannot create a second resource: the retry replays the stored one', async () => {
    const body = individualCustomer({ email: 'idem-crash@example.com' });
    writePathFaults.afterCommit = async () => {
      throw new Error('injected: process dies after the commit');
    };
    const first = await api.post('/v1/customers').set('Idempotency-Key', 'crash-window-1').send(body);
    expect(first.status).toBe(500);
    writePathFaults.afterCommit = undefined;
    const retried = await api.post('/v1/customers').set('Idempotency-Key', 'crash-window-1').send(body);
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    const stored = await customersWithEmail('idem-crash@example.com');
    expect(stored.map((row) => row.id)).toEqual([retried.body.id]);
  });

  it('a quote (written in a SQL transaction, { sql: true }) crashing after its commit is replayed, not made twice', async () => {
    const body = {
      sender: { currency: 'BRL', payment_rail: 'pix', amount: '250.00' },
      stablecoin: { currency: 'USDC', payment_rail: 'solana' },
      receiver: { currency: 'MXN', payment_rail: 'spei' },
    };
    const quotesOfPartner = () => harness.prisma.quote.count({ where: { partnerId: partner.partnerId } });
    const before = await quotesOfPartner();
    writePathFaults.afterCommit = async () => {
      throw new Error('injected: process dies after the commit');
    };
    const first = await api.post('/v1/quote/fiat-to-fiat').set('Idempotency-Key', 'crash-window-quote').send(body);
    expect(first.status).toBe(500);
    writePathFaults.afterCommit = undefined;
    const retried = await api.post('/v1/quote/fiat-to-fiat').set('Idempotency-Key', 'crash-window-quote').send(body);
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    expect(await quotesOfPartner()).toBe(before + 1);
    expect(await harness.prisma.quote.findUnique({ where: { id: retried.body.id } })).not.toBeNull();
  });

  it('a write without a workflow (external account) crashing after its commit is replayed, not refused as a duplicate', async () => {
    // Found by the chaos run (API killed during creates): only writes that started a workflow stored their response
    // in their transaction, so the retry of an external account answered 422 external_account_already_exists.
    const customer = await api.post('/v1/customers').send(individualCustomer({ email: 'account-owner@example.com' }));
    const body = {
      customer_id: customer.body.id,
      account_name: 'Crash account',
      payment_rail: 'pix',
      pix: { key: 'crash-window@example.com' },
    };
    writePathFaults.afterCommit = async () => {
      throw new Error('injected: process dies after the commit');
    };
    const first = await api.post('/v1/external-accounts').set('Idempotency-Key', 'crash-window-2').send(body);
    expect(first.status).toBe(500);
    writePathFaults.afterCommit = undefined;
    const retried = await api.post('/v1/external-accounts').set('Idempotency-Key', 'crash-window-2').send(body);
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    const stored = await harness.prisma.externalAccount.findMany({ where: { customerId: customer.body.id } });
    expect(stored.map((row) => row.id)).toEqual([retried.body.id]);
  });

  it('a request whose claim was taken over cannot commit its write', async () => {
    const body = individualCustomer({ email: 'idem-takeover@example.com' });
    writePathFaults.beforeCommit = async () => {
      // Another request took the claim over while this one was running (as after a long stall).
      await harness.prisma.idempotencyKey.updateMany({
        where: { partnerId: partner.partnerId, key: 'takeover-1' },
        data: { ownerToken: '00000000-0000-4000-8000-000000000001' },
      });
    };
    const stalled = await api.post('/v1/customers').set('Idempotency-Key', 'takeover-1').send(body);
    expect(stalled.status).toBe(409);
    expect(stalled.body.error.code).toBe('idempotency_key_in_use');
    expect(await customersWithEmail('idem-takeover@example.com')).toEqual([]);
  });
});

describe('bad input that used to reach the database', () => {
  it('refuses a NUL character in any string field with 400 naming the field', async () => {
    const response = await harness.http
      .post('/v1/customers')
      .set('Authorization', partner.apiKey)
      .send(
        individualCustomer({
          first_name: 'Ann\u0000',
          address: { ...(individualCustomer().address as object), city: 'X\u0000' },
        }),
      );
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: 'invalid_param', param: 'first_name' }),
        expect.objectContaining({ code: 'invalid_param', param: 'address.city' }),
      ]),
    );
  });

  it.each([
    ['end_date', '275760-09-13'],
    ['start_date', '+275760-09-13T00:00:00.000Z'],
  ])('refuses %s=%s with 400', async (param, value) => {
    const response = await partner.api.get('/v1/customers').query({ [param]: value });
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([expect.objectContaining({ code: 'invalid_param', param })]);
  });

  it.each([
    ['start_date', '0000-01-01'],
    ['start_date', '1969-12-31'],
    ['end_date', '9999-12-31T23:59:59-12:00'],
  ])('takes %s=%s as the earliest or latest instant a resource can have', async (param, value) => {
    // Well-formed dates (the description's rule) outside 1970-9999 select what the bound itself selects.
    const response = await partner.api.get('/v1/customers').query({ [param]: value });
    expect(response.status).toBe(200);
  });

  it('refuses a cursor carrying an extreme date with 422 invalid_cursor', async () => {
    const cursor = Buffer.from(
      JSON.stringify(['+275760-09-13T00:00:00.000Z', '00000000-0000-4000-8000-000000000000']),
    ).toString('base64url');
    const response = await partner.api.get('/v1/customers').query({ after: cursor });
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('invalid_cursor');
  });
});
