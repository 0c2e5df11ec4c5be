// The daily reconciliation's reads and its report (workflows/reconciliation.ts, docs/reconciliation.md). Each check
// reads one bounded batch in keyset order (by id) and answers what it checked, what it found and where the next
// batch starts; the report and its discrepancies are written idempotently, so a retried batch changes nothing.
import { Decimal } from '../domain/money';
import {
  type Discrepancy,
  finalTransactionEventType,
  postingOfProviderOperation,
  providerOperationOfPosting,
  type ReconciliationCheck,
  requiredTransactionSteps,
  transactionPostingSteps,
  walletTransferPostingSteps,
} from '../domain/reconciliation';
import type { TransactionStatus, TransactionType } from '../domain/transactions';
import { newId } from '../domain/ids';
import { sql, sqlOf, type SqlDb } from './database';

export interface BatchQuery {
  /** Null for the whole ledger; otherwise only what belongs to these partners. */
  partnerIds: string[] | null;
  /** The last key of the previous batch; null for the first. */
  after: string | null;
  limit: number;
}

export interface BatchResult {
  checked: number;
  discrepancies: Discrepancy[];
  /** Where the next batch starts; null after the last. */
  next: string | null;
}

const finalTransactionStatuses = ['completed', 'refunded', 'cancelled', 'failed'];
const uuidText = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/** The scope condition on a partner id expression. */
const inScope = (query: BatchQuery, partner: ReturnType<typeof sql>) =>
  query.partnerIds === null ? sql`true` : sql`${partner} = ANY(${query.partnerIds}::uuid[])`;

const nextOf = <Row>(rows: Row[], limit: number, key: (row: Row) => string) =>
  rows.length < limit ? null : key(rows[rows.length - 1]!);

const describeTotals = (totals: Array<{ currency: string; total: string }>) =>
  totals.map(({ currency, total }) => `${currency} ${new Decimal(total).toFixed()}`).join(', ');

/**
 * Postings: each sums to zero per currency, and each that records money moved by a provider (a conversion, a
 * payout, a sell-back, a return, a send on chain) has that provider operation (sandbox: sandbox_rail_operations).
 */
async function checkPostings(db: SqlDb, query: BatchQuery, withProviders: boolean): Promise<BatchResult> {
  const partnerOfPosting = sql`CASE
      WHEN lt.reference ~ ${`^transaction:${uuidText}:`}
        THEN (SELECT t.partner_id FROM transactions t WHERE t.id = split_part(lt.reference, ':', 2)::uuid)
      WHEN lt.reference ~ ${`^wallet-transfer:${uuidText}:`}
        THEN (SELECT w.partner_id FROM wallet_transfers w WHERE w.id = split_part(lt.reference, ':', 2)::uuid)
      WHEN lt.reference ~ ${`^deposit:${uuidText}:`}
        THEN (SELECT t.partner_id FROM transaction_deposits d JOIN transactions t ON t.id = d.transaction_id
              WHERE d.id = split_part(lt.reference, ':', 2)::uuid)
      ELSE (SELECT e.partner_id FROM ledger_entries e WHERE e.transaction_id = lt.id AND e.partner_id IS NOT NULL
            LIMIT 1)
    END`;
  const rows = (
    await sql`
    SELECT lt.id::text AS id, lt.reference,
      COALESCE((SELECT json_agg(json_build_object('currency', s.currency, 'total', s.total::text))
        FROM (SELECT e.currency, sum(e.amount) AS total FROM ledger_entries e WHERE e.transaction_id = lt.id
              GROUP BY e.currency HAVING sum(e.amount) <> 0) s), '[]') AS unbalanced,
      EXISTS (SELECT 1 FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id
              WHERE e.transaction_id = lt.id AND a.system_code = 'settlement') AS pays_outside
    FROM ledger_transactions lt
    WHERE (${query.after}::uuid IS NULL OR lt.id > ${query.after}::uuid) AND ${inScope(query, partnerOfPosting)}
    ORDER BY lt.id
    LIMIT ${query.limit}`.execute(sqlOf(db))
  ).rows as Array<{
    id: string;
    reference: string;
    unbalanced: Array<{ currency: string; total: string }>;
    paysOutside: boolean;
  }>;
  const discrepancies: Discrepancy[] = rows
    .filter((row) => row.unbalanced.length > 0)
    .map((row) => ({
      kind: 'posting_unbalanced',
      subjectType: 'posting',
      subjectId: row.reference,
      detail: `entries add up to ${describeTotals(row.unbalanced)}, not 0`,
    }));
  if (withProviders) {
    const needed = rows
      .map((row) => ({ reference: row.reference, key: providerOperationOfPosting(row.reference, row.paysOutside) }))
      .filter((row): row is { reference: string; key: string } => row.key !== null);
    const operations = await providerOperations(
      db,
      needed.map(({ key }) => key),
    );
    for (const { reference, key } of needed) {
      const operation = operations.get(key);
      if (!operation || operation.outcome !== 'completed') {
        discrepancies.push({
          kind: 'posting_without_provider_operation',
          subjectType: 'posting',
          subjectId: reference,
          detail: operation
            ? `provider operation ${key} was ${operation.outcome}, not completed`
            : `no provider operation ${key}`,
        });
      }
    }
  }
  return { checked: rows.length, discrepancies, next: nextOf(rows, query.limit, (row) => row.id) };
}

