import { isSpanContextValid, trace } from '@opentelemetry/api';
import pino, { Logger } from 'pino';

export type { Logger };

export type LogFormat = 'json' | 'pretty';

/** The trace and span of the code that logs (when tracing is on), so a log line leads to its trace. */
function traceFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const context = span.spanContext();
  return isSpanContextValid(context) ? { trace_id: context.traceId, span_id: context.spanId } : {};
}

/**
 * Structured JSON logs; request, partner and workflow ids are added as child-logger bindings. `pretty` (`npm run
 * dev`) prints one readable line per record through pino-pretty, a development dependency: production keeps JSON.
 */
export function createLogger(
  level: string,
  bindings: Record<string, unknown> = {},
  format: LogFormat = 'json',
): Logger {
  return pino({
    level,
    base: { service: 'payments-api', ...bindings },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['req.headers.authorization', 'req.headers["api-key"]', '*.api_key'], censor: '[redacted]' },
    mixin: traceFields,
    ...(format === 'pretty'
      ? {
          transport: {
            target: 'pino-pretty',
            options: {
              colorize: true,
              translateTime: 'SYS:HH:MM:ss.l',
              ignore: 'pid,hostname,service,app_env,process',
              messageFormat: bindings.process ? `[${String(bindings.process)}] {msg}` : '{msg}',
            },
          },
        }
      : {}),
  });
}
