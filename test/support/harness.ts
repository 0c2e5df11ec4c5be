// One test environment per test file: a time-skipping Temporal test server, a worker with the real
// activities on the shared workflow bundle, the Koa app on real PostgreSQL, and helpers to create
// partners and call the API as them.
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import TestAgent from 'supertest/lib/agent';
import { createActivities } from '../../activities';
import { AppConfig, loadConfig } from '../../src/config';
import { createPrismaClient, PrismaClient } from '../../src/db';
import { createPartner } from '../../src/domain/partners';
import { createApp } from '../../src/http/app';
import { createLogger } from '../../src/logger';
import { createProviders } from '../../src/providers';
import { sandboxBankProfiles } from '../../src/providers/deposit-accounts';
import type { ApiServices } from '../../src/services';
import { LocalDiskDocumentStore } from '../../src/storage/document-store';
import { ensureSearchAttributes } from '../../src/temporal/client';
import { createWorker } from '../../src/temporal/worker';
import { workflowBundlePath } from './paths';

export interface TestPartner {
  partnerId: string;
  apiKey: string;
  /** supertest agent sending this partner's key as `Authorization`. */
  api: TestAgent;
}

export interface Harness {
  config: AppConfig;
  env: TestWorkflowEnvironment;
  prisma: PrismaClient;
  services: ApiServices;
  /** supertest agent without credentials. */
  http: TestAgent;
  createPartner(name?: string): Promise<TestPartner>;
  teardown(): Promise<void>;
}

/** What production requires beyond the sandbox: a wallet key seed and the banks of virtual accounts. */
export const productionTestBanks = {
  usd: { ...sandboxBankProfiles.usd, bank_name: 'Production Test Bank', account_number_prefix: '5501' },
  eur: { ...sandboxBankProfiles.eur, bank_name: 'Production Test Bank Europe', bban_prefix: '50010517' },
};
const productionTestSecrets = {
  WALLET_KEY_SEED: 'ab'.repeat(32),
  VIRTUAL_ACCOUNT_BANKS: JSON.stringify(productionTestBanks),
};

function quietSdkLogs(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed by an earlier test file in this jest worker process.
  }
}

export async function startHarness(overrides: Record<string, string> = {}): Promise<Harness> {
  quietSdkLogs();
  const config = loadConfig({
    ...process.env,
    APP_ENV: 'sandbox',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DOCUMENT_STORAGE_DIR: mkdtempSync(path.join(os.tmpdir(), 'documents-')),
    TEMPORAL_TASK_QUEUE: `test-${process.pid}-${Math.random().toString(36).slice(2)}`,
    ...(overrides.APP_ENV === 'production' ? productionTestSecrets : {}),
    ...overrides,
  });
  const testServerPath = process.env.TEMPORAL_TEST_SERVER_PATH;
  const env = await TestWorkflowEnvironment.createTimeSkipping(
    testServerPath ? { server: { executable: { type: 'existing-path', path: testServerPath } } } : {},
  );
  const logger = createLogger(config.logLevel);
  const prisma = createPrismaClient(config.databaseUrl, { poolSize: 5 });
  const providers = createProviders(config);
  let worker: Worker;
  try {
    await ensureSearchAttributes(env.connection.operatorService, env.namespace ?? 'default');
    worker = await createWorker({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue: config.temporal.taskQueue,
      activities: createActivities({ config, prisma, logger, ...providers }),
      workflowBundlePath,
    });
  } catch (error) {
    // Never leave the test server running: jest would wait for it forever.
    await env.teardown();
    await prisma.$disconnect();
    throw error;
  }
  const running = worker.run();
  const services: ApiServices = {
    config,
    prisma,
    logger,
    temporal: env.client,
    documentStore: new LocalDiskDocumentStore(config.documentStorageDir),
    ...providers,
  };
  const server = createApp(services).callback();
  const http = request.agent(server);

  return {
    config,
    env,
    prisma,
    services,
    http,
    async createPartner(name = 'Test partner') {
      const created = await createPartner(prisma, name, config.appEnv);
      return {
        partnerId: created.partner_id,
        apiKey: created.api_key,
        api: request.agent(server).set('Authorization', created.api_key),
      };
    },
    async teardown() {
      worker.shutdown();
      await running;
      await env.teardown();
      await prisma.$disconnect();
    },
  };
}
