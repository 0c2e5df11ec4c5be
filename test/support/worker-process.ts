// A Temporal worker in an OS process of its own, for the worker-kill test: configured from the environment and
// built like src/worker.ts builds it (createWorker, the real activities and providers, the pre-built workflow
// bundle of WORKFLOW_BUNDLE_PATH), minus what belongs to the test's harness (the relays, scoped there to the test's
// partners) and what the time-skipping test server cannot host (the maintenance Schedule; sticky queues that time
// out, hence no workflow cache). Prints `worker-ready` once it polls.
// Run: node --import tsx test/support/worker-process.ts
import '../../src/observability/instrument'; // as src/worker.ts: tracing's patches first, when configured
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { flushCompileCache } from 'node:module';
import { createActivities } from '../../activities';
import { loadConfig } from '../../src/config';
import { createPrismaClient } from '../../src/persistence/internal/database';
import { createLogger } from '../../src/logger';
import { createProviders } from '../../src/providers';
import { createWorker } from '../../src/temporal/worker';
import { startObservability } from '../../src/observability';
import { registerScreeningReviewGauges } from '../../src/temporal/screening-reviews';
import { temporalRuntimeTelemetry, withTemporalSdkMetricsPort } from '../../src/observability/temporal';

async function main(): Promise<void> {
  const config = await withTemporalSdkMetricsPort(loadConfig());
  const telemetryOptions = temporalRuntimeTelemetry(config);
  Runtime.install({ logger: new DefaultLogger('ERROR'), ...(telemetryOptions ? { telemetryOptions } : {}) });
  const logger = createLogger(config.logLevel, { process: 'test-worker' });
  const prisma = createPrismaClient(config.databaseUrl, {
    role: 'worker',
    poolSize: 5,
    timeouts: config.database,
  });
  await startObservability(config, logger, prisma, 'worker');
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const worker = await createWorker({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    activities: createActivities({ config, prisma, logger, ...createProviders(config, prisma) }),
    workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH,
    maxCachedWorkflows: 0,
  });
  // The review queue's gauges, as src/worker.ts registers them (read from Temporal's visibility when scraped).
  const clientConnection = await Connection.connect({ address: config.temporal.address });
  registerScreeningReviewGauges(new Client({ connection: clientConnection, namespace: config.temporal.namespace }));
  const running = worker.run();
  // Node's compile cache, when NODE_COMPILE_CACHE turns it on (the test and chaos runs), written now: Node
  // writes it at exit, which a killed process never reaches, so every restart would compile its code again.
  flushCompileCache();
  process.stdout.write('worker-ready\n');
  await running;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
