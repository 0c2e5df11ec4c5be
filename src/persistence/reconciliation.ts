// The daily reconciliation's reads and its report (workflows/reconciliation.ts, docs/reconciliation.md). Each check
// reads one bounded batch in keyset order (by id) and answers what it checked, what it found and where the next
// batch starts; the report and its discrepancies are written idempotently, so a retried batch changes nothing.
import { Decimal } from '../domain/money';
import {
  type AnyReconciliationCheck,
  type CheckOutcomes,
  type Discrepancy,
  finalTransactionEventType,
  isSkipped,
  postingOfProviderOperation,
  providerOperationOfPosting,
  type ReportStatus,
  requiredTransactionSteps,
  restingDepositStatuses,
  restingTransactionStatuses,
  type StatementLine,
  type StuckBounds,
  stuckDepositBoundHours,
  stuckTransactionBoundHours,
  transactionPostingSteps,
  walletTransferPostingSteps,
} from '../domain/reconciliation';
import type { TransactionStatus, TransactionType } from '../domain/transactions';
import { newId } from '../domain/ids';
import { sqlOf, type Database } from './internal/database';
import { sql } from 'kysely';

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

/** The partner of the posting `lt` (from its reference's resource, else from a partner's entry in it). */
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

/**
 * Postings: each sums to zero per currency. (Whether a provider made what a posting records is for the statement's
 * checks, provider_statement and statement_postings.)
 */
async function checkPostings(db: Database, query: BatchQuery): Promise<BatchResult> {
  const rows = (
    await sql`
    SELECT lt.id::text AS id, lt.reference,
      COALESCE((SELECT json_agg(json_build_object('currency', s.currency, 'total', s.total::text))
        FROM (SELECT e.currency, sum(e.amount) AS total FROM ledger_entries e WHERE e.transaction_id = lt.id
              GROUP BY e.currency HAVING sum(e.amount) <> 0) s), '[]') AS unbalanced
    FROM ledger_transactions lt
    WHERE (${query.after}::uuid IS NULL OR lt.id > ${query.after}::uuid) AND ${inScope(query, partnerOfPosting)}
    ORDER BY lt.id
    LIMIT ${query.limit}`.execute(sqlOf(db))
  ).rows as Array<{ id: string; reference: string; unbalanced: Array<{ currency: string; total: string }> }>;
  const discrepancies: Discrepancy[] = rows
    .filter((row) => row.unbalanced.length > 0)
    .map((row) => ({
      kind: 'posting_unbalanced',
      subjectType: 'posting',
      subjectId: row.reference,
      detail: `entries add up to ${describeTotals(row.unbalanced)}, not 0`,
    }));
  return { checked: rows.length, discrepancies, next: nextOf(rows, query.limit, (row) => row.id) };
}

/**
 * Transactions in a final status: every posting their path requires is there, no money is left on the clearing or
 * in-transit accounts by their postings, and their final event was recorded.
 */
