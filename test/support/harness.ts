// One test environment per test file: a time-skipping Temporal test server, a worker with the real
// activities on the shared workflow bundle, the Koa app on real PostgreSQL, and helpers to create
// partners and call the API as them.
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import TestAgent from 'supertest/lib/agent';
import { createActivities } from '../../activities';
import { AppConfig, loadConfig } from '../../src/config';
import { createPrismaClient, type PrismaDatabaseClient } from '../../src/persistence/internal/database';
import { createPartner } from '../../src/services/partners';
import { createBankReportIntake } from '../../src/services/transactions/bank-reports';
import type Koa from 'koa';
import { type AppHooks, createApp, routesOf } from '../../src/http/app';
import type { RouteDefinition } from '../../src/http/route';
import { buildOpenApiDocument } from '../../src/http/openapi';
import { allRoutes } from '../../src/routes';
import { OpenApiConformance } from './openapi-conformance';
import { createLogger } from '../../src/logger';
import { createProviders } from '../../src/providers';
import { sandboxBankProfiles } from '../../src/providers/deposit-accounts';
import type { ApiServices } from '../../src/app-services';
import { LocalDiskDocumentStore } from '../../src/storage/document-store';
import { ensureSearchAttributes } from '../../src/temporal/client';
import { createWorker } from '../../src/temporal/worker';
import { OutboxRelay } from '../../src/webhooks/outbox-relay';
import { WorkflowStartRelay } from '../../src/temporal/workflow-start-relay';
import { watchForHangs } from './hang-report';
import { SIMULATOR_ACCOUNTS_SETTING } from '../../simulators/bank/iso20022/accounts';
import { openApiDocumentCache, workflowBundlePath } from './paths';
import { claimTemporalServer } from './temporal-servers';
import { claimNamespace, devServerOfRun } from './dev-server';
import { profiled } from './profile';
import { SharedWorkflowThreadWorker } from './shared-workflow-threads';

export interface TestPartner {
  partnerId: string;
  apiKey: string;
  /** supertest agent sending this partner's key as `Authorization`. */
  api: TestAgent;
}

export interface Harness {
  config: AppConfig;
  env: TestWorkflowEnvironment;
  /** Prisma Client for the tests' assertions on rows, and the handle persistence functions take. */
  prisma: PrismaDatabaseClient;
  services: ApiServices;
  /** The webhook outbox relay, started like in the worker; it relays only this harness's partners. */
  relay: OutboxRelay;
  /** The write path's reconciler, as in the worker (not sweeping by itself: tests call `sweep`). */
  startRelay: WorkflowStartRelay;
  /** supertest agent without credentials. */
  http: TestAgent;
  createPartner(name?: string): Promise<TestPartner>;
  /** The partners made by createPartner: test files share the database, so a file reads only its own rows. */
  partnerIds: readonly string[];
  /** Every response the tests received, checked against the OpenAPI document. */
  conformance: OpenApiConformance;
  /**
   * Another app on other services or routes (src/http/app.ts createApp); with the service's own routes it takes the
   * run's shared OpenAPI document for its environment and base URL (the document depends on nothing else).
   */
  createApp(services?: ApiServices, routes?: RouteDefinition[], hooks?: AppHooks): Koa;
  teardown(): Promise<void>;
}

/** What production requires beyond the sandbox: a wallet key seed and the banks of virtual accounts. */
export const productionTestBanks = {
  usd: { ...sandboxBankProfiles.usd, bank_name: 'Production Test Bank', account_number_prefix: '5501' },
  eur: { ...sandboxBankProfiles.eur, bank_name: 'Production Test Bank Europe', bban_prefix: '50010517' },
};
/** Production refuses to start without its own seed and banks; tests supply stand-ins. */
export const productionTestSecrets = {
  WALLET_KEY_SEED: 'ab'.repeat(32),
  VIRTUAL_ACCOUNT_BANKS: JSON.stringify(productionTestBanks),
  SECRETS_ENCRYPTION_KEY: 'cd'.repeat(32),
};

function quietSdkLogs(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed by an earlier test file in this jest worker process.
  }
}

/**
 * The SDK's one way to a time-skipping environment on a server it did not start (createFromExistingServer turns time
 * skipping off). `create` is private in its types only; the pinned SDK version is the one checked by every harness.
 */
