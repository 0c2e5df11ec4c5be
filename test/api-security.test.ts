// The API's front door: keys bound to their environment and managed with `npm run partner:keys`, rate limits shared
// by every API process (PostgreSQL), security headers on every answer, and the runtime the tests run on.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { partnerKeysCommand } from '../scripts/partner-keys';
import type { Pool } from 'pg';
import { createPrismaClient, sqlPoolOf } from '../src/persistence/internal/database';
import { clientAddress } from '../src/http/rate-limit';
import type { ApiServices } from '../src/app-services';
import { createCustomer, individualCustomer } from './support/fixtures';
import { Harness, productionTestSecrets, startHarness, TestPartner } from './support/harness';
import { loadConfig, SANDBOX_SECRETS_KEY } from '../src/config';
import { randomBytes } from 'node:crypto';

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness();
});
afterAll(async () => {
  await harness?.teardown();
});

const projectRoot = path.resolve(__dirname, '..');

function appWith(services: Omit<Partial<ApiServices>, 'config'> & { config?: Partial<ApiServices['config']> }) {
  return harness
    .createApp({ ...harness.services, ...services, config: { ...harness.config, ...services.config } })
    .callback();
}

describe('API keys', () => {
  async function keysCommand(...argv: string[]) {
    return (await partnerKeysCommand(argv, harness.prisma, 'sandbox')).map((line) => JSON.parse(line));
  }

  it('are created, listed (prefix, created, last used; never the key) and revoked with partner:keys, effective on the next request', async () => {
    const partner = await harness.createPartner();
    const [created] = await keysCommand('create', '--partner', partner.partnerId, '--label', 'reconciliation job');
    expect(created).toEqual({
      key_id: expect.any(String),
      partner_id: partner.partnerId,
      partner_name: 'Test partner',
      prefix: created.api_key.slice(0, 17),
      label: 'reconciliation job',
      created_at: expect.any(String),
      last_used_at: null,
      revoked_at: null,
      api_key: expect.stringMatching(/^sk_sandbox_[A-Za-z0-9_-]{43}$/),
    });
    const api = request(appWith({}));
    expect((await api.get('/v1/customers').set('Authorization', created.api_key)).status).toBe(200);

    const listed = await keysCommand('list', '--partner', partner.partnerId);
    expect(listed.map((key) => key.label)).toEqual([null, 'reconciliation job']); // the harness's key, then this one
    const mine = listed.find((key) => key.key_id === created.key_id);
    expect(mine.last_used_at).not.toBeNull();
    expect(Object.keys(mine)).not.toContain('api_key');
    expect(JSON.stringify(listed)).not.toContain(created.api_key);
    expect(JSON.stringify(listed)).not.toContain(partner.apiKey);

    const [revoked] = await keysCommand('revoke', '--key', created.key_id);
    expect(revoked.revoked_at).not.toBeNull();
    const refused = await api.get('/v1/customers').set('Authorization', created.api_key);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('unauthorized');
    expect((await partner.api.get('/v1/customers')).status).toBe(200); // the partner's other key still works
    await expect(keysCommand('revoke', '--key', 'not-a-key')).rejects.toThrow('no API key not-a-key');
    await expect(keysCommand('create')).rejects.toThrow('usage: npm run partner:keys');
  });

  it('npm run partner:keys runs the command on the database (here: list)', () => {
    const run = spawnSync(
      process.execPath,
      [path.join(projectRoot, 'scripts', 'with-node.cjs'), 'scripts/partner-keys.ts', 'list'],
      {
        cwd: projectRoot,
        env: { ...process.env, DATABASE_URL: harness.config.databaseUrl },
        encoding: 'utf8',
      },
    );
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: expect.any(String) });
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.length).toBeGreaterThan(0);
    expect(run.stdout).not.toMatch(/sk_(sandbox|live)_[A-Za-z0-9_-]{43}/);
  });

  it('work only in their environment: a live key in the sandbox and a sandbox key in production answer 401', async () => {
    const partner = await harness.createPartner();
    const [live] = (
      await partnerKeysCommand(['create', '--partner', partner.partnerId], harness.prisma, 'production')
    ).map((line) => JSON.parse(line));
    expect(live.api_key).toMatch(/^sk_live_/);
    const sandbox = request(appWith({}));
    const production = request(appWith({ config: { appEnv: 'production' } }));

    const liveInSandbox = await sandbox.get('/v1/customers').set('Authorization', live.api_key);
    expect(liveInSandbox.status).toBe(401);
    expect(liveInSandbox.body.error).toEqual({
      code: 'unauthorized',
      message: 'This is the sandbox API: use a sandbox key (sk_sandbox_...).',
    });
    const sandboxInProduction = await production.get('/v1/customers').set('Authorization', partner.apiKey);
    expect(sandboxInProduction.status).toBe(401);
    expect(sandboxInProduction.body.error.message).toBe('This is the production API: use a live key (sk_live_...).');
    expect((await production.get('/v1/customers').set('api-key', live.api_key)).status).toBe(200);
    expect((await sandbox.get('/v1/customers').set('api-key', partner.apiKey)).status).toBe(200);
  });
});

