// The SDK package (clients/typescript, @payments-api/sdk) as a partner gets it: `npm pack`, installed in an empty
// folder, required and imported on Node 20 and 24, its example run against the real API; its retries, pagination
// and typed errors; the live event stream it reads; and its CLI forwarding a triggered event to a local receiver,
// signed like a real delivery.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  createPaymentsClient,
  PaymentsApiError,
  requestIdOf,
  unwrap,
  verifyWebhook,
} from '../clients/typescript/index';
import { streamEvents } from '../clients/typescript/stream';
import { API_VERSION } from '../src/http/openapi';
import { closeEventStreams } from '../src/services/event-stream';
import { withDatabaseTransaction } from '../src/persistence/database';
import { recordEvent } from '../src/persistence/events';
import { eventually } from './support/eventually';
import { allRoutes } from '../src/routes';
import { Harness, startHarness, TestPartner } from './support/harness';
import { projectRoot } from './support/paths';
import { WebhookReceiver } from './support/webhook-receiver';
import { configureWebhooks } from './support/webhooks';

const run = promisify(execFile);
/** A customer the API accepts (the individual's required fields). */
const customerBody = (firstName: string) => ({
  type: 'individual',
  first_name: firstName,
  last_name: 'Souza',
  email: 'ana.souza@example.com',
  phone_number: '+5511987654321',
  date_of_birth: '1990-05-17',
  tin: '52998224725',
  country: 'BRA',
  address: { street_line_1: 'Avenida Paulista 1000', city: 'São Paulo', postal_code: '01310-100', country: 'BRA' },
});
/** The machine's Node (20 here) besides the Node 24 the tests run on. */
const NODES = [...new Set([process.execPath, '/usr/bin/node'])];

let harness: Harness;
let partner: TestPartner;
let server: http.Server;
let baseUrl: string;
let workDir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  harness = await startHarness();
  partner = await harness.createPartner('SDK');
  server = http.createServer(
    harness.createApp(harness.services, allRoutes, { onResponse: (ctx) => harness.conformance.check(ctx) }).callback(),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The package as a partner installs it: packed (prepack builds it) and installed in an empty folder.
  workDir = mkdtempSync(path.join(os.tmpdir(), 'sdk-'));
  await run('npm', ['pack', path.join(projectRoot, 'clients', 'typescript'), '--pack-destination', workDir], {
    cwd: workDir,
  });
  const tarball = readdirSync(workDir).find((file) => file.endsWith('.tgz'))!;
  writeFileSync(path.join(workDir, 'package.json'), JSON.stringify({ name: 'partner-app', private: true }));
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', `./${tarball}`], { cwd: workDir });
}, 240_000);

it("has the API's version (info.version of the description)", () => {
  const tarball = readdirSync(workDir).find((file) => file.endsWith('.tgz'));
  expect(tarball).toBe(`payments-api-sdk-${API_VERSION}.tgz`);
  const installed = JSON.parse(
    readFileSync(path.join(workDir, 'node_modules', '@payments-api', 'sdk', 'package.json'), 'utf8'),
  ) as { version: string };
  expect(installed.version).toBe(API_VERSION);
});

afterAll(async () => {
  for (const child of children) child.kill('SIGTERM');
  await new Promise((resolve) => server?.close(resolve));
  await harness?.teardown();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

/** A command of the installed package, run from the partner's folder. */
function spawnIn(node: string, args: string[], env: Record<string, string> = {}): ChildProcess & { lines: string[] } {
  const child = spawn(node, args, { cwd: workDir, env: { ...process.env, ...env } }) as ChildProcess & {
    lines: string[];
  };
  child.lines = [];
  let buffer = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    const parts = buffer.split('\n');
    buffer = parts.pop()!;
    child.lines.push(...parts);
  });
  child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  children.push(child);
  return child;
}

async function exited(child: ChildProcess): Promise<number> {
  if (child.exitCode !== null) return child.exitCode;
  return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
}

