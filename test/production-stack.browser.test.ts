// The operator's view on the production topology: the Temporal server on PostgreSQL with its Web UI server
// (scripts/lib/production.ts, as `npm run stack -- --production` starts them, behind mutual TLS: the UI, the API and
// the worker connect with their client certificates), an API and a worker on it (as their database roles), one fiat to
// fiat settlement; then headless Chromium (Debian's, through playwright-core) opens the UI, finds the settlement by
// its transaction id (search attribute ResourceId) and sees its two legs. Saves a screenshot to test-artifacts/.
//
// It needs the Temporal server's binaries, which take about 5 minutes to build the first time
// (scripts/temporal-binaries.sh server). .ci/run builds them (Go's caches make later builds take about a minute), so
// CI always runs this test; elsewhere it is skipped, saying so, until they have been built once (by `npm run stack
// -- --production`, or that script). Where CI is set, missing binaries fail the test instead.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Browser } from 'playwright-core';
import { createPrismaClient } from '../src/persistence/internal/database';
import { createPartner } from '../src/services/partners';
import { workflowIds } from '../src/temporal/workflow-ids';
import {
  approvedCustomer,
  createFiatToFiatQuote,
  call,
  fiatToFiatAccounts,
  fiatToFiatBody,
  idOf,
} from '../scripts/chaos/fixtures';
import { HttpClient } from '../scripts/chaos/http';
import { serviceRoleUrl } from '../scripts/lib/database';
import { freePort } from '../scripts/lib/ports';
import { startProductionEngine } from '../scripts/lib/production';
import { tsEntry } from '../scripts/lib/entry-points';
import { Stack } from '../scripts/lib/stack';
import { temporalClientTlsEnv, type TemporalServerBinaries } from '../scripts/lib/temporal-server';
import { waitUntil } from '../scripts/lib/wait';
import { launchChromium } from './support/browser';
import { projectRoot, testArtifactsDir, workflowBundlePath } from './support/paths';

const dataDir = path.join(projectRoot, '.data', 'production-test');

/** The cached binaries, without building them (the build is scripts/temporal-binaries.sh server's). */
function cachedBinaries(): TemporalServerBinaries | undefined {
  const output = execFileSync('bash', [path.join(projectRoot, 'scripts', 'temporal-binaries.sh'), 'server-cached'], {
    encoding: 'utf8',
  });
  const value = (name: string) => new RegExp(`^${name}=(.*)$`, 'm').exec(output)?.[1] ?? '';
  const server = value('TEMPORAL_SERVER_PATH');
  if (!server) return undefined;
  return {
    server,
    sqlTool: value('TEMPORAL_SQL_TOOL_PATH'),
    uiServer: value('TEMPORAL_UI_SERVER_PATH'),
    uiRoot: value('TEMPORAL_UI_ROOT'),
  };
}

const binaries = cachedBinaries();
if (!binaries && process.env.CI)
  throw new Error(
    'CI: the Temporal server binaries are missing (.ci/run builds them: scripts/temporal-binaries.sh server)',
  );
const describeWithServer = binaries ? describe : describe.skip;
if (!binaries)
  console.warn(
    'production-stack.browser.test.ts skipped: no Temporal server binaries yet; `bash scripts/temporal-binaries.sh server` builds them (about 5 minutes, once)',
  );

describeWithServer('the Temporal UI on the production topology', () => {
  let stack: Stack;
  let browser: Browser;
  let uiUrl: string;
  let api: HttpClient;

  beforeAll(async () => {
    stack = new Stack({ logs: path.join(dataDir, 'logs') });
    const uiPort = await freePort();
    uiUrl = `http://127.0.0.1:${uiPort}`;
    const engine = await startProductionEngine(stack, {
      dataDir,
      database: 'payments',
      fresh: true,
      uiPort,
      binaries: Promise.resolve(binaries),
      tls: true,
    });
    const apiPort = await freePort();
    const env = {
      ...process.env,
      APP_ENV: 'sandbox',
      PORT: String(apiPort),
      DATABASE_URL: engine.database.url,
      TEMPORAL_ADDRESS: engine.temporalAddress,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: 'payments',
      DOCUMENT_STORAGE_DIR: path.join(dataDir, 'documents'),
      SANDBOX_VERIFICATION_DELAY_SECONDS: '1',
      WORKFLOW_BUNDLE_PATH: workflowBundlePath,
    };
    api = new HttpClient(apiPort);
    await Promise.all([
      stack.start({
        name: 'api',
        ...tsEntry('src/server.ts'),
        env: {
          ...env,
          ...temporalClientTlsEnv(engine.tls!, 'api'),
          DATABASE_URL: serviceRoleUrl(engine.database.url, 'api'),
        },
        ready: async () =>
          (await api.send({ method: 'GET', path: '/health/ready', timeoutMs: 2000 })).kind === 'response',
      }),
      stack.start({
        name: 'worker',
        ...tsEntry('src/worker.ts'),
        env: {
          ...env,
          ...temporalClientTlsEnv(engine.tls!, 'worker'),
          DATABASE_URL: serviceRoleUrl(engine.database.url, 'worker'),
        },
        ready: stack.pollsTaskQueue('payments'),
      }),
    ]);
    const prisma = createPrismaClient(engine.database.url, { role: 'test', poolSize: 1 });
    try {
      api = api.with({ Authorization: (await createPartner(prisma, 'UI test partner', 'sandbox')).api_key });
    } finally {
      await prisma.$disconnect();
    }
    browser = await launchChromium();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  }, 120_000);

  it('finds a settlement by its transaction id and shows its two legs', async () => {
    const customerId = await approvedCustomer(api);
    const { solanaWalletId, speiAccountId } = await fiatToFiatAccounts(api, customerId);
    const fiatToFiatQuoteId = await createFiatToFiatQuote(api);
    const transaction = await call(
      api,
      {
        method: 'POST',
        path: '/v1/fiat-to-fiat',
        json: fiatToFiatBody({ approvedCustomerId: customerId, fiatToFiatQuoteId, solanaWalletId, speiAccountId }),
      },
      201,
      'fiat-to-fiat transaction',
    );
    const id = idOf(transaction);
    const { amount } = (transaction.body as { sender: { amount: string } }).sender;
    await call(
      api,
      { method: 'POST', path: `/v1/sandbox/transactions/${id}/deposit`, json: { amount } },
      201,
      'deposit',
    );
    const completed = await waitUntil(
      async () => {
        const current = await api.send({ method: 'GET', path: `/v1/transactions/${id}` });
        return current.kind === 'response' && (current.body as { status?: string }).status === 'completed';
      },
      120_000,
      500,
    );
    expect(completed).toBe(true);

    // What docs/operations.md tells the operator to type: the transaction id as ResourceId.
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    const query = encodeURIComponent(`ResourceId="${id}"`);
    await page.goto(`${uiUrl}/namespaces/default/workflows?query=${query}`);
    const legs = [
      workflowIds.transactionLeg(id, 'fiat-to-stablecoin'),
      workflowIds.transactionLeg(id, 'stablecoin-to-fiat'),
    ];
    // The list shows the settlement and its two legs (each carries the transaction's search attributes).
    for (const workflowId of [workflowIds.transaction(id), ...legs])
      await page.getByText(workflowId, { exact: true }).first().waitFor({ timeout: 60_000 });
    expect(await page.getByText(`${workflowIds.transaction(id)}-`).count()).toBeGreaterThanOrEqual(2);
    mkdirSync(testArtifactsDir, { recursive: true });
    await page.screenshot({ path: path.join(testArtifactsDir, 'temporal-ui-settlement.png') });

    await page.close();
  });
});