async function checkTransactions(db: Database, query: BatchQuery): Promise<BatchResult> {
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
async function checkWalletTransfers(db: Database, query: BatchQuery): Promise<BatchResult> {
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
async function checkAccounts(db: Database, query: BatchQuery): Promise<BatchResult> {
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

// ---- the provider's statement ----

/** The resources a provider operation's key names, with their partner and whether they ended. */
async function resourcesOfKeys(
  db: Database,
  keys: string[],
): Promise<Map<string, { partnerId: string; ended: boolean }>> {
  const postings = keys.map((key) => postingOfProviderOperation(key));
  const ids = (source: string) =>
    postings.flatMap((posting) =>
      posting?.source === source && new RegExp(`^${uuidText}$`).test(posting.id) ? [posting.id] : [],
    );
  const rows = (
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
  return new Map(rows.map((row) => [row.id, row]));
}

/**
 * One page of the provider's statement against the ledger: each line of a resource that has ended has its posting
 * (`statement_line_without_posting`), which moves the line's amount in its currency (`statement_amount_mismatch`).
 * A line of a resource still moving is left for a later run (the stuck-money checks find one that stopped); a line
 * naming nothing of ours is found by a run over the whole ledger (a run limited to partners cannot tell whose it is).
 */
export async function checkStatementLines(
  db: Database,
  lines: StatementLine[],
  partnerIds: string[] | null,
): Promise<{ checked: number; discrepancies: Discrepancy[] }> {
  const resources = await resourcesOfKeys(
    db,
    lines.map((line) => line.idempotencyKey),
  );
  const matched = lines.map((line) => ({ line, posting: postingOfProviderOperation(line.idempotencyKey) }));
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
  for (const { line, posting } of matched) {
    const amount = new Decimal(line.amount);
    const described = `a ${line.kind} of ${amount.toFixed()} ${line.currency} (${line.providerReference}, ${line.valueDate.toISOString()})`;
    const resource = posting ? resources.get(posting.id) : undefined;
    if (!posting || !resource) {
      if (partnerIds !== null) continue;
      checked += 1;
      discrepancies.push({
        kind: 'statement_line_without_posting',
        subjectType: 'provider_operation',
        subjectId: line.idempotencyKey,
        detail: `the statement shows ${described}, which names no resource of the service`,
      });
      continue;
    }
    if (partnerIds !== null && !partnerIds.includes(resource.partnerId)) continue;
    if (!resource.ended) continue;
    checked += 1;
    const posted = entries.filter((entry) => entry.reference === posting.reference);
    if (posted.length === 0) {
      discrepancies.push({
        kind: 'statement_line_without_posting',
        subjectType: 'provider_operation',
        subjectId: line.idempotencyKey,
        detail: `the statement shows ${described}, and there is no posting ${posting.reference}`,
      });
    } else if (
      !posted.some((entry) => entry.currency === line.currency && amount.eq(new Decimal(entry.amount).abs()))
    ) {
      discrepancies.push({
        kind: 'statement_amount_mismatch',
        subjectType: 'provider_operation',
        subjectId: line.idempotencyKey,
        detail:
          `the statement shows ${described}; posting ${posting.reference} moves ` +
          `${describeTotals(posted.map((entry) => ({ currency: entry.currency, total: entry.amount })))}`,
      });
    }
  }
  return { checked, discrepancies };
}

/** Keeps a page of the statement under the run's report (a retried page keeps nothing twice). */
export async function recordStatementLines(db: Database, reportId: string, lines: StatementLine[]): Promise<void> {
  if (lines.length === 0) return;
  await sql`
    INSERT INTO reconciliation_statement_lines
      (report_id, idempotency_key, provider_reference, kind, currency, amount, value_date)
    SELECT ${reportId}::uuid, l.key, l.reference, l.kind, l.currency, l.amount, l.value_date
    FROM unnest(
      ${lines.map((line) => line.idempotencyKey)}::text[],
      ${lines.map((line) => line.providerReference)}::text[],
      ${lines.map((line) => line.kind)}::text[],
      ${lines.map((line) => line.currency)}::currency[],
      ${lines.map((line) => line.amount)}::numeric[],
      ${lines.map((line) => line.valueDate.toISOString())}::timestamptz[]
    ) AS l(key, reference, kind, currency, amount, value_date)
    ON CONFLICT (report_id, idempotency_key) DO NOTHING`.execute(sqlOf(db));
}

/** The references of postings that record a provider operation (providerOperationOfPosting). */
const providerPostingReference =
  `^(transaction:${uuidText}:(fiat_to_stablecoin|payout|sell_back|refund)` +
  `|deposit:${uuidText}:returned|wallet-transfer:${uuidText}:delivered)$`;

/**
 * The ledger's side: each posting of a provider operation made in `postedFrom`..`postedTo` has a line on the
 * statement the run read (reconciliation_statement_lines of `reportId`).
 */
async function checkStatementPostings(
  db: Database,
  query: BatchQuery,
  context: { reportId: string; postedFrom: Date; postedTo: Date },
): Promise<BatchResult> {
  const rows = (
    await sql`
    SELECT lt.id::text AS id, lt.reference,
      EXISTS (SELECT 1 FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id
              WHERE e.transaction_id = lt.id AND a.system_code = 'settlement') AS pays_outside
    FROM ledger_transactions lt
    WHERE (${query.after}::uuid IS NULL OR lt.id > ${query.after}::uuid)
      AND lt.created_at >= ${context.postedFrom.toISOString()}::timestamptz
      AND lt.created_at < ${context.postedTo.toISOString()}::timestamptz
      AND lt.reference ~ ${providerPostingReference} AND ${inScope(query, partnerOfPosting)}
    ORDER BY lt.id
    LIMIT ${query.limit}`.execute(sqlOf(db))
  ).rows as Array<{ id: string; reference: string; paysOutside: boolean }>;
  const needed = rows
    .map((row) => ({ reference: row.reference, key: providerOperationOfPosting(row.reference, row.paysOutside) }))
    .filter((row): row is { reference: string; key: string } => row.key !== null);
  const onStatement = new Set(
    (
      (
        await sql`
        SELECT idempotency_key FROM reconciliation_statement_lines
        WHERE report_id = ${context.reportId}::uuid AND idempotency_key = ANY(${needed.map(({ key }) => key)}::text[])`.execute(
          sqlOf(db),
        )
      ).rows as Array<{ idempotencyKey: string }>
    ).map((row) => row.idempotencyKey),
  );
  const discrepancies: Discrepancy[] = needed
    .filter(({ key }) => !onStatement.has(key))
    .map(({ reference, key }) => ({
      kind: 'posting_without_statement_line',
      subjectType: 'posting',
      subjectId: reference,
      detail: `the provider's statement has no line ${key} (the operation this posting records)`,
    }));
  return { checked: needed.length, discrepancies, next: nextOf(rows, query.limit, (row) => row.id) };
}

// ---- stuck money ----

const hoursOf = (seconds: string | number) => (Number(seconds) / 3600).toFixed(1);

/** The rows unchanged for longer than their bound (in hours), each as its finding. */
function overBound<Row extends { ageSeconds: string }>(
  rows: Row[],
  boundOf: (row: Row) => number,
  finding: (row: Row, bound: number) => Discrepancy,
): Discrepancy[] {
  return rows.flatMap((row) => {
    const bound = boundOf(row);
    return Number(row.ageSeconds) > bound * 3600 ? [finding(row, bound)] : [];
  });
}

/**
 * Transactions holding money and not moving: any status but a resting one (restingTransactionStatuses), unchanged
 * for longer than its bound (`processing` the processing bound, `error` and any status this code does not know the
 * error bound).
 */
async function checkStuckTransactions(
  db: Database,
  query: BatchQuery,
  context: { asOf: Date; bounds: StuckBounds },
): Promise<BatchResult> {
  const rows = (
    await sql`
    SELECT t.id::text AS id, t.type::text AS type, t.status::text AS status, t.failure_reason,
      extract(epoch FROM ${context.asOf.toISOString()}::timestamptz - t.updated_at)::text AS age_seconds
    FROM transactions t
    WHERE NOT (t.status::text = ANY(${[...restingTransactionStatuses]}::text[]))
      AND (${query.after}::uuid IS NULL OR t.id > ${query.after}::uuid) AND ${inScope(query, sql`t.partner_id`)}
    ORDER BY t.id
    LIMIT ${query.limit}`.execute(sqlOf(db))
  ).rows as Array<{ id: string; type: string; status: string; failureReason: string | null; ageSeconds: string }>;
  const discrepancies = overBound(
    rows,
    (row) => stuckTransactionBoundHours(row.status, context.bounds),
    (row, bound) => ({
      kind: 'transaction_stuck',
      subjectType: 'transaction',
      subjectId: row.id,
      detail:
        `${row.type} ${row.status}${row.failureReason ? ` (${row.failureReason})` : ''} for ` +
        `${hoursOf(row.ageSeconds)} hours, over the ${bound}-hour bound`,
    }),
  );
  return { checked: rows.length, discrepancies, next: nextOf(rows, query.limit, (row) => row.id) };
}

/** Deposits neither taken (accepted) nor sent back (returned) for longer than the deposit bound: `returning`, ... */
async function checkStuckDeposits(
  db: Database,
  query: BatchQuery,
  context: { asOf: Date; bounds: StuckBounds },
): Promise<BatchResult> {
  const rows = (
    await sql`
    SELECT d.id::text AS id, d.transaction_id::text AS transaction_id, d.status::text AS status, d.currency,
      d.amount::text AS amount, d.return_reason,
      extract(epoch FROM ${context.asOf.toISOString()}::timestamptz - d.updated_at)::text AS age_seconds
    FROM transaction_deposits d JOIN transactions t ON t.id = d.transaction_id
    WHERE NOT (d.status::text = ANY(${[...restingDepositStatuses]}::text[]))
      AND (${query.after}::uuid IS NULL OR d.id > ${query.after}::uuid) AND ${inScope(query, sql`t.partner_id`)}
    ORDER BY d.id
    LIMIT ${query.limit}`.execute(sqlOf(db))
  ).rows as Array<{
    id: string;
    transactionId: string;
    status: string;
    currency: string;
    amount: string;
    returnReason: string | null;
    ageSeconds: string;
  }>;
  const discrepancies = overBound(
    rows,
    (row) => stuckDepositBoundHours(row.status, context.bounds),
    (row, bound) => ({
      kind: 'deposit_stuck',
      subjectType: 'deposit',
      subjectId: row.id,
      detail:
        `${new Decimal(row.amount).toFixed()} ${row.currency} of transaction ${row.transactionId} ${row.status}` +
        `${row.returnReason ? ` (${row.returnReason})` : ''} for ${hoursOf(row.ageSeconds)} hours, over the ` +
        `${bound}-hour bound`,
    }),
  );
  return { checked: rows.length, discrepancies, next: nextOf(rows, query.limit, (row) => row.id) };
}

/**
 * Legs of transactions still holding money that did not complete: open (`processing`: the provider was asked and
 * no outcome is recorded, so money may have moved) or `rejected` and not yet refunded, for longer than the
 * processing bound. Subject: the provider operation's key `<transactionId>:<kind>`. A leg of a transaction at rest
 * may stay open (a payout that failed for good and was refunded): the transaction's own checks cover it.
 */
async function checkStuckLegs(
  db: Database,
  query: BatchQuery,
  context: { asOf: Date; bounds: StuckBounds },
): Promise<BatchResult> {
  const rows = (
    await sql`
    SELECT l.id::text AS id, l.transaction_id::text AS transaction_id, l.kind::text AS kind, l.status::text AS status,
      t.status::text AS transaction_status, l.failure_reason,
      extract(epoch FROM ${context.asOf.toISOString()}::timestamptz - l.updated_at)::text AS age_seconds
    FROM transaction_legs l JOIN transactions t ON t.id = l.transaction_id
    WHERE l.status::text <> 'completed' AND NOT (t.status::text = ANY(${[...restingTransactionStatuses]}::text[]))
      AND (${query.after}::uuid IS NULL OR l.id > ${query.after}::uuid) AND ${inScope(query, sql`t.partner_id`)}
    ORDER BY l.id
    LIMIT ${query.limit}`.execute(sqlOf(db))
  ).rows as Array<{
    id: string;
    transactionId: string;
    kind: string;
    status: string;
    transactionStatus: string;
    failureReason: string | null;
    ageSeconds: string;
  }>;
  const discrepancies = overBound(
    rows,
    () => context.bounds.processingHours,
    (row, bound) => ({
      kind: row.status === 'rejected' ? 'leg_rejected_unhandled' : 'leg_not_closed',
      subjectType: 'transaction_leg',
      subjectId: `${row.transactionId}:${row.kind}`,
      detail:
        row.status === 'rejected'
          ? `rejected${row.failureReason ? ` (${row.failureReason})` : ''} ${hoursOf(row.ageSeconds)} hours ago and ` +
            `the transaction is still ${row.transactionStatus} (bound ${bound} hours)`
          : `${row.status} for ${hoursOf(row.ageSeconds)} hours (bound ${bound} hours), the transaction ` +
            `${row.transactionStatus}: ask the provider what became of ${row.transactionId}:${row.kind}`,
    }),
  );
  return { checked: rows.length, discrepancies, next: nextOf(rows, query.limit, (row) => row.id) };
}

export interface BatchContext {
  reportId: string;
  /** When the run started: the end of its statement window and the time stuck money is measured at. */
  asOf: Date;
  bounds: StuckBounds;
  /** The postings whose provider operations must be on the statement (statementPostingsWindow). */
  postedFrom: Date;
}

/**
 * One batch of one check that reads only the database (provider_statement reads its provider first, in the
 * activity, and is checked with checkStatementLines). A legacy check answers skipped.
 */
export async function reconcileBatch(
  db: Database,
  check: Exclude<AnyReconciliationCheck, 'provider_statement' | 'chain_balances'>,
  query: BatchQuery,
  context: BatchContext,
): Promise<BatchResult | { skipped: string }> {
  switch (check) {
    case 'postings':
      return checkPostings(db, query);
    case 'transactions':
      return checkTransactions(db, query);
    case 'wallet_transfers':
      return checkWalletTransfers(db, query);
    case 'accounts':
      return checkAccounts(db, query);
    case 'statement_postings':
      return checkStatementPostings(db, query, {
        reportId: context.reportId,
        postedFrom: context.postedFrom,
        postedTo: context.asOf,
      });
    case 'stuck_transactions':
      return checkStuckTransactions(db, query, context);
    case 'stuck_deposits':
      return checkStuckDeposits(db, query, context);
    case 'stuck_legs':
      return checkStuckLegs(db, query, context);
    case 'provider_operations':
      return { skipped: 'replaced by provider_statement (the provider statement against the ledger)' };
  }
}

// ---- the report ----

export interface ReconciliationReportRow {
  id: string;
  status: ReportStatus;
  partnerIds: string[];
  /** Per check: what it checked and found, or why it was skipped. */
  checks: CheckOutcomes;
  discrepancyCount: number;
  startedAt: Date;
  finishedAt: Date | null;
}

/** Opens a run's report (once: a retried open finds it). */
export async function openReconciliationReport(db: Database, id: string, partnerIds: string[] | null): Promise<void> {
  await sql`
    INSERT INTO reconciliation_reports (id, status, partner_ids)
    VALUES (${id}::uuid, 'running', ${partnerIds ?? []}::uuid[])
    ON CONFLICT (id) DO NOTHING`.execute(sqlOf(db));
}

/** Keeps what a batch found (a retried batch finds them kept: one row per report, kind and subject). */
export async function recordDiscrepancies(db: Database, reportId: string, found: Discrepancy[]): Promise<void> {
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

/**
 * Closes a run's report with its checks' outcomes: discrepancies (how many were kept), else incomplete when a check
 * was skipped, else clean (finishedReportStatus).
 */
export async function closeReconciliationReport(
  db: Database,
  id: string,
  checks: CheckOutcomes,
): Promise<ReconciliationReportRow> {
  const skipped = Object.values(checks).some(isSkipped);
  const [row] = (
    await sql`
    UPDATE reconciliation_reports r SET
      checks = ${JSON.stringify(checks)}::jsonb,
      discrepancy_count = c.count,
      status = CASE WHEN c.count > 0 THEN 'discrepancies' WHEN ${skipped}::boolean THEN 'incomplete' ELSE 'clean' END,
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
  db: Database,
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
export async function listReconciliationReports(db: Database, limit: number): Promise<ReconciliationReportRow[]> {
  return (
    await sql`
    SELECT ${reportColumns} FROM reconciliation_reports r ORDER BY r.started_at DESC LIMIT ${limit}`.execute(sqlOf(db))
  ).rows as ReconciliationReportRow[];
}

/** What a report found, in the order found (bounded: `limit`). */
export async function listDiscrepancies(db: Database, reportId: string, limit: number): Promise<Discrepancy[]> {
  return (
    await sql`
    SELECT kind, subject_type, subject_id, detail FROM reconciliation_discrepancies
    WHERE report_id = ${reportId}::uuid ORDER BY created_at, kind, subject_id LIMIT ${limit}`.execute(sqlOf(db))
  ).rows as Discrepancy[];
}

/** The run's window: when its report was opened (the statement ends there; stuck money is measured then). */
export async function reconciliationReportStart(db: Database, id: string): Promise<Date> {
  const [row] = (await sql`SELECT started_at FROM reconciliation_reports WHERE id = ${id}::uuid`.execute(sqlOf(db)))
    .rows as Array<{ startedAt: Date }>;
  if (!row) throw new Error(`reconciliation report ${id} does not exist`);
  return row.startedAt;
}

/** What the latest finished run of one scope said, for the metrics (docs/observability.md). */
export interface LatestReconciliation {
  /** `all`: a run over the whole ledger (the schedule's); `partners`: a run limited to some partners. */
  scope: 'all' | 'partners';
  finishedAt: Date;
  /** Discrepancies kept, by kind. */
  findings: Record<string, number>;
  checks: CheckOutcomes;
}

/**
 * The latest finished run of each scope, in one statement (a scrape of the worker's metrics; the reports are one a
 * day and a few manual ones, so this reads few rows).
 */
export async function readLatestReconciliations(db: Database): Promise<LatestReconciliation[]> {
  const rows = (
    await sql`
    SELECT l.scope, l.finished_at, l.checks,
      COALESCE((SELECT json_object_agg(k.kind, k.count) FROM (
        SELECT d.kind, count(*)::int AS count FROM reconciliation_discrepancies d WHERE d.report_id = l.id
        GROUP BY d.kind) k), '{}') AS findings
    FROM (
      SELECT DISTINCT ON (scope) r.id, r.finished_at, r.checks,
        CASE WHEN cardinality(r.partner_ids) > 0 THEN 'partners' ELSE 'all' END AS scope
      FROM reconciliation_reports r WHERE r.finished_at IS NOT NULL
      ORDER BY scope, r.finished_at DESC
    ) l`.execute(sqlOf(db))
  ).rows as LatestReconciliation[];
  return rows;
}
