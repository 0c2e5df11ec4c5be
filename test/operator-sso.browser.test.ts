// Operators' single sign-on on the production topology (docs/operations.md "Operator sign-on"): the Temporal UI server
// signs people in through the OpenID Provider (scripts/lib/oidc.ts, static users), the Temporal server (built from
// ops/temporal-server) maps the ID token's `permissions` with the default claim mapper and authorizer, keeps terminate
// and reset for admins, and stamps the token's email as the identity of a person's calls. An operator's terminate
// (from the UI, and with tokens signed by the provider's key) and reset are refused, an admin's terminate goes through
// under the admin's email. In headless Chromium: a viewer finds a settlement in `error` by its transaction id and is
// refused the operator's update; an operator refunds it through the same form while typing a colleague's name; the
// audit trail names the signed-in operator. Screenshots in test-artifacts/.
//
// Needs the Temporal server's binaries and skips without them, as test/production-stack.browser.test.ts does (CI
// builds them and fails the test when they are missing).
import { Client, Connection } from '@temporalio/client';
import { execFileSync } from 'node:child_process';
import { createPrivateKey, createSign, type JsonWebKey } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Browser, type Page } from 'playwright-core';
import { auditLines } from '../scripts/audit';
import {
  approvedCustomer,
  call,
  createFiatToFiatQuote,
  fiatToFiatAccounts,
  fiatToFiatBody,
  idOf,
} from '../scripts/chaos/fixtures';
import { HttpClient } from '../scripts/chaos/http';
import { serviceRoleUrl } from '../scripts/lib/database';
import { rolePermissions, type StaticUser, userByRole } from '../scripts/lib/oidc';
import { freePort } from '../scripts/lib/ports';
import { type ProductionEngine, startProductionEngine } from '../scripts/lib/production';
import { tsEntry } from '../scripts/lib/entry-points';
import { Stack } from '../scripts/lib/stack';
import { temporalClientTls, temporalClientTlsEnv, type TemporalServerBinaries } from '../scripts/lib/temporal-server';
import { waitUntil } from '../scripts/lib/wait';
import { createPrismaClient } from '../src/persistence/internal/database';
import { listOperatorActions } from '../src/persistence/operator-actions';
import { createPartner } from '../src/services/partners';
import { temporalTlsOptions } from '../src/temporal/tls';
import { workflowIds } from '../src/temporal/workflow-ids';
import { launchChromium } from './support/browser';
import { projectRoot, testArtifactsDir, workflowBundlePath } from './support/paths';

const dataDir = path.join(projectRoot, '.data', 'operator-sso-test');

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
    'operator-sso.browser.test.ts skipped: no Temporal server binaries yet; `bash scripts/temporal-binaries.sh server` builds them (about 5 minutes, once)',
  );