async function lineMatching(child: { lines: string[] }, pattern: RegExp, timeoutMs = 60_000): Promise<string> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const line = child.lines.find((candidate) => pattern.test(candidate));
    if (line) return line;
    if (Date.now() > until) throw new Error(`no line matching ${pattern}: ${child.lines.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const cli = (node: string, args: string[], env: Record<string, string> = {}) =>
  spawnIn(node, [path.join(workDir, 'node_modules', '@payments-api', 'sdk', 'dist', 'cjs', 'cli.js'), ...args], env);

it('installs from the packed tarball, and works as CommonJS and as an ES module on Node 20 and 24', async () => {
  const cjs = `const { createPaymentsClient, unwrap } = require('@payments-api/sdk');
    const api = createPaymentsClient({ baseUrl: process.env.URL, apiKey: process.env.KEY });
    api.GET('/v1/customers', { params: { query: { limit: 1 } } }).then((r) => console.log('cjs', r.response.status, Array.isArray(unwrap(r).items)));`;
  const esm = `import { createPaymentsClient, errorStatuses } from '@payments-api/sdk';
    const api = createPaymentsClient({ baseUrl: process.env.URL, apiKey: 'sk_sandbox_wrong' });
    const r = await api.GET('/v1/customers');
    console.log('esm', r.response.status, r.error.error.code, errorStatuses[r.error.error.code]);`;
  for (const node of NODES) {
    const env = { ...process.env, URL: baseUrl, KEY: partner.apiKey };
    const version = (await run(node, ['--version'])).stdout.trim();
    const required = await run(node, ['-e', cjs], { cwd: workDir, env });
    expect(required.stdout.trim()).toBe('cjs 200 true');
    const imported = await run(node, ['--input-type=module', '-e', esm], { cwd: workDir, env });
    expect(imported.stdout.trim()).toBe('esm 401 unauthorized 401');
    console.log(`SDK package on Node ${version}: ${required.stdout.trim()}; ${imported.stdout.trim()}`);
  }
  expect(NODES.length).toBe(2);
}, 60_000);

it("runs the package's example on Node 20: KYC to a completed fiat-to-fiat transaction", async () => {
  const example = spawnIn(
    '/usr/bin/node',
    [path.join(workDir, 'node_modules', '@payments-api', 'sdk', 'dist', 'cjs', 'example.js')],
    { PAYMENTS_API_URL: baseUrl, PAYMENTS_API_KEY: partner.apiKey },
  );
  let running = true;
  // The settlement's and the review's timers run on the test server's clock: skip it while the example polls.
  const clock = (async () => {
    while (running) {
      await harness.env.sleep('5 seconds');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  try {
    expect(await exited(example)).toBe(0);
  } finally {
    running = false;
    await clock;
  }
  expect(example.lines).toContainEqual(expect.stringMatching(/^KYC: approved/));
  expect(example.lines.at(-1)).toMatch(/^transaction \S+: completed/);
}, 180_000);

it('iterates over every item of a list, page after page', async () => {
  const api = createPaymentsClient({ baseUrl, apiKey: partner.apiKey });
  const own = await harness.createPartner('SDK pages');
  const ownApi = createPaymentsClient({ baseUrl, apiKey: own.apiKey });
  const created: string[] = [];
  for (let index = 0; index < 5; index += 1) {
    const customer = unwrap(
      await ownApi.POST('/v1/customers', {
        body: customerBody(`P${index}`),
      } as never),
    ) as { id: string };
    created.push(customer.id);
  }
  const seen: string[] = [];
  for await (const customer of ownApi.paginate('/v1/customers', { query: { limit: 2 } })) seen.push(customer.id);
  expect(seen).toEqual([...created].reverse()); // newest first, each once, across 3 pages
  // The other partner's list is its own.
  for await (const customer of api.paginate('/v1/customers', { query: { limit: 2 } })) {
    expect(created).not.toContain(customer.id);
  }
});

it('retries a 503 after its Retry-After with the same Idempotency-Key', async () => {
  const seen: Array<{ key: string | undefined; at: number }> = [];
  const flaky = http.createServer((req, res) => {
    seen.push({ key: req.headers['idempotency-key'] as string | undefined, at: Date.now() });
    req.resume();
    if (seen.length === 1) {
      res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1', 'X-Request-Id': 'req-1' });
      res.end(JSON.stringify({ error: { code: 'service_unavailable', message: 'try again' } }));
    } else {
      res.writeHead(201, { 'Content-Type': 'application/json', 'X-Request-Id': 'req-2' });
      res.end(JSON.stringify({ id: 'cus_1' }));
    }
  });
  await new Promise<void>((resolve) => flaky.listen(0, '127.0.0.1', resolve));
  try {
    const api = createPaymentsClient({
      baseUrl: `http://127.0.0.1:${(flaky.address() as AddressInfo).port}`,
      apiKey: 'sk_sandbox_x',
    });
    const result = await api.POST('/v1/customers', { body: { type: 'individual' } } as never);
    expect(result.response.status).toBe(201);
    expect(requestIdOf(result.response)).toBe('req-2');
    expect(seen).toHaveLength(2);
    expect(seen[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[1]!.key).toBe(seen[0]!.key);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(950); // Retry-After: 1
  } finally {
    await new Promise((resolve) => flaky.close(resolve));
  }
});

