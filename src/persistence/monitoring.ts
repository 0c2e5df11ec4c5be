// What the metrics endpoint reads from the database (docs/observability.md): the state an operator alerts on, read
// once per scrape in one statement, and the connection pools' counts. Read-only.
import { type DatabaseTransaction, type DatabaseClient, sqlOf, type Database, sqlPoolOf } from './internal/database';
import { sql } from 'kysely';

export interface MonitoringSnapshot {
  transactionsInError: number;
  /** Seconds since the oldest transaction in `error` last changed; 0 when there is none. */
  oldestErrorAgeSeconds: number;
  undeliveredWebhooks: number;
  /** Seconds since the oldest pending webhook delivery was created; 0 when there is none. */
  oldestUndeliveredWebhookAgeSeconds: number;
  /** Workflow-start intents committed and not yet started (the write path's relay backlog). */
  workflowStartBacklog: number;
  oldestWorkflowStartAgeSeconds: number;
  /**
   * Rows inserted into ledger_transactions (one per posting) as PostgreSQL's statistics count them: every process's
   * postings, since the statistics were last reset, rolled-back inserts included.
   */
  ledgerPostingsInserted: number;
  /** Entries a bank reported that the service could not take (bank_unmatched_entries), ever: it only grows. */
  bankUnmatchedEntries: number;
}

export async function readMonitoringSnapshot(db: Database): Promise<MonitoringSnapshot> {
  const { rows } = await sql<Record<string, string | number | bigint | null>>`
    SELECT
      (SELECT count(*) FROM transactions WHERE status = 'error') AS transactions_in_error,
      (SELECT extract(epoch FROM now() - min(updated_at)) FROM transactions WHERE status = 'error') AS oldest_error,
      (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending') AS undelivered,
      (SELECT extract(epoch FROM now() - min(created_at)) FROM webhook_deliveries WHERE status = 'pending')
        AS oldest_undelivered,
      (SELECT count(*) FROM workflow_starts WHERE started_at IS NULL) AS start_backlog,
      (SELECT extract(epoch FROM now() - min(created_at)) FROM workflow_starts WHERE started_at IS NULL)
        AS oldest_start,
      (SELECT n_tup_ins FROM pg_stat_user_tables WHERE relname = 'ledger_transactions' AND schemaname = current_schema())
        AS ledger_postings,
      (SELECT count(*) FROM bank_unmatched_entries) AS bank_unmatched`.execute(sqlOf(db));
  const [row] = rows;
  const number = (value: string | number | bigint | null | undefined) => Math.max(0, Number(value ?? 0));
  return {
    transactionsInError: number(row?.transactionsInError),
    oldestErrorAgeSeconds: number(row?.oldestError),
    undeliveredWebhooks: number(row?.undelivered),
    oldestUndeliveredWebhookAgeSeconds: number(row?.oldestUndelivered),
    workflowStartBacklog: number(row?.startBacklog),
    oldestWorkflowStartAgeSeconds: number(row?.oldestStart),
    ledgerPostingsInserted: number(row?.ledgerPostings),
    bankUnmatchedEntries: number(row?.bankUnmatched),
  };
}

/** Seconds since the transaction's first accepted deposit was received, or null when it had none (wallet-funded). */
export async function secondsSinceDeposit(tx: DatabaseTransaction, transactionId: string): Promise<number | null> {
  const {
    rows: [row],
  } = await sql<{ seconds: string | null }>`
    SELECT extract(epoch FROM now() - min(received_at))::text AS seconds
    FROM transaction_deposits WHERE transaction_id = ${transactionId}::uuid AND status = 'accepted'`.execute(sqlOf(tx));
  return row?.seconds == null ? null : Math.max(0, Number(row.seconds));
}

export interface PoolUsage {
  /** Connections open (checked out or idle). */
  total: number;
  idle: number;
  /** Callers waiting for a connection. */
  waiting: number;
}

export function poolUsage(prisma: DatabaseClient): PoolUsage {
  const pool = sqlPoolOf(prisma);
  return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
}