async function providerOperations(
  db: SqlDb,
  keys: string[],
): Promise<Map<string, { kind: string; currency: string; amount: string; outcome: string }>> {
  if (keys.length === 0) return new Map();
  const rows = (
    await sql`
    SELECT idempotency_key, kind, currency, amount::text AS amount, outcome FROM sandbox_rail_operations
    WHERE idempotency_key = ANY(${keys}::text[])`.execute(sqlOf(db))
  ).rows as Array<{ idempotencyKey: string; kind: string; currency: string; amount: string; outcome: string }>;
  return new Map(rows.map((row) => [row.idempotencyKey, row]));
}

/**
 * Transactions in a final status: every posting their path requires is there, no money is left on the clearing or
 * in-transit accounts by their postings, and their final event was recorded.
 */
async function checkTransactions(db: SqlDb, query: BatchQuery): Promise<BatchResult> {
  const steps = [...transactionPostingSteps];
  const rows = (
    await sql`
    WITH batch AS (
      SELECT t.id, t.type::text AS type, t.status::text AS status, t.partner_id, t.wallet_id
      FROM transactions t
      WHERE t.status::text = ANY(${finalTransactionStatuses}::text[])
        AND (${query.after}::uuid IS NULL OR t.id > ${query.after}::uuid) AND ${inScope(query, sql`t.partner_id`)}
      ORDER BY t.id
      LIMIT ${query.limit}
    ), postings AS (
      SELECT b.id AS transaction_id, s.step, lt.id AS posting_id
      FROM batch b CROSS JOIN unnest(${steps}::text[]) AS s(step)
      JOIN ledger_transactions lt ON lt.reference = 'transaction:' || b.id || ':' || s.step
    )
    SELECT b.id::text AS id, b.type, b.status, b.wallet_id::text AS wallet_id,
      COALESCE((SELECT array_agg(p.step) FROM postings p WHERE p.transaction_id = b.id), '{}') AS posted,
      COALESCE((SELECT json_agg(json_build_object('account', o.system_code, 'currency', o.currency, 'total', o.total::text))
        FROM (SELECT a.system_code, e.currency, sum(e.amount) AS total
              FROM postings p JOIN ledger_entries e ON e.transaction_id = p.posting_id
              JOIN ledger_accounts a ON a.id = e.account_id
              WHERE p.transaction_id = b.id
                AND (a.system_code = 'fiat_clearing' OR starts_with(a.system_code, 'in_transit:'))
              GROUP BY a.system_code, e.currency HAVING sum(e.amount) <> 0) o), '[]') AS open,
      COALESCE((SELECT array_agg(DISTINCT ev.event_type) FROM events ev
        WHERE ev.partner_id = b.partner_id AND ev.resource_id = b.id), '{}') AS event_types
    FROM batch b
    ORDER BY b.id`.execute(sqlOf(db))
  ).rows as Array<{
    id: string;
    type: TransactionType;
    status: TransactionStatus;
    walletId: string | null;
    posted: string[];
    open: Array<{ account: string; currency: string; total: string }>;
    eventTypes: string[];
  }>;
  const discrepancies = rows.flatMap((row) =>
    endedResourceDiscrepancies('transaction', row, {
      missingSteps: requiredTransactionSteps(row).filter((step) => !row.posted.includes(step)),
      missingEvent: row.eventTypes.includes(finalTransactionEventType(row)) ? null : finalTransactionEventType(row),
    }),
  );
  return { checked: rows.length, discrepancies, next: nextOf(rows, query.limit, (row) => row.id) };
}