it('retries a dropped connection and a timed-out attempt with the same Idempotency-Key, then gives up', async () => {
  const keys: Array<string | undefined> = [];
  const flaky = http.createServer((req, res) => {
    keys.push(req.headers['idempotency-key'] as string | undefined);
    req.resume();
    if (keys.length === 1)
      req.socket.destroy(); // a network error
    else if (keys.length === 2)
      setTimeout(() => res.writeHead(201).end('{}'), 1000); // slower than timeoutMs
    else res.writeHead(201, { 'Content-Type': 'application/json' }).end('{"id":"x"}');
  });
  await new Promise<void>((resolve) => flaky.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(flaky.address() as AddressInfo).port}`;
    const api = createPaymentsClient({ baseUrl: url, apiKey: 'k', timeoutMs: 300, retryBaseDelayMs: 10 });
    const result = await api.PUT('/v1/webhook-configs/{id}', { params: { path: { id: 'x' } }, body: {} } as never);
    expect(result.response.status).toBe(201);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    // With retries off, the network error is the caller's.
    keys.length = 0;
    const once = createPaymentsClient({ baseUrl: url, apiKey: 'k', maxRetries: 0 });
    await expect(once.GET('/v1/customers')).rejects.toThrow();
  } finally {
    flaky.closeAllConnections();
    await new Promise((resolve) => flaky.close(resolve));
  }
});

it('abandons a slow attempt after timeoutMs even when memory is collected during it', async () => {
  // The attempt's timeout once hung on objects a garbage collection could take (a Request made only to carry the
  // signal): a loaded process that collected during an attempt waited for the server instead of retrying.
  setFlagsFromString('--expose-gc');
  const collectGarbage = runInNewContext('gc') as () => void;
  const keys: Array<string | undefined> = [];
  const slowOnce = http.createServer((req, res) => {
    keys.push(req.headers['idempotency-key'] as string | undefined);
    req.resume();
    if (keys.length === 1) setTimeout(() => res.writeHead(201).end('{}'), 10_000);
    else res.writeHead(201, { 'Content-Type': 'application/json' }).end('{"id":"x"}');
  });
  await new Promise<void>((resolve) => slowOnce.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(slowOnce.address() as AddressInfo).port}`;
    const api = createPaymentsClient({ baseUrl: url, apiKey: 'k', timeoutMs: 1000, retryBaseDelayMs: 10 });
    const started = Date.now();
    const pending = api.PUT('/v1/webhook-configs/{id}', { params: { path: { id: 'x' } }, body: {} } as never);
    for (let collections = 0; collections < 3; collections += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      collectGarbage();
    }
    const result = await pending;
    // Answered by a retry (a loaded machine may need more than one), not by the held first attempt.
    expect(result.response.status).toBe(201);
    expect(result.data).toEqual({ id: 'x' });
    expect(keys.length).toBeGreaterThanOrEqual(2);
    expect(new Set(keys).size).toBe(1);
    expect(Date.now() - started).toBeLessThan(9_000);
  } finally {
    slowOnce.closeAllConnections();
    await new Promise((resolve) => slowOnce.close(resolve));
  }
});