/** Limits for one app (one proxy hop trusted), out of the way unless a test lowers them. */
const testLimits = {
  partnerRequests: 100_000,
  publicRequests: 100_000,
  windowSeconds: 60,
  trustProxyHops: 1,
  authFailures: 100_000,
  authFailureWindowSeconds: 60,
};
/** Headers of a request from `client` through our one trusted proxy (rightmost: the proxy's view). */
const from = (client: string) => ({ 'X-Forwarded-For': `203.0.113.9, ${client}` });

/** A refusal over a limit of `quota` per 60 s: Retry-After in whole seconds within the window, and the draft headers. */
function expectRetryAfterAndHeaders(refused: request.Response, policy: string, quota: number): void {
  const retryAfter = Number(refused.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(refused.headers['ratelimit-policy']).toBe(`"${policy}";q=${quota};w=60`);
  expect(refused.headers.ratelimit).toBe(`"${policy}";r=0;t=${retryAfter}`);
}

describe('rate limits', () => {
  const limits = { ...testLimits, partnerRequests: 3, publicRequests: 2 };

  it('answer 429 rate_limited after the partner limit, with Retry-After and the RateLimit headers', async () => {
    const partner = await harness.createPartner();
    const other = await harness.createPartner();
    const api = request(appWith({ config: { rateLimits: limits } }));
    const remaining: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      const response = await api.get('/v1/customers').set('Authorization', partner.apiKey);
      expect(response.status).toBe(200);
      expect(response.headers['ratelimit-policy']).toBe('"partner";q=3;w=60');
      remaining.push(response.headers.ratelimit as string);
    }
    expect(remaining.map((value) => /r=(\d+)/.exec(value)?.[1])).toEqual(['2', '1', '0']);

    const refused = await api.post('/v1/customers').set('Authorization', partner.apiKey).send(individualCustomer());
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: { code: 'rate_limited', message: expect.stringContaining('at most 3 per 60 s') },
    });
    expectRetryAfterAndHeaders(refused, 'partner', 3);
    // Refused before anything was done, and only this partner is limited.
    expect(await harness.prisma.customer.count({ where: { partnerId: partner.partnerId } })).toBe(0);
    expect((await api.get('/v1/customers').set('Authorization', other.apiKey)).status).toBe(200);
  });

  it('hold across API processes: two apps with their own database pools share the count', async () => {
    const partner = await harness.createPartner();
    const secondPool = createPrismaClient(harness.config.databaseUrl, { role: 'test', poolSize: 2 });
    try {
      const first = request(appWith({ config: { rateLimits: limits } }));
      const second = request(appWith({ prisma: secondPool, config: { rateLimits: limits } }));
      const statuses = [];
      for (const api of [first, second, first, second]) {
        statuses.push((await api.get('/v1/customers').set('Authorization', partner.apiKey)).status);
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
      const row = await harness.prisma.rateLimit.findUniqueOrThrow({ where: { key: `partner:${partner.partnerId}` } });
      expect(row.points).toBe(4);
    } finally {
      await secondPool.$disconnect();
    }
  });

  it('limit the hosted verification pages per client address, before the link is even looked up', async () => {
    const partner: TestPartner = await harness.createPartner();
    const customer = await createCustomer(partner.api, individualCustomer());
    const page = new URL(customer.verification.verification_link as string).pathname;
    const api = request(appWith({ config: { rateLimits: limits } }));
    const address = `198.51.100.${Math.floor(Math.random() * 250)}-${Date.now()}`; // unique per run

    expect((await api.get(page).set(from(address))).status).toBe(200);
    const unknownLink = await api.post(`/verify/${'z'.repeat(43)}/submit`).set(from(address));
    expect(unknownLink.status).toBe(404);
    expect(unknownLink.headers.ratelimit).toMatch(/^"address";r=0;t=\d+$/);
    const refused = await api.get(page).set(from(address));
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limited');
    expect(refused.headers['ratelimit-policy']).toBe('"address";q=2;w=60');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await api.get(page).set(from(`${address}-other`))).status).toBe(200);
  });

  it('take the client address from the connection, or from the hop the trusted proxies saw', () => {
    const ctx = (forwarded: string) => ({
      get: (name: string) => (name === 'x-forwarded-for' ? forwarded : ''),
      req: { socket: { remoteAddress: '10.0.0.7' } },
    });
    expect(clientAddress(ctx('1.2.3.4') as never, 0)).toBe('10.0.0.7'); // no proxy: the header is the client's to invent
    expect(clientAddress(ctx('6.6.6.6, 1.2.3.4') as never, 1)).toBe('1.2.3.4');
    expect(clientAddress(ctx('6.6.6.6, 1.2.3.4, 10.1.1.1') as never, 2)).toBe('1.2.3.4');
    expect(clientAddress(ctx('') as never, 1)).toBe('10.0.0.7');
  });
});

