// The API's front door: keys bound to their environment and managed with `npm run partner:keys`, rate limits shared
// by every API process (PostgreSQL), security headers on every answer, and the runtime the tests run on.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { partnerKeysCommand } from '../scripts/partner-keys';
import { createPrismaClient } from '../src/db';
import { createApp } from '../src/http/app';
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
  return createApp({ ...harness.services, ...services, config: { ...harness.config, ...services.config } }).callback();
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

describe('rate limits', () => {
  const limits = { partnerRequests: 3, publicRequests: 2, windowSeconds: 60, trustProxyHops: 1 };

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
    const retryAfter = Number(refused.headers['retry-after']);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers['ratelimit-policy']).toBe('"partner";q=3;w=60');
    expect(refused.headers.ratelimit).toBe(`"partner";r=0;t=${retryAfter}`);
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
    const from = (client: string) => ({ 'X-Forwarded-For': `203.0.113.9, ${client}` }); // rightmost: our proxy's view

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
    expect(readFileSync(path.join(projectRoot, '.ci', 'run'), 'utf8')).toContain('npm install && npm test');
  });
});