describeWithServer('operators sign in to the Temporal UI', () => {
  let stack: Stack;
  let engine: ProductionEngine;
  let browser: Browser;
  let uiUrl: string;
  let api: HttpClient;
  let transactionId: string;

  beforeAll(async () => {
    stack = new Stack({ logs: path.join(dataDir, 'logs') });
    const uiPort = await freePort();
    engine = await startProductionEngine(stack, {
      dataDir,
      database: 'payments',
      fresh: true,
      uiPort,
      binaries: Promise.resolve(binaries),
      tls: true,
      signOn: true,
    });
    uiUrl = engine.signOn!.uiUrl!;
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
      api = api.with({ Authorization: (await createPartner(prisma, 'SSO test partner', 'sandbox')).api_key });
    } finally {
      await prisma.$disconnect();
    }

    // A settlement whose payout failed: it waits in `error` for an operator's resolveError.
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
    transactionId = idOf(transaction);
    const { amount } = (transaction.body as { sender: { amount: string } }).sender;
    await call(
      api,
      {
        method: 'POST',
        path: `/v1/sandbox/transactions/${transactionId}/deposit`,
        json: { amount, simulate: 'payout_error' },
      },
      201,
      'deposit',
    );
    // Its payout's retries run out in real time: the tests that do not need it run meanwhile, the viewer's waits.
    browser = await launchChromium();
  }, 400_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  }, 120_000);

  function waitForStatus(status: string): Promise<boolean> {
    return waitUntil(
      async () => {
        const current = await api.send({ method: 'GET', path: `/v1/transactions/${transactionId}` });
        return current.kind === 'response' && (current.body as { status?: string }).status === status;
      },
      120_000,
      500,
    );
  }

  /** A fresh browser session that opens `path` on the UI and signs in on the provider's page as `email`. */
  async function signedIn(email: string, pathAndQuery: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${uiUrl}${pathAndQuery}`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(engine.signOn!.provider.userPassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.href.startsWith(uiUrl) && !url.pathname.startsWith('/login'), {
      timeout: 60_000,
    });
    return page;
  }

  /** The UI's own form: More Actions, Send an Update, resolveError with `data`. Answers the UI server's status. */
  async function sendResolveError(page: Page, updateId: string, data: string): Promise<number> {
    await page.getByRole('button', { name: 'More Actions' }).click();
    await page.getByRole('menuitem', { name: 'Send an Update' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByTestId('update-select-button').click();
    await dialog.getByRole('option', { name: 'resolveError' }).click();
    await dialog.locator('.cm-content').first().click();
    await page.keyboard.type(data);
    // Leaving the editor is what hands its text to the form.
    await dialog.getByTestId('update-id').fill(updateId);
    const sent = page.waitForResponse(
      (response) => response.url().includes('/update/resolveError') && response.request().method() === 'POST',
      { timeout: 60_000 },
    );
    await dialog.getByRole('button', { name: 'Submit' }).click();
    return (await sent).status();
  }

  const settlementPath = () => `/namespaces/default/workflows/${workflowIds.transaction(transactionId)}`;

  it('refuses the public frontend to a client with a certificate but no token', async () => {
    const connection = await Connection.connect({
      address: stack.temporalFrontendAddress!,
      tls: temporalTlsOptions(temporalClientTls(engine.tls!, 'ui')),
    });
    try {
      await expect(connection.workflowService.describeNamespace({ namespace: 'default' })).rejects.toMatchObject({
        code: 7, // PERMISSION_DENIED
      });
    } finally {
      await connection.close();
    }
  });

  /**
   * An ID token as the provider issues it to the UI (signed with the provider's key, which the server fetches from its
   * JWKS): what the UI forwards as the bearer of a person's calls, here sent without the UI.
   */
  function idTokenOf(user: StaticUser): string {
    const provider = engine.signOn!.provider;
    const { keys } = JSON.parse(readFileSync(path.join(provider.stateDir, 'jwks.json'), 'utf8')) as {
      keys: (JsonWebKey & { kid: string })[];
    };
    const key = keys[0]!;
    const now = Math.floor(Date.now() / 1000);
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const unsigned = `${part({ alg: 'RS256', typ: 'JWT', kid: key.kid })}.${part({
      iss: provider.issuer,
      aud: provider.clientId,
      sub: user.sub,
      email: user.email,
      permissions: [...new Set(user.roles.flatMap((role) => rolePermissions[role]))],
      iat: now,
      exp: now + 600,
    })}`;
    const signature = createSign('RSA-SHA256')
      .update(unsigned)
      .sign(createPrivateKey({ key, format: 'jwk' }));
    return `${unsigned}.${signature.toString('base64url')}`;
  }

  /** A client of the public frontend as `user`, claiming another identity than its token's. */
  async function clientAs(user: StaticUser): Promise<{ client: Client; close: () => Promise<void> }> {
    const connection = await Connection.connect({
      address: stack.temporalFrontendAddress!,
      tls: temporalTlsOptions(temporalClientTls(engine.tls!, 'ui')),
      metadata: { authorization: `Bearer ${idTokenOf(user)}` },
    });
    return { client: new Client({ connection, identity: 'typed-by-the-caller' }), close: () => connection.close() };
  }

  it("refuses an operator's terminate and allows an admin's, recorded under the admin's email", async () => {
    // A second settlement, waiting for its deposit: its workflow runs.
    const customerId = await approvedCustomer(api);
    const { solanaWalletId, speiAccountId } = await fiatToFiatAccounts(api, customerId);
    const fiatToFiatQuoteId = await createFiatToFiatQuote(api);
    const waiting = idOf(
      await call(
        api,
        {
          method: 'POST',
          path: '/v1/fiat-to-fiat',
          json: fiatToFiatBody({ approvedCustomerId: customerId, fiatToFiatQuoteId, solanaWalletId, speiAccountId }),
        },
        201,
        'fiat-to-fiat transaction',
      ),
    );
    const workflowId = workflowIds.transaction(waiting);

    // In the UI: the operator's Terminate is refused by the server.
    const page = await signedIn(userByRole('operator').email, `/namespaces/default/workflows/${workflowId}`);
    await page.getByText('settlementWorkflow').first().waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'More Actions' }).click();
    await page.getByRole('menuitem', { name: 'Terminate' }).click();
    const modal = page.getByTestId('terminate-confirmation-modal');
    await modal.getByRole('textbox').first().fill('operator tries');
    const refused = page.waitForResponse(
      (response) => response.url().includes('/terminate') && response.request().method() === 'POST',
      { timeout: 60_000 },
    );
    await modal.getByRole('button', { name: 'Terminate' }).click();
    expect((await refused).status()).toBe(403);
    await modal.getByText('Request unauthorized.').waitFor({ timeout: 30_000 });
    mkdirSync(testArtifactsDir, { recursive: true });
    await page.screenshot({ path: path.join(testArtifactsDir, 'operator-sso-terminate-refused.png'), timeout: 60_000 });
    await page.context().close();

    const operator = await clientAs(userByRole('operator'));
    try {
      const handle = operator.client.workflow.getHandle(workflowId);
      // The operator may read it (and send updates, above), not end it.
      expect((await handle.describe()).status.name).toBe('RUNNING');
      // PERMISSION_DENIED, from the server (the SDK wraps it).
      await expect(handle.terminate('operator tries')).rejects.toMatchObject({ cause: { code: 7 } });
      await expect(
        operator.client.workflowService.resetWorkflowExecution({
          namespace: 'default',
          workflowExecution: { workflowId },
          reason: 'operator tries',
          requestId: 'reset-by-operator',
        }),
      ).rejects.toMatchObject({ code: 7 }); // refused before the request is read (it names no event to reset to)
      expect((await handle.describe()).status.name).toBe('RUNNING');
    } finally {
      await operator.close();
    }

    const admin = userByRole('admin');
    const adminClient = await clientAs(admin);
    try {
      const handle = adminClient.client.workflow.getHandle(workflowId);
      await handle.terminate('admin ends it');
      expect((await handle.describe()).status.name).toBe('TERMINATED');
      const { events } = await handle.fetchHistory();
      const terminated = events!.find((event) => event.workflowExecutionTerminatedEventAttributes);
      expect(terminated?.workflowExecutionTerminatedEventAttributes?.identity).toBe(admin.email);
    } finally {
      await adminClient.close();
    }
  });

  it("lets a viewer find the settlement and refuses them the operator's update", async () => {
    const viewer = userByRole('viewer');
    // What docs/operations.md tells the operator to type: the transaction id as ResourceId.
    const query = encodeURIComponent(`ResourceId="${transactionId}"`);
    const page = await signedIn(viewer.email, `/namespaces/default/workflows?query=${query}`);
    await page.getByText(workflowIds.transaction(transactionId), { exact: true }).first().waitFor({ timeout: 60_000 });
    expect(await waitForStatus('error')).toBe(true);
    await page.goto(`${uiUrl}${settlementPath()}`);
    await page.getByText('settlementWorkflow').first().waitFor({ timeout: 60_000 });
    expect(await sendResolveError(page, 'refund-by-viewer', '{"action": "refund", "reason": "viewer tries"}')).toBe(
      403,
    );
    await page.getByRole('dialog').getByText('Request unauthorized.').waitFor({ timeout: 30_000 });
    mkdirSync(testArtifactsDir, { recursive: true });
    await page.screenshot({ path: path.join(testArtifactsDir, 'operator-sso-viewer-refused.png'), timeout: 60_000 });
    await page.context().close();
    const current = await api.send({ method: 'GET', path: `/v1/transactions/${transactionId}` });
    expect(current.kind === 'response' && (current.body as { status?: string }).status).toBe('error');
  }, 180_000); // it waits for the payout's retries to run out, in real time

  it('lets an operator refund it, and the audit trail names the operator', async () => {
    const operator = userByRole('operator');
    const page = await signedIn(operator.email, settlementPath());
    await page.getByText('settlementWorkflow').first().waitFor({ timeout: 60_000 });
    // The UI (2.54) sends no identity with an update, and the form lets anyone type any name: the server stamps the
    // signed-in person's email over it, the typed name is kept as what was stated.
    const typed = 'someone.else@example.com';
    const data = JSON.stringify({ action: 'refund', operator: typed, reason: 'ticket OPS-77' });
    expect(await sendResolveError(page, 'refund-by-operator', data)).toBe(200);
    expect(await waitForStatus('refunded')).toBe(true);
    await page.reload();
    await page.getByText('COMPLETED').first().waitFor({ timeout: 60_000 });
    mkdirSync(testArtifactsDir, { recursive: true });
    await page.screenshot({ path: path.join(testArtifactsDir, 'operator-sso-operator-refund.png'), timeout: 60_000 });
    await page.context().close();

    const prisma = createPrismaClient(engine.database.url, { role: 'test', poolSize: 1 });
    try {
      const rows = await listOperatorActions(prisma, { resourceId: transactionId });
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        updateId: 'refund-by-operator',
        action: 'refund',
        operator: operator.email,
        reason: 'ticket OPS-77',
        details: expect.objectContaining({ stated_operator: typed }),
      });
      expect(auditLines(rows)[1]).toContain(`${operator.email}\trefund\ttransaction ${transactionId}`);
    } finally {
      await prisma.$disconnect();
    }
  });
});
