// The typed TypeScript client (clients/typescript): its types are what `npm run client:generate` makes from the
// description today (drift fails here), it verifies the webhooks the API signs, and its example takes a customer
// through KYC to a completed fiat-to-fiat transaction against the real API (listening on a port, real database,
// real workflows; the test server's clock is skipped ahead while the example polls).
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createPaymentsClient, verifyWebhook } from '../clients/typescript/index';
import { runExample } from '../clients/typescript/example';
import { allRoutes } from '../src/routes';
import { Harness, startHarness, TestPartner } from './support/harness';
import { projectRoot } from './support/paths';
import { WebhookReceiver } from './support/webhook-receiver';
import { configureWebhooks } from './support/webhooks';

let harness: Harness;
let partner: TestPartner;
let server: http.Server;
let baseUrl: string;

beforeAll(async () => {
  harness = await startHarness();
  partner = await harness.createPartner('Client example');
  server = http.createServer(
    harness.createApp(harness.services, allRoutes, { onResponse: (ctx) => harness.conformance.check(ctx) }).callback(),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await harness?.teardown();
});

it('has the types the description gives today (npm run client:generate)', () => {
  // Exits 1 (and the call throws) when clients/typescript/schema.d.ts differs from a fresh generation.
  const output = execFileSync(
    process.execPath,
    ['--import', 'tsx', path.join(projectRoot, 'scripts', 'generate-client.ts'), '--check'],
    {
      cwd: projectRoot,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  expect(output).toBe('');
}, 120_000);

it('runs the example: KYC to a completed fiat-to-fiat transaction', async () => {
  const lines: string[] = [];
  let running = true;
  // The settlement's and the review's timers run on the test server's clock: skip it while the example polls.
  const clock = (async () => {
    while (running) {
      await harness.env.sleep('5 seconds');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  try {
    const transaction = await runExample(createPaymentsClient({ baseUrl, apiKey: partner.apiKey }), (line) =>
      lines.push(line),
    );
    expect(transaction.status).toBe('completed');
  } finally {
    running = false;
    await clock;
  }
  console.log(`client example:\n  ${lines.join('\n  ')}`);
  expect(lines[0]).toMatch(/^customer .+: pending$/);
  expect(lines).toContainEqual(expect.stringMatching(/^KYC: approved/));
  expect(lines).toContainEqual(expect.stringMatching(/^deposit: accepted$/));
  // The API says the same as the example's last line.
  const id = /^transaction (\S+): completed/.exec(lines.at(-1)!)![1]!;
  const stored = await partner.api.get(`/v1/transactions/${id}`);
  expect(stored.body.status).toBe('completed');
}, 180_000);

it('verifies the webhooks the API signs, and refuses a tampered one', async () => {
  const receiver = await WebhookReceiver.start();
  try {
    const webhooks = await configureWebhooks(partner, receiver.url, ['payin.completed']);
    const mock = await partner.api.post('/webhooks/mock').send({ event_type: 'payin.completed' });
    expect(mock.status).toBe(200);
    const [request] = await receiver.waitForCount(1);
    const event = verifyWebhook(webhooks.secret, request!.rawBody, request!.headers as Record<string, string>);
    expect(event.event_type).toBe('payin.completed');
    expect(event.event_id).toBe(request!.headers['webhook-id']);
    expect(() =>
      verifyWebhook(
        webhooks.secret,
        request!.rawBody.replace('payin.completed', 'payin.refunded'),
        request!.headers as Record<string, string>,
      ),
    ).toThrow();
  } finally {
    await receiver.close();
  }
});
