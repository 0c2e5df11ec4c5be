// What each process starts for observability (docs/observability.md): metrics endpoint, database and pool gauges,
// OTLP tracing. Each part is off unless configured.
import type { AppConfig } from '../config';
import type { Logger } from '../logger';
import type { DatabaseClient } from '../persistence/database';
import { startMetricsServer } from './metrics-server';
import { registerDatabaseGauges, registerPoolGauges } from './observe';
import { startTracing } from './tracing';

export interface ProcessObservability {
  /** Exports the spans left and closes the metrics endpoint. */
  shutdown(): Promise<void>;
}

/**
 * Starts tracing and the metrics endpoint of the API or the worker. Call before the Temporal client and worker are
 * made (their interceptors follow the tracing started here). The worker also serves the database gauges and the
 * Temporal SDK's metrics.
 */
export async function startObservability(
  config: AppConfig,
  logger: Logger,
  prisma: DatabaseClient,
  role: 'api' | 'worker',
): Promise<ProcessObservability> {
  const tracing = startTracing(config, role === 'api' ? 'payments-api' : 'payments-worker');
  const settings = config.observability.metrics;
  registerPoolGauges(role, prisma);
  if (role === 'worker') registerDatabaseGauges(prisma);
  const server = settings
    ? await startMetricsServer({
        port: settings.port,
        host: settings.host,
        logger,
        ...(role === 'worker' ? { temporalSdkUrl: `http://127.0.0.1:${settings.temporalSdkPort}/metrics` } : {}),
      })
    : null;
  if (tracing) logger.info({ endpoint: config.observability.tracing?.otlpEndpoint }, 'exporting traces over OTLP');
  return {
    async shutdown() {
      await server?.close();
      await tracing?.shutdown();
    },
  };
}
