// Temporal and observability: the client's interceptors (call outcomes as metrics; trace context into workflows),
// the worker's (activity spans, the sink workflow spans leave the sandbox by) and the SDK runtime's own Prometheus
// exporter. The workflow half of the tracing interceptors is bundled with the workflow code (workflowTracingModule).
import type { WorkflowClientInterceptor } from '@temporalio/client';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { TelemetryOptions, WorkerOptions } from '@temporalio/worker';
import net from 'node:net';
import path from 'node:path';
import type { AppConfig } from '../config';
import { isTemporalUnavailable } from '../temporal/errors';
import { type TemporalCallOutcome, temporalClientCalls } from './metrics';
import { activeTracing, disabledTracing } from './tracing';

/** The workflow interceptors of tracing, part of every workflow bundle (scripts/bundle-workflows.ts). */
export const workflowTracingModule = path.join(__dirname, 'workflow-interceptors');

const GRPC_DEADLINE_EXCEEDED = 4;

function outcomeOf(error: unknown): TemporalCallOutcome {
  for (let current: unknown = error, depth = 0; current && depth < 6; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (code === GRPC_DEADLINE_EXCEEDED || /deadline/i.test((current as Error).message ?? '')) return 'deadline';
    current = (current as { cause?: unknown }).cause;
  }
  return isTemporalUnavailable(error) ? 'unavailable' : 'rejected';
}

async function counted<T>(operation: string, call: () => Promise<T>): Promise<T> {
  try {
    const result = await call();
    temporalClientCalls.labels(operation, 'ok').inc();
    return result;
  } catch (error) {
    temporalClientCalls.labels(operation, outcomeOf(error)).inc();
    throw error;
  }
}

/** Counts every workflow call of a client by operation and outcome (payments_temporal_client_calls_total). */
const callMetrics: WorkflowClientInterceptor = {
  start: (input, next) => counted('start', () => next(input)),
  startWithDetails: (input, next) => counted('start', () => next(input)),
  startUpdate: (input, next) => counted('update', () => next(input)),
  startUpdateWithStart: (input, next) => counted('update_with_start', () => next(input)),
  signal: (input, next) => counted('signal', () => next(input)),
  signalWithStart: (input, next) => counted('signal_with_start', () => next(input)),
  query: (input, next) => counted('query', () => next(input)),
  terminate: (input, next) => counted('terminate', () => next(input)),
  cancel: (input, next) => counted('cancel', () => next(input)),
  describe: (input, next) => counted('describe', () => next(input)),
};

/** The interceptors of every client this service makes (src/temporal/client.ts). */
export function workflowClientInterceptors(): WorkflowClientInterceptor[] {
  // Tracing outermost: the call's span covers its outcome being counted too.
  return activeTracing() ? [new OpenTelemetryWorkflowClientInterceptor(), callMetrics] : [callMetrics];
}

/** Worker options of tracing: activity spans (children of the workflow's), and the workflow span sink. */
export function workerTracingOptions(): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  const tracing = activeTracing();
  return {
    ...(tracing
      ? {
          interceptors: {
            activity: [
              (ctx) => ({
                inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
                outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
              }),
            ],
          },
        }
      : {}),
    // The bundled workflow interceptors always export their spans through this sink; without tracing it drops them.
    sinks: {
      exporter: makeWorkflowExporter((tracing ?? disabledTracing).spanProcessor, (tracing ?? disabledTracing).resource),
    },
  };
}

/** A loopback port nothing listens on now, for the SDK's exporter when METRICS_PORT is 0 (any free port). */
function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** The configuration with the SDK exporter's port decided (picked when it is 0). */
export async function withTemporalSdkMetricsPort(config: AppConfig): Promise<AppConfig> {
  const metrics = config.observability.metrics;
  if (!metrics || metrics.temporalSdkPort !== 0) return config;
  const temporalSdkPort = await freeLoopbackPort();
  return { ...config, observability: { ...config.observability, metrics: { ...metrics, temporalSdkPort } } };
}

/** The Temporal SDK runtime's own metrics (task slots, polls, latencies), on a loopback port served again at /metrics. */
export function temporalRuntimeTelemetry(config: AppConfig): TelemetryOptions | undefined {
  const metrics = config.observability.metrics;
  if (!metrics) return undefined;
  return {
    metrics: {
      prometheus: {
        bindAddress: `127.0.0.1:${metrics.temporalSdkPort}`,
        countersTotalSuffix: true,
        unitSuffix: true,
        useSecondsForDurations: true,
      },
    },
  };
}
