import pino, { Logger } from 'pino';

export type { Logger };

/** Structured JSON logs; request, partner and workflow ids are added as child-logger bindings. */
export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return pino({
    level,
    base: { service: 'payments-api', ...bindings },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['req.headers.authorization', 'req.headers["api-key"]', '*.api_key'], censor: '[redacted]' },
  });
}