const connectTimeSkipping = (
  TestWorkflowEnvironment as unknown as {
    create(options: {
      server: { type: 'existing' };
      address: string;
      namespace: string;
      supportsTimeSkipping: true;
    }): Promise<TestWorkflowEnvironment>;
  }
).create.bind(TestWorkflowEnvironment);

/**
 * The harness's own time-skipping server: a pooled one, started ahead of need (temporal-servers.ts), or else one the
 * SDK starts. The SDK gives the Java test server 5 s to open its port; a machine busy compiling can miss that, so
 * such a start that timed out is tried again (three times at most) instead of failing the whole file.
 */
async function startTimeSkippingServer(): Promise<{ env: TestWorkflowEnvironment; release(): Promise<void> }> {
  const pooled = await claimTemporalServer();
  if (pooled) {
    try {
      const env = await connectTimeSkipping({
        server: { type: 'existing' },
        address: pooled.address,
        namespace: 'default',
        supportsTimeSkipping: true,
      });
      return { env, release: pooled.release };
    } catch (error) {
      await pooled.release();
      throw error;
    }
  }
  const testServerPath = process.env.TEMPORAL_TEST_SERVER_PATH;
  for (let attempt = 1; ; attempt += 1) {
    try {
      const env = await TestWorkflowEnvironment.createTimeSkipping(
        testServerPath ? { server: { executable: { type: 'existing-path', path: testServerPath } } } : {},
      );
      return { env, release: () => Promise.resolve() };
    } catch (error) {
      if (attempt >= 4 || !/did not start within/.test(String((error as Error).message))) throw error;
    }
  }
}

/**
 * The OpenAPI document the responses are checked against. Building it takes 0.5-1 s of CPU (zod to JSON Schema for
 * every route), in every test file; the code cannot change during a jest run, so the first file to need a document
 * (per environment and base URL) writes it for the others. The global set-up empties the folder at each run's start.
 */
function openApiDocumentOf(config: AppConfig): object {
  const key = createHash('sha256').update(`${config.appEnv} ${config.publicBaseUrl}`).digest('hex').slice(0, 16);
  const file = path.join(openApiDocumentCache, `${key}.json`);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as object;
  } catch {
    // Not written yet in this run.
  }
  const document = buildOpenApiDocument(routesOf(allRoutes, config.appEnv), config);
  // Written whole under another name and renamed: a file reading it at the same time sees all of it or nothing.
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, JSON.stringify(document));
  renameSync(partial, file);
  return document;
}

/**
 * The file's Temporal: a time-skipping server of its own, or with `realTime` a namespace of its own on the run's dev
 * server (dev-server.ts); a time-skipping server too when the run has no dev server (jest started without `npm test`,
 * or TEST_NO_DEV_SERVER=1).
 */
async function startTemporal(realTime: boolean): Promise<{ env: TestWorkflowEnvironment; release(): Promise<void> }> {
  const dev = realTime ? devServerOfRun() : undefined;
  if (!dev) return startTimeSkippingServer();
  const namespace = await claimNamespace(dev);
  const env = await TestWorkflowEnvironment.createFromExistingServer({ address: dev.address, namespace });
  return { env, release: () => Promise.resolve() };
}

/** Limits and bounds of every test environment: the harness's and the service processes' (service-processes.ts). */
export const testLimitsAndBounds = {
  // Test files share the database, and so the counters; the rate-limit tests set their own limits.
  RATE_LIMIT_PARTNER_REQUESTS: '100000',
  RATE_LIMIT_PUBLIC_REQUESTS: '100000',
  // Every test file calls from 127.0.0.1, and many send bad keys on purpose.
  AUTH_FAILURE_LIMIT: '100000',
  // A loaded CI machine can take seconds per workflow task; the production bounds (5 s per Temporal call,
  // 15 s per request) would turn that slowness into 503s. The outage tests set their own short bounds. With the
  // production 10 s per statement, a step waiting on a test's row lock (the worker-kill test) could be cancelled
  // before the test releases it, and then never commit while Temporal is cut off.
  TEMPORAL_CALL_TIMEOUT_SECONDS: '30',
  REQUEST_TIMEOUT_SECONDS: '60',
  DATABASE_CONNECT_TIMEOUT_SECONDS: '30',
  DATABASE_STATEMENT_TIMEOUT_SECONDS: '60',
};

