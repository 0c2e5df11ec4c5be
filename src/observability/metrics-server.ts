// GET /metrics on a port of its own (METRICS_PORT), never on the partner API. The worker's also carries the Temporal
// SDK runtime's metrics, read from its loopback exporter, so that each process is one scrape target.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics } from 'prom-client';
import type { Logger } from '../logger';
import { enableMetrics, registry } from './metrics';

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

export interface MetricsServerOptions {
  port: number;
  host: string;
  logger: Logger;
  /** The Temporal SDK's exporter (worker): its text is appended to ours. */
  temporalSdkUrl?: string;
}

async function temporalSdkMetrics(url: string): Promise<string> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return response.ok ? await response.text() : `# Temporal SDK metrics: HTTP ${response.status}\n`;
  } catch {
    return '# Temporal SDK metrics: not reachable\n';
  }
}

export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  enableMetrics();
  collectDefaultMetrics({ register: registry }); // process CPU, memory, event-loop delay, GC
  const server = http.createServer((request, response) => {
    if (request.method !== 'GET' || !/^\/metrics(\?|$)/.test(request.url ?? '')) {
      response.writeHead(404).end();
      return;
    }
    Promise.all([registry.metrics(), options.temporalSdkUrl ? temporalSdkMetrics(options.temporalSdkUrl) : ''])
      .then(([ours, sdk]) => {
        response.writeHead(200, { 'Content-Type': registry.contentType }).end(sdk ? `${ours}\n${sdk}` : ours);
      })
      .catch((error: unknown) => {
        options.logger.warn({ err: error }, 'metrics scrape failed');
        response.writeHead(503).end();
      });
  });
  // A scraper keeps its connection between scrapes and closes it when idle by its own clock: the server waits longer
  // (Node's default is 5 s), so a scrape never goes out on a socket the server has just closed (seen as "other side
  // closed" on a loaded machine, whose timers run late).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  options.logger.info({ port, host: options.host }, 'metrics listening');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections(); // the kept-alive scrape connections do not hold the close
      }),
  };
}
