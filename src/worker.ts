// Production entry point of the Temporal worker: `node dist/src/worker.js`. Configured by
// environment only. On SIGTERM/SIGINT the SDK stops polling and lets running tasks finish.
import './observability/instrument'; // first: patches http and pg as they load, when tracing is configured
import { DefaultLogger, LogLevel, NativeConnection, Runtime } from '@temporalio/worker';
import { existsSync } from 'node:fs';
import { flushCompileCache } from 'node:module';
import path from 'node:path';
import { createActivities } from '../activities';
import { loadConfig, runEntryPoint } from './config';
import { createPrismaClient, closeDatabaseClient } from './persistence/database';
import { createLogger, Logger } from './logger';
import { createProviders, logProductionReadiness } from './providers';
import { temporalTlsOptions } from './temporal/tls';
import { connectTemporalClient, ensureMaintenanceSchedule, ensureSearchAttributes } from './temporal/client';
import { ensureReconciliationSchedule } from './temporal/reconciliation-schedule';
import { ensureChainWatchers } from './temporal/chain-watchers';
import { ensureBankReportReaders } from './temporal/bank-reports';
import { createBankReportIntake } from './services/transactions/bank-reports';
import { ensureScreeningScheduleAtStart } from './temporal/screening-schedule';
import { registerScreeningReviewGauges } from './temporal/screening-reviews';
import { WorkflowStartRelay } from './temporal/workflow-start-relay';
import { createWorker } from './temporal/worker';
import { OutboxRelay } from './webhooks/outbox-relay';
import { encryptLegacyWebhookSecrets } from './services/webhooks';
import { secretBoxOf } from './domain/secret-box';
import { startObservability } from './observability';
import { temporalRuntimeTelemetry, withTemporalSdkMetricsPort } from './observability/temporal';
import type { AppConfig } from './config';

/** Where `npm run build` writes the pre-bundled workflow code. */
export const builtWorkflowBundle = path.resolve(__dirname, '..', 'workflow-bundle.js');

function sdkLogLevel(level: string): LogLevel {
  const levels: Record<string, LogLevel> = {
    trace: 'TRACE',
    debug: 'DEBUG',
    info: 'INFO',
    warn: 'WARN',
    error: 'ERROR',
  };
  return levels[level] ?? 'WARN';
}

/** The SDK runtime: its logs through ours, and its own Prometheus metrics when METRICS_PORT is set. */
function installSdkRuntime(logger: Logger, config: AppConfig): void {
  const telemetryOptions = temporalRuntimeTelemetry(config);
  Runtime.install({
    ...(telemetryOptions ? { telemetryOptions } : {}),
    logger: new DefaultLogger(sdkLogLevel(config.logLevel), (entry) => {
      const method =
        entry.level === 'TRACE' ? 'trace' : (entry.level.toLowerCase() as 'debug' | 'info' | 'warn' | 'error');
      logger[method]({ ...entry.meta, sdk: true }, entry.message);
    }),
  });
}

async function main(): Promise<void> {
  const config = await withTemporalSdkMetricsPort(loadConfig());
  const logger = createLogger(config.logLevel, { process: 'worker', app_env: config.appEnv }, config.logFormat);
  installSdkRuntime(logger, config);
  const prisma = createPrismaClient(config.databaseUrl, {
    role: 'worker',
    timeouts: config.database,
    // The activity that used the connection fails and is retried; this says why in the log.
    onConnectionError: (error) => logger.warn({ err: error }, 'database connection lost'),
  });
  const providers = createProviders(config, prisma);
  logProductionReadiness(config, providers, logger);
  const observability = await startObservability(config, logger, prisma, 'worker');
  const connection = await NativeConnection.connect({
    address: config.temporal.address,
    tls: temporalTlsOptions(config.temporal.tls),
  });
  await ensureSearchAttributes(connection.operatorService, config.temporal.namespace).catch((error: unknown) =>
    logger.warn(
      { err: error },
      'could not register search attributes; register them with `temporal operator search-attribute create`',
    ),
  );
  // Before the worker: the bank-reports activity records deposits and returns through the client (workflow updates).
  const temporalClient = await connectTemporalClient(config.temporal);
  const bankIntake = createBankReportIntake({ prisma, temporal: temporalClient.client, logger, config });
  const worker = await createWorker({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    activities: createActivities({ config, prisma, logger, ...providers, bankIntake }),
    workflowBundlePath:
      config.workflowBundlePath ?? (existsSync(builtWorkflowBundle) ? builtWorkflowBundle : undefined),
    maxConcurrentActivities: config.worker.maxConcurrentActivities,
    maxCachedWorkflows: config.worker.maxCachedWorkflows,
  });
  // The outbox relay hands committed webhook deliveries to Temporal (src/webhooks/outbox-relay.ts).
  const relay = new OutboxRelay({
    prisma,
    temporal: temporalClient.client,
    taskQueue: config.temporal.taskQueue,
    databaseUrl: config.databaseUrl,
    connectionRole: 'worker',
    logger: logger.child({ component: 'outbox-relay' }),
    sweepIntervalMs: config.webhooks.relaySweepSeconds * 1000,
    retrySchedule: config.webhooks.retry,
  });
  await relay.start();
  await encryptLegacyWebhookSecrets(prisma, secretBoxOf(config)); // secrets saved before encryption at rest
  // The reconciler of the write path: starts workflows whose intents committed but were not started.
  const startRelay = new WorkflowStartRelay({
    prisma,
    temporal: temporalClient.client,
    taskQueue: config.temporal.taskQueue,
    logger: logger.child({ component: 'workflow-start-relay' }),
    sweepIntervalMs: config.workflowStartSweepSeconds * 1000,
    minAgeMs: config.requestTimeoutMs,
  });
  startRelay.start();
  await ensureMaintenanceSchedule(temporalClient.client, config.temporal.taskQueue);
  await ensureReconciliationSchedule(temporalClient.client, config.temporal.taskQueue);
  await ensureChainWatchers(temporalClient.client, config, config.temporal.taskQueue);
  await ensureBankReportReaders(temporalClient.client, config, config.temporal.taskQueue);
  await ensureScreeningScheduleAtStart(temporalClient.client, config.temporal.taskQueue, config.screening);
  registerScreeningReviewGauges(temporalClient.client);
  // Node's compile cache, when NODE_COMPILE_CACHE turns it on (the test and chaos runs), written now: Node
  // writes it at exit, which a killed process never reaches, so every restart would compile its code again.
  flushCompileCache();
  logger.info({ taskQueue: config.temporal.taskQueue, namespace: config.temporal.namespace }, 'worker running');
  await worker.run();
  await startRelay.stop();
  await relay.stop();
  await temporalClient.connection.close();
  await closeDatabaseClient(prisma);
  await connection.close();
  await observability.shutdown();
  logger.info('worker stopped');
}

runEntryPoint('worker', main);