it('throws errors typed by code, with the request id', async () => {
  const api = createPaymentsClient({ baseUrl, apiKey: partner.apiKey });
  const result = await api.GET('/v1/customers/{id}', { params: { path: { id: 'nobody' } } });
  const error = (() => {
    try {
      unwrap(result);
    } catch (thrown) {
      return thrown as PaymentsApiError;
    }
    throw new Error('unwrap did not throw');
  })();
  expect(error).toBeInstanceOf(PaymentsApiError);
  expect(error.code).toBe('not_found');
  expect(error.status).toBe(404);
  expect(error.requestId).toBe(result.response.headers.get('x-request-id'));
  expect(error.requestId).toBeTruthy();
});

/** A stream request once its response headers are in: the API counts it open from then on. `text` reads it to its end. */
async function openStream(apiKey: string, query: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${baseUrl}/v1/events/stream?${query}`, {
    headers: { Authorization: `Bearer ${apiKey}`, ...headers },
  });
  return { status: response.status, type: response.headers.get('content-type'), text: () => response.text() };
}

/** The raw text of a stream request that ends by itself (max_seconds). */
async function readStream(apiKey: string, query: string, headers: Record<string, string> = {}) {
  const stream = await openStream(apiKey, query, headers);
  return { ...stream, text: await stream.text() };
}

it("streams the partner's own events, resumes after Last-Event-ID, and caps open streams", async () => {
  const streamer = await harness.createPartner('SDK stream');
  const other = await harness.createPartner('SDK stream other');
  const api = createPaymentsClient({ baseUrl, apiKey: streamer.apiKey });
  const customerOf = async (key: string) =>
    unwrap(
      await createPaymentsClient({ baseUrl, apiKey: key }).POST('/v1/customers', {
        body: customerBody('Live'),
      } as never),
    ) as { id: string };
  const first = await customerOf(streamer.apiKey);
  const [firstEvent] = (await api.GET('/v1/events', { params: { query: { limit: 1 } } })).data!.items;
  expect(firstEvent!.event_resource_id).toBe(first.id);
  // Live: started before the events, it sees them as they are recorded; not another partner's.
  const live = await openStream(streamer.apiKey, 'max_seconds=3');
  const second = await customerOf(streamer.apiKey);
  await customerOf(other.apiKey);
  const streamed = { ...live, text: await live.text() };
  expect(streamed.status).toBe(200);
  expect(streamed.type).toMatch(/^text\/event-stream/);
  const ids = [...streamed.text.matchAll(/^id: (.+)$/gm)].map((match) => match[1]);
  const data = [...streamed.text.matchAll(/^data: (.+)$/gm)].map((match) => JSON.parse(match[1]!));
  expect(data.map((event) => event.event_resource_id)).toEqual([second.id]);
  expect(data[0].event_type).toBe('customer.created');
  expect(ids).toEqual([data[0].event_id]);
  // Resumed after the first event: the second comes at once.
  const resumed = await readStream(streamer.apiKey, 'max_seconds=1', { 'Last-Event-ID': firstEvent!.event_id });
  expect([...resumed.text.matchAll(/^id: (.+)$/gm)].map((match) => match[1])).toEqual(ids);
  // Another partner's event id is no place to resume from.
  const foreign = await readStream(other.apiKey, 'max_seconds=1', { 'Last-Event-ID': firstEvent!.event_id });
  expect(foreign.status).toBe(422);
  // Three open streams at most: with three open (longer than the test waits), a fourth is refused.
  const open = await Promise.all([1, 2, 3].map(() => openStream(streamer.apiKey, 'max_seconds=60')));
  expect(open.map((stream) => stream.status)).toEqual([200, 200, 200]);
  const fourth = await readStream(streamer.apiKey, 'max_seconds=1');
  expect(fourth.status).toBe(429);
  expect(JSON.parse(fourth.text).error.code).toBe('rate_limited');
  closeEventStreams();
  await Promise.all(open.map((stream) => stream.text()));
  // A stopping API ends its streams at once rather than after max_seconds.
  const ending = await openStream(streamer.apiKey, 'max_seconds=60');
  expect(ending.status).toBe(200);
  const started = Date.now();
  closeEventStreams();
  await ending.text();
  expect(Date.now() - started).toBeLessThan(10_000);
}, 60_000);

it('tells the stream reader once the stream is open: an event recorded at that moment comes', async () => {
  // What the CLI's "Ready" waits for: an event created the moment onOpen is told is streamed, never missed.
  const streamer = await harness.createPartner('SDK stream open');
  const stop = new AbortController();
  let created: Promise<{ id: string }> | undefined;
  const onOpen = () => {
    created ??= createPaymentsClient({ baseUrl, apiKey: streamer.apiKey })
      .POST('/v1/customers', { body: customerBody('Opened') } as never)
      .then((response) => unwrap(response) as { id: string });
  };
  const timer = setTimeout(() => stop.abort(), 20_000);
  try {
    const events = streamEvents({ baseUrl, apiKey: streamer.apiKey, signal: stop.signal, onOpen });
    const first = await events.next();
    expect(first.done).toBe(false);
    expect(first.value?.event_type).toBe('customer.created');
    expect(first.value?.event_resource_id).toBe((await created!).id);
  } finally {
    clearTimeout(timer);
    stop.abort();
  }
});

it('streams an event whose database transaction commits after a later-numbered one: no gap, no repeat', async () => {
  const streamer = await harness.createPartner('SDK stream order');
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const live = await openStream(streamer.apiKey, 'max_seconds=5');
  // One event recorded in a transaction held open, so it takes its sequence number first but commits last.
  let commit!: () => void;
  const committing = new Promise<void>((resolve) => (commit = resolve));
  const heldResourceId = randomUUID();
  let heldEventId: string | undefined;
  const held = withDatabaseTransaction(harness.services.prisma, async (tx) => {
    heldEventId = await recordEvent(tx, {
      partnerId: streamer.partnerId,
      type: 'customer.created',
      resourceId: heldResourceId,
      resourceStatus: 'pending',
      resource: { id: heldResourceId },
    });
    await committing;
  });
  await eventually(
    async () => heldEventId,
    (id) => id !== undefined,
  );
  const later = unwrap(
    await createPaymentsClient({ baseUrl, apiKey: streamer.apiKey }).POST('/v1/customers', {
      body: customerBody('Later'),
    } as never),
  ) as { id: string };
  await sleep(1500); // the stream polls while the first event's transaction is still open
  commit();
  await held;
  const resources = [...(await live.text()).matchAll(/^data: (.+)$/gm)].map(
    (match) => (JSON.parse(match[1]!) as { event_resource_id: string }).event_resource_id,
  );
  // Each once: the later one at once (ahead of the open transaction), the held one once it committed.
  expect(resources).toEqual([later.id, heldResourceId]);
  // Resumed after the held event: the later one, once.
  const resumed = await readStream(streamer.apiKey, 'max_seconds=1', { 'Last-Event-ID': heldEventId! });
  expect([...resumed.text.matchAll(/^data: (.+)$/gm)].map((match) => JSON.parse(match[1]!).event_resource_id)).toEqual([
    later.id,
  ]);
}, 60_000);

it('CLI: login keeps the key (0600), listen forwards a triggered event signed like a delivery, events list and resend', async () => {
  const developer = await harness.createPartner('SDK CLI');
  const config = path.join(workDir, 'config', 'payments.json');
  const env = { PAYMENTS_CONFIG: config, PAYMENTS_API_KEY: '', PAYMENTS_API_URL: '' };
  const login = cli(process.execPath, ['login', '--api-key', developer.apiKey, '--base-url', baseUrl, '--json'], env);
  expect(await exited(login)).toBe(0);
  expect(JSON.parse(login.lines[0]!)).toEqual({ base_url: baseUrl, config });
  expect(statSync(config).mode & 0o777).toBe(0o600);

  const local = await WebhookReceiver.start();
  const configured = await WebhookReceiver.start();
  try {
    const listen = cli('/usr/bin/node', ['listen', '--forward-to', local.url, '--json'], env);
    const ready = JSON.parse(await lineMatching(listen, /"ready":true/)) as { secret: string };
    expect(ready.secret).toMatch(/^whsec_/);
    const trigger = cli(process.execPath, ['trigger', 'customer.created', '--json'], env);
    expect(await exited(trigger)).toBe(0);
    const triggered = JSON.parse(trigger.lines[0]!) as { resource_id: string };

    const [forwarded] = await local.waitForCount(1);
    const event = verifyWebhook(ready.secret, forwarded!.rawBody, forwarded!.headers as Record<string, string>);
    expect(event.event_type).toBe('customer.created');
    expect(event.event_resource_id).toBe(triggered.resource_id);
    expect(forwarded!.headers['webhook-id']).toBe(event.event_id);
    expect(() =>
      verifyWebhook(
        `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
        forwarded!.rawBody,
        forwarded!.headers as Record<string, string>,
      ),
    ).toThrow();
    const reported = JSON.parse(await lineMatching(listen, /"event_id"/)) as { event_id: string; status: number };
    expect(reported).toEqual({ event_id: event.event_id, event_type: 'customer.created', status: 200 });
    listen.kill('SIGINT');
    expect(await exited(listen)).toBe(0);

    const list = cli(process.execPath, ['events', 'list', '--limit', '1', '--json'], env);
    expect(await exited(list)).toBe(0);
    expect(
      (JSON.parse(list.lines[0]!) as { items: Array<{ event_id: string }> }).items.map((item) => item.event_id),
    ).toEqual([event.event_id]);

    await configureWebhooks(developer, configured.url, ['customer.created']);
    const resend = cli(process.execPath, ['events', 'resend', event.event_id, '--json'], env);
    expect(await exited(resend)).toBe(0);
    const [redelivered] = await configured.waitForCount(1);
    expect(redelivered!.headers['webhook-id']).toBe(event.event_id);

    console.log(
      `payments listen (transcript):\n  ${listen.lines.join('\n  ')}\npayments trigger customer.created --json:\n  ${trigger.lines.join('\n  ')}`,
    );
    const help = cli(process.execPath, ['listen', '--help'], env);
    expect(await exited(help)).toBe(0);
    expect(help.lines[0]).toMatch(/^Usage: payments listen --forward-to <url>/);
  } finally {
    await local.close();
    await configured.close();
  }
}, 120_000);

