// API conventions shared by every endpoint: authentication, scoping, error shapes, pagination,
// the OpenAPI description, and time skipping of workflow timers.
import { z } from 'zod';
import { ApplicationFailure } from '@temporalio/common';
import { missingRowsAreFinal } from '../activities';
import { isMissingRow } from '../src/persistence/database';
import { sqlOf } from '../src/persistence/internal/database';
import { Prisma } from '../src/persistence/generated/prisma/client';
import { RESOURCE_NOT_FOUND } from '../src/temporal/failure-types';
import { allRoutes } from '../src/routes';
import http from 'node:http';
import net from 'node:net';
import { answerUnparsableRequests } from '../src/http/app';
import { defineRoute } from '../src/http/route';
import request from 'supertest';
import { Harness, startHarness, TestPartner } from './support/harness';
import { createCustomer, individualCustomer, uploadIndividualDocuments } from './support/fixtures';
import { workflowIds } from '../src/temporal/workflow-ids';

const SIX_HOURS = 6 * 3600;
let harness: Harness;
let partner: TestPartner;
/** Apps with a test's own failing routes serve no description (none of these tests reads it; building one costs a second). */
const undescribed = { openApiDocument: {} };

beforeAll(async () => {
  harness = await startHarness({ SANDBOX_VERIFICATION_DELAY_SECONDS: String(SIX_HOURS) });
  partner = await harness.createPartner();
});
afterAll(() => harness?.teardown());

describe('authentication', () => {
  it('answers 401 unauthorized without a key', async () => {
    const response = await harness.http.get('/v1/customers');
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
  });

  it('answers 401 for an unknown key', async () => {
    const response = await harness.http.get('/v1/customers').set('Authorization', 'sk_sandbox_not-a-real-key');
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('unauthorized');
  });

  it.each([
    ['Authorization', (key: string) => key],
    ['Authorization', (key: string) => `Bearer ${key}`],
    ['api-key', (key: string) => key],
  ])('accepts the key in %s', async (header, format) => {
    const response = await harness.http.get('/v1/customers').set(header, format(partner.apiKey));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ items: [], cursor: { after: null, before: null, limit: 10, page_count: 0 } });
  });

  it('refuses two different keys in Authorization and api-key', async () => {
    const other = await harness.createPartner('Other');
    const response = await harness.http
      .get('/v1/customers')
      .set('Authorization', partner.apiKey)
      .set('api-key', other.apiKey);
    expect(response.status).toBe(401);
  });

  it('answers 401 for a revoked key', async () => {
    const revoked = await harness.createPartner('Revoked');
    await harness.prisma.apiKey.updateMany({
      where: { partnerId: revoked.partnerId },
      data: { revokedAt: new Date() },
    });
    expect((await revoked.api.get('/v1/customers')).status).toBe(401);
  });

  it('stores only a hash of the key', async () => {
    const keys = await harness.prisma.apiKey.findMany({ where: { partnerId: partner.partnerId } });
    expect(keys).toHaveLength(1);
    expect(keys[0]!.keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(keys)).not.toContain(partner.apiKey);
  });
});

