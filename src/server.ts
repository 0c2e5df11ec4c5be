// Production entry point of the HTTP API: `node dist/src/server.js`. Configured by environment only.
import './observability/instrument'; // first: patches http and pg as they load, when tracing is configured
import type { Server } from 'node:http';
import { flushCompileCache } from 'node:module';
import { loadConfig, runEntryPoint } from './config';
import { createPrismaClient, closeDatabaseClient } from './persistence/database';
import { answerUnparsableRequests, createApp } from './http/app';
import { createLogger } from './logger';
import { createProviders, logProductionReadiness } from './providers';
import { LocalDiskDocumentStore } from './storage/document-store';
import { lazyTemporalClient } from './temporal/client';
import { startObservability } from './observability';
import { closeEventStreams } from './services/event-stream';
import { ApiPixDepositProvider } from './providers/pix/collections';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { process: 'api', app_env: config.appEnv }, config.logFormat);
  const prisma = createPrismaClient(config.databaseUrl, {
    role: 'api',
    timeouts: config.database,
    // The request that used the connection answers 503; this says why in the log.
    onConnectionError: (error) => logger.warn({ err: error }, 'database connection lost'),
  });
  const providers = createProviders(config, prisma);
  logProductionReadiness(config, providers, logger);
  const observability = await startObservability(config, logger, prisma, 'api');
  // Connects on first use: the API starts (and answers /health/ready 503) while Temporal is down.
  const { client, connection } = lazyTemporalClient(config.temporal);
  const app = createApp({
    config,
    logger,
    prisma,
    temporal: client,
    documentStore: new LocalDiskDocumentStore(config.documentStorageDir),
    ...providers,
  });
  const server: Server = app.listen(config.port, () => {
    logger.info({ port: config.port, url: config.publicBaseUrl }, 'API listening');
    // Node's compile cache, when NODE_COMPILE_CACHE turns it on (the test and chaos runs), written now: Node
    // writes it at exit, which a killed process never reaches, so every restart would compile its code again.
    flushCompileCache();
  });
  answerUnparsableRequests(server);
  const pixWebhook = config.pixApi?.webhook;
  if (pixWebhook && providers.depositProvider instanceof ApiPixDepositProvider) {
    // In the background: the API answers while the bank is unreachable; the registration is logged either way.
    providers.depositProvider.registerWebhook(pixWebhook.url).then(
      () => logger.info('pix webhook registered with the bank'),
      (error: unknown) => logger.error({ err: error }, 'pix webhook not registered with the bank'),
    );
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: no new connections, finishing requests in flight');
    const forceExit = setTimeout(() => {
      logger.warn('requests still running after 25 s; exiting');
      process.exit(1);
    }, 25_000);
    forceExit.unref();
    server.close(async () => {
      await closeDatabaseClient(prisma);
      await connection.close();
      await observability.shutdown();
      logger.info('stopped');
      process.exit(0);
    });
    closeEventStreams(); // a live event stream would otherwise hold its connection until it ends
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

runEntryPoint('API', main);