describe('failed authentication', () => {
  const limits = { ...testLimits, authFailures: 3 };
  /** A client address of its own per test and run (the counters are rows shared by every test file). */
  const newAddress = () => `192.0.2.${Math.floor(Math.random() * 250)}-${Date.now()}-${Math.random()}`;
  const badKey = () => `sk_sandbox_${randomBytes(32).toString('base64url')}`;

  /** Counts the API-key lookups made on the harness's pool: the real statement of src/http/auth.ts, by its name. */
  function countKeyLookups(pool: Pool = sqlPoolOf(harness.prisma)) {
    const spy = jest.spyOn(pool, 'query'); // calls through to the real query
    return {
      get count() {
        return spy.mock.calls.filter(
          ([query]) => (query as unknown as { name?: string })?.name === 'authenticate-api-key',
        ).length;
      },
      restore: () => spy.mockRestore(),
    };
  }

  it('answers 429 rate_limited with Retry-After after AUTH_FAILURE_LIMIT bad keys from an address, without looking keys up', async () => {
    const partner = await harness.createPartner();
    const api = request(appWith({ config: { rateLimits: limits } }));
    const address = newAddress();
    const lookups = countKeyLookups();
    try {
      const remaining: string[] = [];
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const refused = await api.get('/v1/customers').set(from(address)).set('Authorization', badKey());
        expect(refused.status).toBe(401);
        expect(refused.body).toEqual({ error: { code: 'unauthorized', message: 'Invalid API key.' } });
        expect(refused.headers['ratelimit-policy']).toBe('"auth";q=3;w=60');
        remaining.push(/r=(\d+)/.exec(refused.headers.ratelimit as string)?.[1] as string);
      }
      expect(remaining).toEqual(['2', '1', '0']);
      expect(lookups.count).toBe(3);

      const blocked = await api.post('/v1/customers').set(from(address)).set('Authorization', badKey()).send({});
      expect(blocked.status).toBe(429);
      expect(blocked.body).toEqual({
        error: {
          code: 'rate_limited',
          message: expect.stringMatching(
            /^Too many failed authentications from this client address: at most 3 per 60 s\. Retry in \d+ s with a valid API key\.$/,
          ),
        },
      });
      expectRetryAfterAndHeaders(blocked, 'auth', 3);
      // Refused before the key was read: no lookup, whatever the key (a valid one included) or none at all.
      expect((await api.get('/v1/customers').set(from(address)).set('Authorization', partner.apiKey)).status).toBe(429);
      expect((await api.get('/v1/customers').set(from(address))).status).toBe(429);
      expect(lookups.count).toBe(3);
      expect(await harness.prisma.customer.count({ where: { partnerId: partner.partnerId } })).toBe(0);

      // Another address is not affected, with a bad key (401, counted there) or a valid one.
      const other = newAddress();
      expect((await api.get('/v1/customers').set(from(other)).set('Authorization', badKey())).status).toBe(401);
      expect((await api.get('/v1/customers').set(from(other)).set('Authorization', partner.apiKey)).status).toBe(200);
      expect(lookups.count).toBe(5);
    } finally {
      lookups.restore();
    }
  });

  it('counts only failures: any number of valid requests from an address neither count nor are refused', async () => {
    const partner = await harness.createPartner();
    const api = request(appWith({ config: { rateLimits: limits } }));
    const address = newAddress();
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const ok = await api.get('/v1/customers').set(from(address)).set('Authorization', partner.apiKey);
      expect(ok.status).toBe(200);
      expect(ok.headers['ratelimit-policy']).toBe('"partner";q=100000;w=60'); // no "auth" policy on a success
    }
    expect(await harness.prisma.rateLimit.findUnique({ where: { key: `auth:${address}` } })).toBeNull();
    for (let attempt = 0; attempt < 2; attempt += 1) {
      expect((await api.get('/v1/customers').set(from(address)).set('Authorization', badKey())).status).toBe(401);
    }
    // Below the limit, a valid key works as ever, and does not reset the count of failures either.
    expect((await api.get('/v1/customers').set(from(address)).set('Authorization', partner.apiKey)).status).toBe(200);
    expect((await harness.prisma.rateLimit.findUniqueOrThrow({ where: { key: `auth:${address}` } })).points).toBe(2);
  });

  it('hold across API processes: another process answers 429 at its first failure from the address, then from memory', async () => {
    const secondPool = createPrismaClient(harness.config.databaseUrl, { role: 'test', poolSize: 2 });
    const lookups = countKeyLookups(sqlPoolOf(secondPool));
    try {
      const first = request(appWith({ config: { rateLimits: limits } }));
      const second = request(appWith({ prisma: secondPool, config: { rateLimits: limits } }));
      const address = newAddress();
      for (let attempt = 0; attempt < 3; attempt += 1) {
        expect((await first.get('/v1/customers').set(from(address)).set('Authorization', badKey())).status).toBe(401);
      }
      const learnt = await second.get('/v1/customers').set(from(address)).set('Authorization', badKey());
      expect(learnt.status).toBe(429);
      expect(learnt.body.error.code).toBe('rate_limited');
      expect(Number(learnt.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect((await second.get('/v1/customers').set(from(address)).set('Authorization', badKey())).status).toBe(429);
      expect(lookups.count).toBe(1); // the failure that told it
    } finally {
      lookups.restore();
      await secondPool.$disconnect();
    }
  });

  it('lets the address try again once its window is over', async () => {
    const api = request(
      appWith({ config: { rateLimits: { ...limits, authFailures: 1, authFailureWindowSeconds: 1 } } }),
    );
    const address = newAddress();
    expect((await api.get('/v1/customers').set(from(address)).set('Authorization', badKey())).status).toBe(401);
    const blocked = await api.get('/v1/customers').set(from(address)).set('Authorization', badKey());
    expect(blocked.status).toBe(429);
    expect(blocked.headers['retry-after']).toBe('1');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await api.get('/v1/customers').set(from(address)).set('Authorization', badKey())).status).toBe(401);
  });

  it('is configured by AUTH_FAILURE_LIMIT per AUTH_FAILURE_WINDOW_SECONDS, 20 per 60 s by default', () => {
    const base = { DATABASE_URL: 'postgresql://localhost/x', APP_ENV: 'sandbox' };
    expect(loadConfig(base).rateLimits).toMatchObject({ authFailures: 20, authFailureWindowSeconds: 60 });
    expect(
      loadConfig({ ...base, AUTH_FAILURE_LIMIT: '5', AUTH_FAILURE_WINDOW_SECONDS: '300' }).rateLimits,
    ).toMatchObject({ authFailures: 5, authFailureWindowSeconds: 300 });
    expect(() => loadConfig({ ...base, AUTH_FAILURE_LIMIT: '0' })).toThrow('AUTH_FAILURE_LIMIT');
  });
});

