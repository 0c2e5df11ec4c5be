// The one-line observations the request path, the settlement activities and webhook delivery make, and the gauges
// read at scrape time. Cheap when nothing scrapes: a counter increment; a database read only once metrics are served.
import type { DatabaseTransaction, DatabaseClient } from '../persistence/database';
import {
  poolUsage,
  readMonitoringSnapshot,
  secondsSinceDeposit,
  type MonitoringSnapshot,
} from '../persistence/monitoring';
import { discrepancyKinds, isSkipped, reconciliationChecks } from '../domain/reconciliation';
import { isFinal, type TransactionStatus, transactionStatuses } from '../domain/transactions';
import { type LatestReconciliation, readLatestReconciliations } from '../persistence/reconciliation';
import {
  depositToCompleted,
  httpServerDuration,
  idempotentReplays,
  metricsEnabled,
  rateLimitedRequests,
  scrapedCounter,
  scrapedGauge,
  settlementsFinished,
  unavailableResponses,
  webhookAttempts,
  webhookDeliveries,
} from './metrics';

export interface FinishedRequest {
  method: string;
  /** The route template (`/v1/customers/{customer_id}`), or null when no route matched. */
  route: string | null;
  status: number;
  durationSeconds: number;
  replayed: boolean;
}

export function observeRequest(request: FinishedRequest): void {
  httpServerDuration
    .labels(request.route ?? 'unmatched', request.method, `${Math.floor(request.status / 100)}xx`)
    .observe(request.durationSeconds);
  if (request.status === 429) rateLimitedRequests.inc();
  if (request.status === 503) unavailableResponses.inc();
  if (request.replayed) idempotentReplays.inc();
}

/**
 * Where a settlement ends, for payments_settlements_finished_total: a status with no way out (src/domain/transactions.ts),
 * or `completed` (which a payout return may leave days later, workflows/payout-return.ts: the settlement itself is
 * over).
 */
function endsSettlement(status: string): boolean {
  if (status === 'completed') return true;
  return (transactionStatuses as readonly string[]).includes(status) && isFinal(status as TransactionStatus);
}

/**
 * A transaction's status changed inside a settlement step (counted when the step runs, so a step retried after a
 * rollback counts again: rare, and the ledger and events stay exact).
 */
export async function observeTransactionStatus(
  tx: DatabaseTransaction,
  row: { id: string; type: string; status: string },
): Promise<void> {
  if (!endsSettlement(row.status)) return;
  settlementsFinished.labels(row.type, row.status).inc();
  if (row.status !== 'completed' || !metricsEnabled()) return;
  const seconds = await secondsSinceDeposit(tx, row.id);
  if (seconds !== null) depositToCompleted.labels(row.type).observe(seconds);
}

export function observeWebhookAttempt(succeeded: boolean): void {
  webhookAttempts.labels(succeeded ? 'succeeded' : 'failed').inc();
  if (succeeded) webhookDeliveries.labels('succeeded').inc();
}

export function observeWebhookDeliveryEnded(outcome: 'failed' | 'cancelled'): void {
  webhookDeliveries.labels(outcome).inc();
}

/** Open, idle and waiting connections of a process's pool, as OpenTelemetry's db.client.connection.* metrics. */
export function registerPoolGauges(poolName: string, prisma: DatabaseClient): void {
  scrapedGauge(
    'db_client_connection_count',
    'Connections of the PostgreSQL pool, by state (used, idle).',
    ['db_client_connection_pool_name', 'db_client_connection_state'],
    (gauge) => {
      const usage = poolUsage(prisma);
      gauge.labels(poolName, 'used').set(usage.total - usage.idle);
      gauge.labels(poolName, 'idle').set(usage.idle);
    },
  );
  scrapedGauge(
    'db_client_connection_pending_requests',
    'Callers waiting for a connection of the PostgreSQL pool.',
    ['db_client_connection_pool_name'],
    (gauge) => gauge.labels(poolName).set(poolUsage(prisma).waiting),
  );
}

/**
 * The database state operators alert on, read in one statement per scrape (the worker serves them; the API would
 * only repeat them).
 */