/** What is off with a transaction or wallet transfer that ended: postings its status requires, money left, its event. */
function endedResourceDiscrepancies(
  subjectType: 'transaction' | 'wallet_transfer',
  row: { id: string; status: string; open: Array<{ account: string; currency: string; total: string }> },
  { missingSteps, missingEvent }: { missingSteps: string[]; missingEvent: string | null },
): Discrepancy[] {
  const name = subjectType === 'transaction' ? 'transaction' : 'wallet transfer';
  const prefix = subjectType === 'transaction' ? 'transaction' : 'wallet-transfer';
  return [
    ...missingSteps.map((step): Discrepancy => ({
      kind: 'posting_missing',
      subjectType,
      subjectId: `${prefix}:${row.id}:${step}`,
      detail: `${name} ${row.id} is ${row.status} without its ${step} posting`,
    })),
    ...(row.open.length === 0
      ? []
      : [
          {
            kind: 'money_left_in_transit',
            subjectType,
            subjectId: row.id,
            detail: `${row.status}, yet its postings leave ${row.open
              .map(({ account, currency, total }) => `${new Decimal(total).toFixed()} ${currency} on ${account}`)
              .join(', ')}`,
          } satisfies Discrepancy,
        ]),
    ...(missingEvent === null
      ? []
      : [
          {
            kind: 'final_event_missing',
            subjectType,
            subjectId: row.id,
            detail: `${row.status} without a ${missingEvent} event`,
          } satisfies Discrepancy,
        ]),
  ];
}

/** Wallet transfers that ended: held, then delivered or returned, holds back to zero, and their final event. */
async function checkWalletTransfers(db: SqlDb, query: BatchQuery): Promise<BatchResult> {
  const steps = [...walletTransferPostingSteps];
  const rows = (
    await sql`
    WITH batch AS (
      SELECT w.id, w.status::text AS status, w.partner_id FROM wallet_transfers w
      WHERE w.status::text IN ('completed', 'failed')
        AND (${query.after}::uuid IS NULL OR w.id > ${query.after}::uuid) AND ${inScope(query, sql`w.partner_id`)}
      ORDER BY w.id
      LIMIT ${query.limit}
    ), postings AS (
      SELECT b.id AS transfer_id, s.step, lt.id AS posting_id
      FROM batch b CROSS JOIN unnest(${steps}::text[]) AS s(step)
      JOIN ledger_transactions lt ON lt.reference = 'wallet-transfer:' || b.id || ':' || s.step
    )
    SELECT b.id::text AS id, b.status,
      COALESCE((SELECT array_agg(p.step) FROM postings p WHERE p.transfer_id = b.id), '{}') AS posted,
      COALESCE((SELECT json_agg(json_build_object('account', o.system_code, 'currency', o.currency, 'total', o.total::text))
        FROM (SELECT a.system_code, e.currency, sum(e.amount) AS total
              FROM postings p JOIN ledger_entries e ON e.transaction_id = p.posting_id
              JOIN ledger_accounts a ON a.id = e.account_id
              WHERE p.transfer_id = b.id AND starts_with(a.system_code, 'wallet_transfer_holds')
              GROUP BY a.system_code, e.currency HAVING sum(e.amount) <> 0) o), '[]') AS open,
      EXISTS (SELECT 1 FROM events ev WHERE ev.partner_id = b.partner_id AND ev.resource_id = b.id
        AND ev.event_type = 'walletTransfer.' || b.status) AS has_final_event
    FROM batch b
    ORDER BY b.id`.execute(sqlOf(db))
  ).rows as Array<{
    id: string;
    status: 'completed' | 'failed';
    posted: string[];
    open: Array<{ account: string; currency: string; total: string }>;
    hasFinalEvent: boolean;
  }>;
  const discrepancies = rows.flatMap((row) =>
    endedResourceDiscrepancies('wallet_transfer', row, {
      missingSteps: ['hold', row.status === 'completed' ? 'delivered' : 'returned'].filter(
        (step) => !row.posted.includes(step),
      ),
      missingEvent: row.hasFinalEvent ? null : `walletTransfer.${row.status}`,
    }),
  );
  return { checked: rows.length, discrepancies, next: nextOf(rows, query.limit, (row) => row.id) };
}

