// The Prometheus metrics of both processes (prom-client), in one registry served by metrics-server.ts. Names and
// labels follow the OpenTelemetry semantic conventions as Prometheus spells them (http_server_request_duration_seconds,
// db_client_connection_count) and `payments_` for this service's own; every label takes a bounded set of values (route
// templates, statuses, outcomes), never an id. Catalogue and alerts: docs/observability.md.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export const registry = new Registry();

let enabled = false;

/** True once a process serves /metrics: observations that cost a query (deposit time) are made only then. */
export function metricsEnabled(): boolean {
  return enabled;
}

export function enableMetrics(): void {
  enabled = true;
}

// ---- API ----

/** OpenTelemetry's recommended boundaries for http.server.request.duration, up to the 15 s request bound. */
const httpDurationBuckets = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 15];

export const httpServerDuration = new Histogram({
  name: 'http_server_request_duration_seconds',
  help: 'Duration of API requests, by route template, method and status class (2xx..5xx).',
  labelNames: ['http_route', 'http_request_method', 'http_response_status_class'] as const,
  buckets: httpDurationBuckets,
  registers: [registry],
});

export const rateLimitedRequests = new Counter({
  name: 'payments_http_rate_limited_requests_total',
  help: 'API requests answered 429 (partner or client-address rate limit, or too many failed authentications).',
  registers: [registry],
});

export const unavailableResponses = new Counter({
  name: 'payments_http_service_unavailable_total',
  help: 'API requests answered 503 (a dependency - database, Temporal, a provider - did not answer in time).',
  registers: [registry],
});

export const idempotentReplays = new Counter({
  name: 'payments_http_idempotent_replays_total',
  help: 'API requests answered with the stored response of an earlier request with the same Idempotency-Key.',
  registers: [registry],
});

export type TemporalCallOutcome = 'ok' | 'deadline' | 'unavailable' | 'rejected';

export const temporalClientCalls = new Counter({
  name: 'payments_temporal_client_calls_total',
  help:
    'Calls of the Temporal client (start, signal, update, query, ...) by outcome: ok, deadline (no answer in time), ' +
    'unavailable (engine unreachable), rejected (answered with an error, e.g. an update refused).',
  labelNames: ['operation', 'outcome'] as const,
  registers: [registry],
});

// ---- worker ----

export const settlementsFinished = new Counter({
  name: 'payments_settlements_finished_total',
  help: 'Transactions that reached a final status (completed, failed, refunded), by type and status.',
  labelNames: ['transaction_type', 'status'] as const,
  registers: [registry],
});

export const depositToCompleted = new Histogram({
  name: 'payments_settlement_deposit_to_completed_seconds',
  help: 'Time from the deposit being received to the transaction being completed, by type.',
  labelNames: ['transaction_type'] as const,
  buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 2 * 3600, 6 * 3600, 24 * 3600],
  registers: [registry],
});

export const webhookAttempts = new Counter({
  name: 'payments_webhook_delivery_attempts_total',
  help: 'HTTP attempts of webhook deliveries by outcome: succeeded (2xx) or failed (anything else, or no answer).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const webhookDeliveries = new Counter({
  name: 'payments_webhook_deliveries_total',
  help: 'Webhook deliveries that ended, by outcome: succeeded, failed (retry window over) or cancelled.',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

for (const outcome of ['succeeded', 'failed']) webhookAttempts.labels(outcome).inc(0);
for (const outcome of ['succeeded', 'failed', 'cancelled']) webhookDeliveries.labels(outcome).inc(0);

/** A gauge whose value is read when Prometheus scrapes (database state, pool counts). */
export function scrapedGauge<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[],
  read: (gauge: Gauge<L>) => Promise<void> | void,
): Gauge<L> {
  registry.removeSingleMetric(name); // a second registration (a test's second harness) replaces the first
  return new Gauge<L>({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      await read(this);
    },
  });
}

/** A counter whose running total is kept elsewhere (PostgreSQL's statistics) and read when Prometheus scrapes. */
export function scrapedCounter(name: string, help: string, read: () => Promise<number>): Counter {
  registry.removeSingleMetric(name);
  return new Counter({
    name,
    help,
    registers: [registry],
    async collect() {
      const total = await read();
      this.reset();
      this.inc(total);
    },
  });
}

// ---- Chains (activities/chain-watcher.ts) ----

export const chainDeepReorgs = new Counter({
  name: 'payments_chain_deep_reorgs_total',
  help: "Reorganisations deeper than the confirmation count: a credited transfer's block left the chain (docs/operations.md).",
  labelNames: ['chain'] as const,
  registers: [registry],
});
chainDeepReorgs.inc({ chain: 'ethereum' }, 0); // the series exists from the start, so increase() sees the first

// ---- Sanctions screening (src/screening) ----

export const screeningListLoadRefusals = new Counter({
  name: 'payments_screening_list_load_refusals_total',
  help: 'Sanctions-list loads refused (parse_error, fetch_error, too_few_entries); the previous version stays in use.',
  labelNames: ['source', 'reason'] as const,
  registers: [registry],
});
// Every series exists from the start, so the alert's increase() sees the first refusal.
for (const source of ['ofac_sdn', 'ofac_consolidated', 'un', 'eu', 'uk']) {
  for (const reason of ['parse_error', 'fetch_error', 'too_few_entries'])
    screeningListLoadRefusals.inc({ source, reason }, 0);
}
