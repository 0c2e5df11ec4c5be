// Loaded first by both entry points (src/server.ts, src/worker.ts), before anything requires `pg` or `http`:
// OpenTelemetry's instrumentations patch those modules as they are loaded. Only when a trace collector is configured
// (OTEL_EXPORTER_OTLP_ENDPOINT); otherwise nothing is patched and requests and queries run as they were. The
// instrumentations are required only then: without a collector a process does not carry them (docs/benchmark.md).
import type * as Instrumentation from '@opentelemetry/instrumentation';
import type * as HttpInstrumentationModule from '@opentelemetry/instrumentation-http';
import type * as PgInstrumentationModule from '@opentelemetry/instrumentation-pg';

/** Requests that are probes, not work: no span. */
const probePaths = /^\/(health\/|metrics(\/|$|\?))/;

export function instrumentLibraries(): void {
  const { registerInstrumentations } = require('@opentelemetry/instrumentation') as typeof Instrumentation;
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof HttpInstrumentationModule;
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg') as typeof PgInstrumentationModule;
  registerInstrumentations({
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) => probePaths.test(request.url ?? ''),
      }),
      // Statements only (no parameters: they hold personal data), and only inside a trace (a request, a workflow
      // task, an activity), not the relays' polling.
      new PgInstrumentation({
        requireParentSpan: true,
        enhancedDatabaseReporting: false,
        // Unnamed statements are named by their first word, which for our indented SQL is a line break.
        requestHook: (span, { query, connection }) => {
          const verb = /^\s*([A-Za-z]+)/.exec(query.text)?.[1];
          if (!query.name && verb)
            span.updateName(`pg.query:${verb.toUpperCase()} ${connection.database ?? ''}`.trim());
        },
      }),
    ],
  });
}

if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT) instrumentLibraries();