describe('error shapes', () => {
  it('answers unknown routes with 404 not_found', async () => {
    const response = await partner.api.get('/v1/nothing-here');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: { code: 'not_found', message: 'No route GET /v1/nothing-here.' } });
  });

  it('answers a wrong method with 405 method_not_allowed and Allow', async () => {
    const response = await partner.api.delete('/v1/customers');
    expect(response.status).toBe(405);
    expect(response.body.error.code).toBe('method_not_allowed');
    expect(response.headers.allow).toContain('GET');
  });

  it('answers malformed JSON with 400 invalid_json and creates nothing', async () => {
    const before = await harness.prisma.customer.count({ where: { partnerId: partner.partnerId } });
    const response = await partner.api
      .post('/v1/customers')
      .set('Content-Type', 'application/json')
      .send('{"type": "individual",');
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: { code: 'invalid_json', message: expect.any(String) } });
    expect(await harness.prisma.customer.count({ where: { partnerId: partner.partnerId } })).toBe(before);
  });

  it('answers a non-JSON content type with 415 unsupported_media_type', async () => {
    const response = await partner.api.post('/v1/customers').set('Content-Type', 'text/plain').send('type=individual');
    expect(response.status).toBe(415);
    expect(response.body.error.code).toBe('unsupported_media_type');
  });

  it('answers an oversized body with 413 payload_too_large', async () => {
    const huge = JSON.stringify(individualCustomer({ first_name: 'x'.repeat(1024 * 1024 + 10) }));
    const response = await partner.api.post('/v1/customers').set('Content-Type', 'application/json').send(huge);
    expect(response.status).toBe(413);
    expect(response.body.error.code).toBe('payload_too_large');
  });

  it.each([
    [
      'broken framing',
      'POST /v1/customers HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}',
      400,
      'malformed_request',
    ],
    [
      'a header line without colon',
      'GET /v1/customers HTTP/1.1\r\nHost: x\r\nAuthorization sk\r\n\r\n',
      400,
      'malformed_request',
    ],
    [
      'headers over 16 KB',
      `GET /v1/customers HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'request_headers_too_large',
    ],
  ])('answers a request node cannot parse (%s) in the error shape', async (_name, raw, status, code) => {
    // Found by the chaos fuzzer: node answered these with a bare `400 Bad Request` and no body.
    const server = http.createServer(harness.createApp(harness.services).callback());
    answerUnparsableRequests(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1', () => socket.end(raw));
        const chunks: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
        socket.on('error', reject);
      });
      expect(answer.startsWith(`HTTP/1.1 ${status} `)).toBe(true);
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
        error: { code, message: expect.any(String) },
      });
    } finally {
      server.close();
    }
  });

  it('reports every missing field of an empty body as missing_param', async () => {
    const response = await partner.api.post('/v1/customers');
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('validation_error');
    expect(response.body.error.details).toEqual([{ code: 'missing_param', param: 'type', message: 'is required' }]);
  });

  it('answers unexpected faults with 500 internal_error, a request id and no internals', async () => {
    const failing = defineRoute({
      method: 'get',
      path: '/v1/failing',
      operationId: 'failing',
      tag: 'Test',
      summary: 'Always fails',
      auth: 'none',
      response: { status: 200, description: 'never', schema: z.object({}) },
      async handler() {
        throw new Error('database password is hunter2');
      },
    });
    const app = harness.createApp(harness.services, [...allRoutes, failing], undescribed);
    const response = await request(app.callback()).get('/v1/failing');
    expect(response.status).toBe(500);
    expect(response.body.error.code).toBe('internal_error');
    expect(JSON.stringify(response.body)).not.toContain('hunter2');
    expect(response.body.error.message).toContain(response.headers['x-request-id']);
  });

  it('answers a connection PostgreSQL closed under a query (the driver adapter’s ConnectionClosed) with 503, not 500', async () => {
    // The error the API logged as a 500 in the outage test: Prisma's P2010 carrying the adapter's ConnectionClosed.
    const closed = new Prisma.PrismaClientKnownRequestError(
      'Raw query failed. Code: `N/A`. Message: `Server has closed the connection.`',
      {
        code: 'P2010',
        clientVersion: Prisma.prismaVersion.client,
        meta: { driverAdapterError: { name: 'DriverAdapterError', cause: { kind: 'ConnectionClosed' } } },
      },
    );
    const duplicate = new Prisma.PrismaClientKnownRequestError('Raw query failed.', {
      code: 'P2010',
      clientVersion: Prisma.prismaVersion.client,
      meta: { driverAdapterError: { name: 'DriverAdapterError', cause: { kind: 'UniqueConstraintViolation' } } },
    });
    const failingWith = (error: Error, path: string) =>
      defineRoute({
        method: 'get',
        path,
        operationId: path,
        tag: 'Test',
        summary: 'Fails with a database error',
        auth: 'none',
        response: { status: 200, description: 'never', schema: z.object({}) },
        async handler() {
          throw error;
        },
      });
    const app = harness.createApp(
      harness.services,
      [...allRoutes, failingWith(closed, '/v1/closed'), failingWith(duplicate, '/v1/duplicate')],
      undescribed,
    );
    const unavailable = await request(app.callback()).get('/v1/closed');
    expect(unavailable.status).toBe(503);
    expect(unavailable.body.error.code).toBe('service_unavailable');
    expect(Number(unavailable.headers['retry-after'])).toBeGreaterThan(0);
    // A statement's own failure is still ours, not an outage.
    expect((await request(app.callback()).get('/v1/duplicate')).status).toBe(500);
  });

  it('returns the caller’s X-Request-Id, or a new one', async () => {
    const echoed = await partner.api.get('/v1/customers').set('X-Request-Id', 'req-123');
    expect(echoed.headers['x-request-id']).toBe('req-123');
    const generated = await partner.api.get('/v1/customers');
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('scoping', () => {
  it("answers another partner's customer exactly like one that does not exist", async () => {
    const owner = await harness.createPartner('Owner');
    const intruder = await harness.createPartner('Intruder');
    const customer = await createCustomer(owner.api);

    const foreign = await intruder.api.get(`/v1/customers/${customer.id}`);
    const missing = await intruder.api.get('/v1/customers/00000000-0000-4000-8000-000000000000');
    const malformed = await intruder.api.get('/v1/customers/not-a-uuid');
    for (const response of [foreign, missing, malformed]) {
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    const list = await intruder.api.get('/v1/customers');
    expect(list.body.items).toEqual([]);
    expect((await owner.api.get(`/v1/customers/${customer.id}`)).status).toBe(200);
  });
});

describe('pagination', () => {
  let lister: TestPartner;
  let ids: string[];

  beforeAll(async () => {
    lister = await harness.createPartner('Lister');
    ids = [];
    for (let i = 0; i < 5; i += 1)
      ids.push((await createCustomer(lister.api, individualCustomer({ first_name: `C${i}` }))).id);
    // Spread creation dates over known days for the date filters.
    const days = ['2026-01-10', '2026-01-11', '2026-01-12', '2026-01-13', '2026-01-14'];
    for (const [index, id] of ids.entries()) {
      await harness.prisma.customer.update({
        where: { id },
        data: { createdAt: new Date(`${days[index]}T12:00:00Z`) },
      });
    }
  });

  it('walks forward and back through pages, newest first', async () => {
    const newestFirst = [...ids].reverse();
    const first = await lister.api.get('/v1/customers?limit=2');
    expect(first.body.items.map((c: { id: string }) => c.id)).toEqual(newestFirst.slice(0, 2));
    expect(first.body.cursor).toMatchObject({ limit: 2, page_count: 2, before: null });
    expect(first.body.cursor.after).toEqual(expect.any(String));

    const second = await lister.api.get(`/v1/customers?limit=2&after=${first.body.cursor.after}`);
    expect(second.body.items.map((c: { id: string }) => c.id)).toEqual(newestFirst.slice(2, 4));
    const third = await lister.api.get(`/v1/customers?limit=2&after=${second.body.cursor.after}`);
    expect(third.body.items.map((c: { id: string }) => c.id)).toEqual(newestFirst.slice(4));
    expect(third.body.cursor).toMatchObject({ after: null, page_count: 1 });

    const back = await lister.api.get(`/v1/customers?limit=2&before=${third.body.cursor.before}`);
    expect(back.body.items.map((c: { id: string }) => c.id)).toEqual(newestFirst.slice(2, 4));
    const backToStart = await lister.api.get(`/v1/customers?limit=2&before=${back.body.cursor.before}`);
    expect(backToStart.body.items.map((c: { id: string }) => c.id)).toEqual(newestFirst.slice(0, 2));
    expect(backToStart.body.cursor.before).toBeNull();
  });

  it('filters by start_date and end_date, inclusive whole days', async () => {
    const response = await lister.api.get('/v1/customers?start_date=2026-01-11&end_date=2026-01-13');
    expect(response.body.items.map((c: { id: string }) => c.id)).toEqual([ids[3], ids[2], ids[1]]);
    const instant = await lister.api.get('/v1/customers?start_date=2026-01-14T12:00:00Z');
    expect(instant.body.items.map((c: { id: string }) => c.id)).toEqual([ids[4]]);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['after=not%20a%20cursor', 'after'],
    ['after=', 'after'],
    ['start_date=', 'start_date'],
    ['start_date=2026-02-30', 'start_date'],
    ['unknown=1', 'unknown'],
  ])('rejects %s as invalid_param %s', async (query, param) => {
    const response = await lister.api.get(`/v1/customers?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('validation_error');
    expect(response.body.error.details).toEqual([expect.objectContaining({ code: 'invalid_param', param })]);
  });

  // Well-formed values whose trouble is not their shape: a cursor this API did not issue, filters that contradict.
  it.each([
    ['after=garbage', 'invalid_cursor', 'after is not a cursor'],
    ['start_date=2026-01-13&end_date=2026-01-11', 'conflicting_list_filters', 'end_date must not be before start_date'],
    ['after=AAAA&before=AAAA', 'conflicting_list_filters', 'before cannot be combined with after'],
  ])('answers %s with 422 %s', async (query, code, message) => {
    const response = await lister.api.get(`/v1/customers?${query}`);
    expect(response.status).toBe(422);
    expect(response.body.error).toEqual({ code, message: expect.stringContaining(message) });
  });
});