/** Accounts with a running balance (wallets, in transit, holds): the stored balance equals the sum of its entries. */
async function checkAccounts(db: SqlDb, query: BatchQuery): Promise<BatchResult> {
  const partnerOfAccount = sql`(SELECT w.partner_id FROM wallets w WHERE w.id = COALESCE(a.wallet_id,
    CASE WHEN a.system_code ~ ${`^(in_transit|wallet_transfer_holds):${uuidText}$`}
      THEN split_part(a.system_code, ':', 2)::uuid END))`;
  const rows = (
    await sql`
    SELECT a.id::text AS id, a.wallet_id::text AS wallet_id, a.system_code, a.currency, a.balance::text AS balance,
      COALESCE((SELECT sum(e.amount) FROM ledger_entries e WHERE e.account_id = a.id), 0)::text AS entries
    FROM ledger_accounts a
    WHERE a.balance IS NOT NULL AND (${query.after}::uuid IS NULL OR a.id > ${query.after}::uuid)
      AND ${inScope(query, partnerOfAccount)}
    ORDER BY a.id
    LIMIT ${query.limit}`.execute(sqlOf(db))
  ).rows as Array<{
    id: string;
    walletId: string | null;
    systemCode: string | null;
    currency: string;
    balance: string;
    entries: string;
  }>;
  const discrepancies: Discrepancy[] = rows
    .filter((row) => !new Decimal(row.balance).eq(row.entries))
    .map((row) => ({
      kind: 'account_balance_mismatch',
      subjectType: 'ledger_account',
      subjectId: row.id,
      detail:
        `${row.walletId ? `wallet ${row.walletId}` : row.systemCode} ${row.currency}: balance ` +
        `${new Decimal(row.balance).toFixed()}, its entries add up to ${new Decimal(row.entries).toFixed()}`,
    }));
  return { checked: rows.length, discrepancies, next: nextOf(rows, query.limit, (row) => row.id) };
}

/**
 * Provider operations (sandbox: sandbox_rail_operations): each completed one whose resource has ended matches
 * exactly one posting, of its amount. An operation of a resource still moving is left for a later run.
 */
