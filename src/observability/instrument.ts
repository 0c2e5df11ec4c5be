// Loaded first by both entry points (src/server.ts, src/worker.ts), before anything requires `pg` or `http`:
// OpenTelemetry's instrumentations patch those modules as they are loaded. Only when a trace collector is configured
// (OTEL_EXPORTER_OTLP_ENDPOINT); otherwise nothing is patched and requests and queries run as they were.
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';

/** Requests that are probes, not work: no span. */
const probePaths = /^\/(health\/|metrics(\/|$|\?))/;

export function instrumentLibraries(): void {
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