describe('security headers', () => {
  it('are on every answer: JSON, errors and the API reference', async () => {
    const partner = await harness.createPartner();
    const answers = [
      await partner.api.get('/v1/customers'),
      await harness.http.get('/v1/customers'), // 401
      await harness.http.get('/nowhere'), // 404
      await harness.http.get('/openapi.json'),
    ];
    for (const answer of answers) {
      expect(answer.headers).toMatchObject({
        'content-security-policy': "default-src 'none';frame-ancestors 'none';base-uri 'none';form-action 'none'",
        'x-frame-options': 'DENY',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cache-control': 'no-store',
        'strict-transport-security': expect.stringContaining('max-age='),
      });
    }
    const docs = await harness.http.get('/docs');
    expect(docs.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(docs.headers['content-security-policy']).toContain("script-src 'self'");
    expect(docs.headers['x-frame-options']).toBe('DENY');
  });
});

describe('the encryption key', () => {
  const base = { DATABASE_URL: 'postgresql://localhost/x', APP_ENV: 'production', ...productionTestSecrets };

  it('is required in production, 32 bytes in hex or base64; the sandbox falls back to its public key', () => {
    const { SECRETS_ENCRYPTION_KEY: _key, ...withoutKey } = base;
    expect(() => loadConfig(withoutKey)).toThrow('SECRETS_ENCRYPTION_KEY is required in production');
    expect(() => loadConfig({ ...base, SECRETS_ENCRYPTION_KEY: 'abc' })).toThrow(
      'SECRETS_ENCRYPTION_KEY must be 32 bytes',
    );
    const key = randomBytes(32);
    expect(loadConfig({ ...base, SECRETS_ENCRYPTION_KEY: key.toString('hex') }).secrets.encryptionKey).toEqual(key);
    const rotated = loadConfig({
      ...base,
      SECRETS_ENCRYPTION_KEY: key.toString('base64'),
      SECRETS_ENCRYPTION_PREVIOUS_KEYS: `${randomBytes(32).toString('base64')}, ${'ef'.repeat(32)}`,
    });
    expect(rotated.secrets.encryptionKey).toEqual(key);
    expect(rotated.secrets.previousEncryptionKeys).toHaveLength(2);
    expect(loadConfig({ ...withoutKey, APP_ENV: 'sandbox' }).secrets.encryptionKey).toEqual(SANDBOX_SECRETS_KEY);
  });
});

describe('runtime', () => {
  it('is Node.js 24, as production (Dockerfile, engines) and the script that fetches it say', () => {
    const { NODE_VERSION } = require('../scripts/with-node.cjs') as { NODE_VERSION: string };
    expect(process.versions.node.split('.')[0]).toBe('24');
    expect(NODE_VERSION.split('.')[0]).toBe('24');
    expect(readFileSync(path.join(projectRoot, 'Dockerfile'), 'utf8')).toMatch(/^FROM node:24-/m);
    const pkg = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8'));
    expect(pkg.engines.node).toBe('>=24.0.0');
    for (const script of ['test', 'dev']) expect(pkg.scripts[script]).toMatch(/^node scripts\/with-node\.cjs /);
    // CI installs, then runs the README's test command (as a line of its own, after the install).
    const ci = readFileSync(path.join(projectRoot, '.ci', 'run'), 'utf8').split('\n');
    expect(ci.indexOf('npm install')).toBeGreaterThan(-1);
    expect(ci.indexOf('npm test')).toBeGreaterThan(ci.indexOf('npm install'));
  });
});