async function checkProviderOperations(db: SqlDb, query: BatchQuery): Promise<BatchResult> {
  const rows = (
    await sql`
    SELECT idempotency_key, kind, currency, amount::text AS amount, outcome FROM sandbox_rail_operations
    WHERE (${query.after}::text IS NULL OR idempotency_key > ${query.after}::text)
    ORDER BY idempotency_key
    LIMIT ${query.limit}`.execute(sqlOf(db))
  ).rows as Array<{ idempotencyKey: string; kind: string; currency: string; amount: string; outcome: string }>;
  const matched = rows.map((row) => ({ ...row, posting: postingOfProviderOperation(row.idempotencyKey) }));
  const ids = (source: string) =>
    matched.flatMap(({ posting }) =>
      posting?.source === source && new RegExp(`^${uuidText}$`).test(posting.id) ? [posting.id] : [],
    );
  const resources = (
    await sql`
    SELECT id::text AS id, partner_id::text AS partner_id, status::text IN ('completed', 'refunded', 'cancelled', 'failed') AS ended
    FROM transactions WHERE id = ANY(${ids('transaction')}::uuid[])
    UNION ALL
    SELECT id::text, partner_id::text, status::text IN ('completed', 'failed') FROM wallet_transfers
    WHERE id = ANY(${ids('wallet_transfer')}::uuid[])
    UNION ALL
    SELECT d.id::text, t.partner_id::text, d.status::text = 'returned' FROM transaction_deposits d
    JOIN transactions t ON t.id = d.transaction_id WHERE d.id = ANY(${ids('deposit')}::uuid[])`.execute(sqlOf(db))
  ).rows as Array<{ id: string; partnerId: string; ended: boolean }>;
  const resourceById = new Map(resources.map((row) => [row.id, row]));
  const references = matched.flatMap(({ posting }) => (posting ? [posting.reference] : []));
  const entries = (
    await sql`
    SELECT lt.reference, e.currency, e.amount::text AS amount FROM ledger_transactions lt
    JOIN ledger_entries e ON e.transaction_id = lt.id WHERE lt.reference = ANY(${references}::text[])`.execute(
      sqlOf(db),
    )
  ).rows as Array<{ reference: string; currency: string; amount: string }>;
  let checked = 0;
  const discrepancies: Discrepancy[] = [];
  for (const operation of matched) {
    const resource = operation.posting ? resourceById.get(operation.posting.id) : undefined;
    if (!resource) {
      // An operation that names nothing of ours; a run limited to some partners cannot tell whose it is.
      if (query.partnerIds !== null) continue;
      checked += 1;
      discrepancies.push({
        kind: 'provider_operation_without_posting',
        subjectType: 'provider_operation',
        subjectId: operation.idempotencyKey,
        detail: `a ${operation.kind} of ${operation.amount} ${operation.currency} names no resource of the service`,
      });
      continue;
    }
    if (query.partnerIds !== null && !query.partnerIds.includes(resource.partnerId)) continue;
    if (!resource.ended || operation.outcome !== 'completed') continue;
    checked += 1;
    const reference = operation.posting!.reference;
    const posted = entries.filter((entry) => entry.reference === reference);
    const amount = new Decimal(operation.amount);
    if (posted.length === 0) {
      discrepancies.push({
        kind: 'provider_operation_without_posting',
        subjectType: 'provider_operation',
        subjectId: operation.idempotencyKey,
        detail: `a ${operation.kind} of ${amount.toFixed()} ${operation.currency}, and no posting ${reference}`,
      });
    } else if (
      !posted.some((entry) => entry.currency === operation.currency && amount.eq(new Decimal(entry.amount).abs()))
    ) {
      discrepancies.push({
        kind: 'provider_amount_mismatch',
        subjectType: 'provider_operation',
        subjectId: operation.idempotencyKey,
        detail: `a ${operation.kind} of ${amount.toFixed()} ${operation.currency}; posting ${reference} moves no such amount`,
      });
    }
  }
  return { checked, discrepancies, next: nextOf(rows, query.limit, (row) => row.idempotencyKey) };
}

/** One batch of one check. Provider operations are checked where they are recorded: in the sandbox. */
export async function reconcileBatch(
  db: SqlDb,
  check: ReconciliationCheck,
  query: BatchQuery,
  options: { providerOperations: boolean },
): Promise<BatchResult> {
  switch (check) {
    case 'postings':
      return checkPostings(db, query, options.providerOperations);
    case 'transactions':
      return checkTransactions(db, query);
    case 'wallet_transfers':
      return checkWalletTransfers(db, query);
    case 'accounts':
      return checkAccounts(db, query);
    case 'provider_operations':
      return options.providerOperations
        ? checkProviderOperations(db, query)
        : { checked: 0, discrepancies: [], next: null };
  }
}

// ---- the report ----

export type CheckCounts = Partial<Record<ReconciliationCheck, { checked: number; found: number }>>;

export interface ReconciliationReportRow {
  id: string;
  status: 'running' | 'clean' | 'discrepancies';
  partnerIds: string[];
  checks: CheckCounts;
  discrepancyCount: number;
  startedAt: Date;
  finishedAt: Date | null;
}