/**
 * One more worker in the harness's environment, on `taskQueue` (the harness's own polls only its queue), with the
 * harness's activities, `providers` replacing some of theirs. Run it with `worker.runUntil(...)`.
 */
export function workerOnTaskQueue(
  harness: Harness,
  taskQueue: string,
  providers: Partial<ReturnType<typeof createProviders>> = {},
): Promise<Worker> {
  return createWorker({
    connection: harness.env.nativeConnection,
    namespace: harness.env.namespace ?? 'default',
    taskQueue,
    activities: createActivities({
      config: harness.config,
      prisma: harness.prisma,
      logger: createLogger('silent'),
      ...createProviders(harness.config, harness.prisma),
      ...providers,
    }),
    workflowBundlePath,
    workerClass: SharedWorkflowThreadWorker,
  });
}

/** The jest run's sandbox chain node (global-setup.ts), as the services' configuration names it; blocks are instant. */
export function testChainEnv(): Record<string, string> {
  const rpcUrl = process.env.TEST_CHAIN_RPC_URL;
  return rpcUrl ? { ETHEREUM_RPC_URL: rpcUrl, ETHEREUM_CONFIRMATIONS: '1' } : {};
}

/**
 * A file's bank simulator (test/support/bank.ts startTestBank): the sandbox's EUR (SEPA) and USD (wire) rails and
 * deposits at its ISO 20022 channel, with short waits (it settles in 300 ms), for the files that ask for it.
 */
export function testBankEnv(bankUrl: string): Record<string, string> {
  return {
    ISO20022_BANK_URL: `${bankUrl}/iso20022`,
    ISO20022_ACCOUNTS: SIMULATOR_ACCOUNTS_SETTING,
    ISO20022_SETTLE_WAIT_SECONDS: '5',
    ISO20022_REPORT_POLL_SECONDS: '1',
  };
}

export interface HarnessOptions {
  /**
   * true: the file runs in real time in a Temporal namespace of its own on the run's one dev server (dev-server.ts)
   * instead of a time-skipping test server of its own (a JVM started for the file: more CPU than the tests of most
   * files). Only for a file that neither moves the clock (`env.sleep`, `env.currentTimeMs`) nor waits on a workflow
   * across a timer or an activity's retry (the test server skips those while a test awaits a workflow result; in
   * real time they take seconds to minutes). Skipped time is global to a server, so a time-skipping server serves one
   * file.
   */
  realTime?: boolean;
  /**
   * false: no worker in this process; the test runs its own (test/support/worker-process.ts, a real OS process
   * on the harness's task queue, for the worker-kill test).
   */
  inProcessWorker?: boolean;
  /**
   * false: no chain node configured (the simulation instead), for a file whose checks would otherwise need the chain
   * watcher running on the jest run's shared node (test/chain-watcher.test.ts runs one on a node of its own).
   */
  chain?: boolean;
  /**
   * EUR and USD rails and deposits at this bank simulator (testBankEnv), in either environment. One per file, never
   * shared: every file's report reader reads all of a simulator's reports, and would record another file's credits
   * through its own Temporal, where that file's transactions do not exist.
   */
  bank?: { url: string };
}