export function registerDatabaseGauges(prisma: DatabaseClient): void {
  let pending: Promise<MonitoringSnapshot> | null = null;
  // Every gauge below is collected in the same scrape: they share one read.
  const snapshot = () => {
    pending ??= readMonitoringSnapshot(prisma).finally(() => setTimeout(() => (pending = null), 1000).unref());
    return pending;
  };
  const gauge = (name: string, help: string, value: (snapshot: MonitoringSnapshot) => number) =>
    scrapedGauge(name, help, [], async (metric) => metric.set(value(await snapshot())));
  gauge(
    'payments_transactions_in_error',
    'Transactions in status `error`, waiting for an operator (docs/operations.md).',
    (s) => s.transactionsInError,
  );
  gauge(
    'payments_transactions_in_error_oldest_age_seconds',
    'Seconds since the oldest transaction in `error` got there (0: none).',
    (s) => s.oldestErrorAgeSeconds,
  );
  gauge(
    'payments_webhook_undelivered',
    'Webhook deliveries still pending (not yet answered 2xx).',
    (s) => s.undeliveredWebhooks,
  );
  gauge(
    'payments_webhook_undelivered_oldest_age_seconds',
    'Age of the oldest pending webhook delivery (0: none).',
    (s) => s.oldestUndeliveredWebhookAgeSeconds,
  );
  gauge(
    'payments_workflow_start_backlog',
    'Workflow starts committed by the API and not yet made (the workflow-start relay backlog).',
    (s) => s.workflowStartBacklog,
  );
  gauge(
    'payments_workflow_start_backlog_oldest_age_seconds',
    'Age of the oldest workflow start not yet made (0: none).',
    (s) => s.oldestWorkflowStartAgeSeconds,
  );
  gauge(
    'payments_bank_unmatched_entries',
    'Entries a bank reported that the service could not take (a credit naming no transaction), kept for operators: npm run bank:unmatched.',
    (s) => s.bankUnmatchedEntries,
  );
  registerReconciliationGauges(prisma);
  // PostgreSQL's statistics count every process's postings; Prometheus' rate() handles their resets.
  scrapedCounter(
    'payments_ledger_postings_total',
    'Ledger postings (rows of ledger_transactions) inserted, as PostgreSQL counts them, by every process.',
    async () => (await snapshot()).ledgerPostingsInserted,
  );
}

const reconciliationScopes = ['all', 'partners'] as const;

/**
 * What the latest finished reconciliation of each scope (`all`: the whole ledger, the daily schedule's; `partners`: a
 * run limited to some partners) found and could not check, read from its report when Prometheus scrapes: every
 * worker serves the same values, also after a restart. Every kind and check is served (0 when none), so an alert
 * on them needs no absent().
 */
export function registerReconciliationGauges(prisma: DatabaseClient): void {
  let pending: Promise<LatestReconciliation[]> | null = null;
  const latest = () => {
    pending ??= readLatestReconciliations(prisma).finally(() => setTimeout(() => (pending = null), 1000).unref());
    return pending;
  };
  const ofScope = async (scope: string) => (await latest()).find((report) => report.scope === scope);
  scrapedGauge(
    'payments_reconciliation_findings',
    'Discrepancies the latest finished reconciliation of the scope found, by kind (docs/reconciliation.md).',
    ['kind', 'scope'],
    async (gauge) => {
      for (const scope of reconciliationScopes) {
        const report = await ofScope(scope);
        for (const kind of discrepancyKinds) gauge.labels(kind, scope).set(report?.findings[kind] ?? 0);
      }
    },
  );
  scrapedGauge(
    'payments_reconciliation_check_skipped',
    '1 when the latest finished reconciliation of the scope skipped the check (it could not look: never clean).',
    ['check', 'scope'],
    async (gauge) => {
      for (const scope of reconciliationScopes) {
        const report = await ofScope(scope);
        for (const check of reconciliationChecks)
          gauge.labels(check, scope).set(isSkipped(report?.checks[check]) ? 1 : 0);
      }
    },
  );
  scrapedGauge(
    'payments_reconciliation_last_finished_timestamp_seconds',
    'When the latest reconciliation of the scope finished (Unix seconds; 0: none has yet).',
    ['scope'],
    async (gauge) => {
      for (const scope of reconciliationScopes) {
        const report = await ofScope(scope);
        gauge.labels(scope).set(report ? report.finishedAt.getTime() / 1000 : 0);
      }
    },
  );
}