/** Opens a run's report (once: a retried open finds it). */
export async function openReconciliationReport(db: SqlDb, id: string, partnerIds: string[] | null): Promise<void> {
  await sql`
    INSERT INTO reconciliation_reports (id, status, partner_ids)
    VALUES (${id}::uuid, 'running', ${partnerIds ?? []}::uuid[])
    ON CONFLICT (id) DO NOTHING`.execute(sqlOf(db));
}

/** Keeps what a batch found (a retried batch finds them kept: one row per report, kind and subject). */
export async function recordDiscrepancies(db: SqlDb, reportId: string, found: Discrepancy[]): Promise<void> {
  if (found.length === 0) return;
  await sql`
    INSERT INTO reconciliation_discrepancies (id, report_id, kind, subject_type, subject_id, detail)
    SELECT d.id, ${reportId}::uuid, d.kind, d.subject_type, d.subject_id, d.detail
    FROM unnest(
      ${found.map(() => newId())}::uuid[],
      ${found.map((item) => item.kind)}::text[],
      ${found.map((item) => item.subjectType)}::text[],
      ${found.map((item) => item.subjectId)}::text[],
      ${found.map((item) => item.detail)}::text[]
    ) AS d(id, kind, subject_type, subject_id, detail)
    ON CONFLICT (report_id, kind, subject_id) DO NOTHING`.execute(sqlOf(db));
}

/** Closes a run's report with its counts: clean, or discrepancies (how many were kept). */
export async function closeReconciliationReport(
  db: SqlDb,
  id: string,
  checks: CheckCounts,
): Promise<ReconciliationReportRow> {
  const [row] = (
    await sql`
    UPDATE reconciliation_reports r SET
      checks = ${JSON.stringify(checks)}::jsonb,
      discrepancy_count = c.count,
      status = CASE WHEN c.count = 0 THEN 'clean' ELSE 'discrepancies' END,
      finished_at = COALESCE(r.finished_at, now())
    FROM (SELECT count(*)::int AS count FROM reconciliation_discrepancies WHERE report_id = ${id}::uuid) c
    WHERE r.id = ${id}::uuid
    RETURNING ${reportColumns}`.execute(sqlOf(db))
  ).rows as ReconciliationReportRow[];
  if (!row) throw new Error(`reconciliation report ${id} does not exist`);
  return row;
}

const reportColumns = sql`r.id::text AS id, r.status, COALESCE(r.partner_ids::text[], '{}') AS partner_ids, r.checks,
  r.discrepancy_count, r.started_at, r.finished_at`;

/** A report by id, or the latest one started. */
export async function findReconciliationReport(
  db: SqlDb,
  id: string | 'latest',
): Promise<ReconciliationReportRow | null> {
  const [row] = (
    await sql`
    SELECT ${reportColumns} FROM reconciliation_reports r
    WHERE ${id === 'latest' ? sql`true` : sql`r.id = ${id}::uuid`}
    ORDER BY r.started_at DESC LIMIT 1`.execute(sqlOf(db))
  ).rows as ReconciliationReportRow[];
  return row ?? null;
}

/** The latest reports, newest first. */
export async function listReconciliationReports(db: SqlDb, limit: number): Promise<ReconciliationReportRow[]> {
  return (
    await sql`
    SELECT ${reportColumns} FROM reconciliation_reports r ORDER BY r.started_at DESC LIMIT ${limit}`.execute(sqlOf(db))
  ).rows as ReconciliationReportRow[];
}

/** What a report found, in the order found (bounded: `limit`). */
export async function listDiscrepancies(db: SqlDb, reportId: string, limit: number): Promise<Discrepancy[]> {
  return (
    await sql`
    SELECT kind, subject_type, subject_id, detail FROM reconciliation_discrepancies
    WHERE report_id = ${reportId}::uuid ORDER BY created_at, kind, subject_id LIMIT ${limit}`.execute(sqlOf(db))
  ).rows as Discrepancy[];
}