it('CLI: trigger payin.completed drives a sandbox pay-in to completion; listen forwards only the types asked', async () => {
  const developer = await harness.createPartner('SDK CLI pay-in');
  const env = {
    PAYMENTS_API_KEY: developer.apiKey,
    PAYMENTS_API_URL: baseUrl,
    PAYMENTS_CONFIG: path.join(workDir, 'none.json'),
  };
  const local = await WebhookReceiver.start();
  let running = true;
  // The review's and the settlement's timers run on the test server's clock.
  const clock = (async () => {
    while (running) {
      await harness.env.sleep('5 seconds');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  try {
    const listen = cli(process.execPath, ['listen', '--forward-to', local.url, '--events', 'payin.completed'], env);
    // Printed once the stream is open: what is triggered now is forwarded.
    const secret = /secret: (whsec_\S+)/.exec(await lineMatching(listen, /Webhook signing secret/))![1]!;
    const trigger = cli(process.execPath, ['trigger', 'payin.completed'], env);
    expect(await exited(trigger)).toBe(0);
    const payinId = /^Triggered payin.completed: (\S+)$/.exec(trigger.lines[0]!)![1];
    const [forwarded] = await local.waitForCount(1);
    const event = verifyWebhook(secret, forwarded!.rawBody, forwarded!.headers as Record<string, string>);
    expect(event.event_type).toBe('payin.completed');
    expect(event.event_resource_id).toBe(payinId);
    // Only payin.completed was asked for, though customer.*, payin.created and payin.processing were recorded too.
    expect(local.requests).toHaveLength(1);
    await lineMatching(listen, new RegExp(`payin\\.completed +${event.event_id}  -> 200$`));
    console.log(`payments listen --events payin.completed:\n  ${listen.lines.join('\n  ')}`);
    listen.kill('SIGINT');
    await exited(listen);
  } finally {
    running = false;
    await clock;
    await local.close();
  }
}, 120_000);