export async function startHarness(
  overrides: Record<string, string> = {},
  options: HarnessOptions = {},
): Promise<Harness> {
  quietSdkLogs();
  // Its documents, removed by the teardown.
  const documentsDir = mkdtempSync(path.join(os.tmpdir(), 'documents-'));
  const config = loadConfig({
    ...process.env,
    APP_ENV: 'sandbox',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DOCUMENT_STORAGE_DIR: documentsDir,
    TEMPORAL_TASK_QUEUE: `test-${process.pid}-${Math.random().toString(36).slice(2)}`,
    // Test webhook receivers listen on 127.0.0.1 (a sandbox-only allowance).
    WEBHOOK_ALLOW_PRIVATE_URLS: overrides.APP_ENV === 'production' ? 'false' : 'true',
    // A key of its own per test file (the sandbox would otherwise use its public key).
    SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    ...(overrides.APP_ENV === 'production' || options.chain === false ? {} : testChainEnv()),
    ...testLimitsAndBounds,
    ...(overrides.APP_ENV === 'production' ? productionTestSecrets : {}),
    ...(options.bank ? testBankEnv(options.bank.url) : {}),
    ...overrides,
  });
  const { env, release: releaseServer } = await profiled('harness: Temporal', () =>
    startTemporal(options.realTime === true),
  );
  const unwatch = watchForHangs(env);
  const logger = createLogger(config.logLevel);
  const prisma = createPrismaClient(config.databaseUrl, { role: 'test', poolSize: 5 });
  const providers = await profiled('harness: providers', () => createProviders(config, prisma));
  const partnerIds: string[] = [];
  const relay = new OutboxRelay({
    prisma,
    temporal: env.client,
    taskQueue: config.temporal.taskQueue,
    databaseUrl: config.databaseUrl,
    connectionRole: 'test',
    logger,
    sweepIntervalMs: config.webhooks.relaySweepSeconds * 1000,
    retrySchedule: config.webhooks.retry,
    // Test files share the database, each with its own Temporal: relay only the partners created here.
    partnerIds: () => partnerIds,
  });
  const startRelay = new WorkflowStartRelay({
    prisma,
    temporal: env.client,
    taskQueue: config.temporal.taskQueue,
    logger,
    sweepIntervalMs: 3600_000,
    minAgeMs: 0,
    partnerIds: () => partnerIds,
  });
  let worker: Worker | null = null;
  try {
    await profiled('harness: search attributes', () =>
      ensureSearchAttributes(env.connection.operatorService, env.namespace ?? 'default'),
    );
    if (options.inProcessWorker !== false) {
      worker = await profiled('harness: worker', () =>
        createWorker({
          connection: env.nativeConnection,
          namespace: env.namespace ?? 'default',
          taskQueue: config.temporal.taskQueue,
          activities: createActivities({
            config,
            prisma,
            logger,
            ...providers,
            bankIntake: createBankReportIntake({ prisma, temporal: env.client, logger, config }),
          }),
          workflowBundlePath,
          maxConcurrentActivities: config.worker.maxConcurrentActivities,
          maxCachedWorkflows: config.worker.maxCachedWorkflows,
          workerClass: SharedWorkflowThreadWorker,
        }),
      );
    }
    await profiled('harness: relay', () => relay.start());
  } catch (error) {
    // Never leave the test server running: jest would wait for it forever.
    await relay.stop();
    await env.teardown();
    await releaseServer();
    await prisma.$disconnect();
    rmSync(documentsDir, { recursive: true, force: true });
    throw error;
  }
  const running = worker?.run();
  const services: ApiServices = {
    config,
    prisma,
    logger,
    temporal: env.client,
    documentStore: new LocalDiskDocumentStore(config.documentStorageDir),
    ...providers,
  };
  const openApiDocument = await profiled('harness: OpenAPI document', () => openApiDocumentOf(config));
  const conformance = new OpenApiConformance(openApiDocument as never, path.join(openApiDocumentCache, 'validators'));
  const server = await profiled('harness: app', () =>
    createApp(services, allRoutes, {
      onResponse: (ctx) => conformance.check(ctx),
      // The run's shared copy (the same routes, environment and base URL), not a second build in every file.
      openApiDocument,
    }).callback(),
  );
  const http = request.agent(server);

  return {
    config,
    env,
    prisma,
    services,
    relay,
    startRelay,
    http,
    partnerIds,
    async createPartner(name = 'Test partner') {
      const created = await createPartner(prisma, name, config.appEnv);
      partnerIds.push(created.partner_id);
      return {
        partnerId: created.partner_id,
        apiKey: created.api_key,
        api: request.agent(server).set('Authorization', created.api_key),
      };
    },
    conformance,
    createApp(appServices = services, routes = allRoutes, hooks = {}) {
      // The service's own routes: the run's shared document for the app's environment and base URL.
      const shared = routes === allRoutes ? { openApiDocument: openApiDocumentOf(appServices.config) } : {};
      return createApp(appServices, routes, { ...shared, ...hooks });
    },
    async teardown() {
      await profiled('harness: teardown', async () => {
        await startRelay.stop();
        await relay.stop();
        worker?.shutdown();
        await running;
        unwatch();
        await env.teardown();
        await releaseServer();
        await prisma.$disconnect();
        rmSync(documentsDir, { recursive: true, force: true });
      });
      if (conformance.violations.length > 0) {
        throw new Error(
          `responses that do not match the OpenAPI document:\n${conformance.violations
            .map((v) => `  ${v.route} -> ${v.status}: ${v.problem}`)
            .join('\n')}`,
        );
      }
    },
  };
}