describe('OpenAPI description', () => {
  it('checks every response of the tests against the document, and catches a mismatch', async () => {
    const before = harness.conformance.checked;
    await partner.api.get('/v1/customers');
    expect(harness.conformance.checked).toBe(before + 1);

    const fake = (route: string, status: number, body: unknown) => ({ state: { route }, status, body }) as never;
    harness.conformance.check(fake('GET /v1/customers/{id}', 200, { id: 'not-a-customer' }));
    harness.conformance.check(
      fake('GET /v1/customers/{id}', 422, { error: { code: 'customer_rejected', message: 'x' } }),
    );
    harness.conformance.check(fake('GET /v1/customers/{id}', 404, { error: { code: 'quote_expired', message: 'x' } }));
    const caught = harness.conformance.violations.splice(-3);
    expect(caught.map((violation) => violation.status)).toEqual([200, 422, 404]);
    expect(caught[1]!.problem).toBe('status not documented for this operation');
  });

  it('is served at /openapi.json without a key', async () => {
    const response = await harness.http.get('/openapi.json');
    expect(response.status).toBe(200);
    expect(response.body.openapi).toBe('3.1.0');
    expect(Object.keys(response.body.paths)).toContain('/v1/customers');
  });
});

describe('time skipping', () => {
  it('runs a six-hour workflow timer at least a thousand times faster than the wall clock', async () => {
    const customer = await createCustomer(partner.api);
    await uploadIndividualDocuments(partner.api, customer.id);
    expect((await partner.api.post(`/v1/customers/${customer.id}/check`)).status).toBe(204);

    const handle = harness.env.client.workflow.getHandle(workflowIds.customerVerification(customer.id));
    const startedAt = Date.now();
    const workflowStart = (await handle.describe()).startTime;
    const finalStatus = await handle.result();
    const wallMs = Date.now() - startedAt;
    const workflowEnd = (await handle.describe()).closeTime as Date;

    expect(finalStatus).toBe('approved');
    const workflowMs = workflowEnd.getTime() - workflowStart.getTime();
    expect(workflowMs).toBeGreaterThanOrEqual(SIX_HOURS * 1000);
    // A ratio, not a wall-time bound: a loaded machine is slower, but never by three orders of magnitude.
    expect(workflowMs / Math.max(wallMs, 1)).toBeGreaterThan(1000);
    expect((await partner.api.get(`/v1/customers/${customer.id}`)).body.status).toBe('approved');
  });
});

describe('a row that does not exist', () => {
  it('is one "not found" whichever query tool asked (isMissingRow), and an activity fails for good on it', async () => {
    const missing = '00000000-0000-4000-8000-00000000dead';
    const fromKysely = await sqlOf(harness.prisma)
      .selectFrom('transactions')
      .select('id')
      .where('id', '=', missing)
      .executeTakeFirstOrThrow()
      .catch((error: unknown) => error);
    const fromPrisma = await harness.prisma.transaction
      .update({ where: { id: missing }, data: { updatedAt: new Date() } })
      .catch((error: unknown) => error);
    expect([isMissingRow(fromKysely), isMissingRow(fromPrisma), isMissingRow(new Error('other'))]).toEqual([
      true,
      true,
      false,
    ]);
    // The worker's activities (wrapped as createActivities wraps them) turn it into a non-retryable ResourceNotFound.
    const { readMissing } = missingRowsAreFinal({
      readMissing: () =>
        sqlOf(harness.prisma)
          .selectFrom('transactions')
          .select('id')
          .where('id', '=', missing)
          .executeTakeFirstOrThrow(),
    });
    const failure = await readMissing().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: RESOURCE_NOT_FOUND, nonRetryable: true });
  });
});
