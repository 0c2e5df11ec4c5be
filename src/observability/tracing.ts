// OpenTelemetry traces: one provider per process exporting over OTLP/HTTP to the configured collector, W3C trace
// context in and out (HTTP headers, Temporal headers). The OpenTelemetry SDK 1.x line: the one
// @temporalio/interceptors-opentelemetry 1.24 is built on (its workflow spans are handed to this provider's processor).
// The exporter and the Node provider (with the metrics SDK the exporter's transformer brings) are required only when
// a collector is configured, as instrument.ts does with the instrumentations: a process without one does not load them.
import type * as OtlpTraceExporterModule from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  NoopSpanProcessor,
  ParentBasedSampler,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import type * as NodeTracingModule from '@opentelemetry/sdk-trace-node';
import type { AppConfig } from '../config';

export interface Tracing {
  /** Where the Temporal worker hands its workflow spans (a no-op one when tracing is off). */
  spanProcessor: SpanProcessor;
  resource: Resource;
  /** Exports what is left; called on shutdown. */
  shutdown(): Promise<void>;
}

let active: Tracing | null = null;

/** The tracing this process started, or null when it exports nothing. */
export function activeTracing(): Tracing | null {
  return active;
}

/** What the worker gives Temporal's workflow span sink when tracing is off: spans are dropped there. */
export const disabledTracing: Tracing = {
  spanProcessor: new NoopSpanProcessor(),
  resource: Resource.empty(),
  shutdown: async () => undefined,
};

export function startTracing(config: AppConfig, serviceName: string): Tracing | null {
  const settings = config.observability.tracing;
  if (!settings) return null;
  const resource = Resource.default().merge(
    new Resource({ 'service.name': serviceName, 'deployment.environment.name': config.appEnv }),
  );
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof OtlpTraceExporterModule;
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node') as typeof NodeTracingModule;
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ url: `${settings.otlpEndpoint}/v1/traces` }));
  const provider = new NodeTracerProvider({
    resource,
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.sampleRatio) }),
    spanProcessors: [spanProcessor],
  });
  provider.register(); // global provider, AsyncLocalStorage context, W3C trace-context and baggage propagation
  active = { spanProcessor, resource, shutdown: () => provider.shutdown() };
  return active;
}
