// The sandbox provider statement (src/providers/provider-statements.ts): the simulated providers' own operation log
// (sandbox_rail_operations, written by the sandbox exchange, banks and chain) as statement lines, with the
// disagreements an operator or a test asked for (sandbox_statement_adjustments, docs/reconciliation.md).
import type { StatementLine } from '../domain/reconciliation';
import { sqlOf, type Database } from './internal/database';
import { sql } from 'kysely';

export type SandboxStatementAdjustment =
  | { action: 'drop'; idempotencyKey: string }
  | { action: 'amount'; idempotencyKey: string; amount: string }
  | { action: 'extra'; idempotencyKey: string; kind: string; currency: string; amount: string };

/** Sets the one adjustment of a key (replacing an earlier one). */
export async function adjustSandboxStatement(db: Database, adjustment: SandboxStatementAdjustment): Promise<void> {
  const kind = adjustment.action === 'extra' ? adjustment.kind : null;
  const currency = adjustment.action === 'extra' ? adjustment.currency : null;
  const amount = adjustment.action === 'drop' ? null : adjustment.amount;
  await sql`
    INSERT INTO sandbox_statement_adjustments (idempotency_key, action, kind, currency, amount)
    VALUES (${adjustment.idempotencyKey}, ${adjustment.action}, ${kind}, ${currency}, ${amount}::numeric)
    ON CONFLICT (idempotency_key) DO UPDATE SET action = excluded.action, kind = excluded.kind,
      currency = excluded.currency, amount = excluded.amount, created_at = now()`.execute(sqlOf(db));
}

/** Removes the adjustment of a key, or every one; answers how many were removed. */
export async function clearSandboxStatementAdjustments(db: Database, idempotencyKey: string | null): Promise<number> {
  const result = await sql`
    DELETE FROM sandbox_statement_adjustments
    WHERE ${idempotencyKey}::text IS NULL OR idempotency_key = ${idempotencyKey}::text`.execute(sqlOf(db));
  return Number(result.numAffectedRows ?? 0);
}

export async function listSandboxStatementAdjustments(db: Database): Promise<SandboxStatementAdjustment[]> {
  const rows = (
    await sql`
    SELECT idempotency_key, action, kind, currency, amount::text AS amount FROM sandbox_statement_adjustments
    ORDER BY created_at, idempotency_key`.execute(sqlOf(db))
  ).rows as Array<{ idempotencyKey: string; action: string; kind: string; currency: string; amount: string }>;
  return rows.map(({ idempotencyKey, action, kind, currency, amount }) =>
    action === 'drop'
      ? { action, idempotencyKey }
      : action === 'amount'
        ? { action, idempotencyKey, amount }
        : { action: 'extra', idempotencyKey, kind, currency, amount },
  );
}

/**
 * A page of the sandbox statement of [from, to): every completed operation made then (a rejected one moved no money),
 * less the dropped ones, with the changed amounts, and the extra lines added then; in (value date, key) order. The
 * cursor is the last line's `<value date ISO>|<key>`.
 */
export async function sandboxStatementPage(
  db: Database,
  window: { from: Date; to: Date },
  cursor: string | null,
  limit: number,
): Promise<{ lines: StatementLine[]; next: string | null }> {
  const separator = cursor?.indexOf('|') ?? -1;
  const afterDate = cursor && separator > 0 ? cursor.slice(0, separator) : null;
  const afterKey = cursor && separator > 0 ? cursor.slice(separator + 1) : null;
  const rows = (
    await sql`
    SELECT l.idempotency_key, l.kind, l.currency, l.amount::text AS amount, l.value_date FROM (
      SELECT o.idempotency_key, o.kind, o.currency, COALESCE(a.amount, o.amount) AS amount, o.created_at AS value_date
      FROM sandbox_rail_operations o
      LEFT JOIN sandbox_statement_adjustments a ON a.idempotency_key = o.idempotency_key AND a.action <> 'extra'
      WHERE o.outcome = 'completed' AND a.action IS DISTINCT FROM 'drop'
      UNION ALL
      SELECT a.idempotency_key, a.kind, a.currency, a.amount, a.created_at
      FROM sandbox_statement_adjustments a WHERE a.action = 'extra'
    ) l
    WHERE l.value_date >= ${window.from.toISOString()}::timestamptz AND l.value_date < ${window.to.toISOString()}::timestamptz
      AND (${afterDate}::timestamptz IS NULL OR (l.value_date, l.idempotency_key) > (${afterDate}::timestamptz, ${afterKey}::text))
    ORDER BY l.value_date, l.idempotency_key
    LIMIT ${limit}`.execute(sqlOf(db))
  ).rows as Array<{ idempotencyKey: string; kind: string; currency: string; amount: string; valueDate: Date }>;
  const lines = rows.map((row) => ({
    idempotencyKey: row.idempotencyKey,
    // The sandbox's providers name an operation by the key they were sent.
    providerReference: `sandbox:${row.idempotencyKey}`,
    kind: row.kind,
    currency: row.currency,
    amount: row.amount,
    valueDate: row.valueDate,
  }));
  const last = lines[lines.length - 1];
  return {
    lines,
    next: lines.length < limit || !last ? null : `${last.valueDate.toISOString()}|${last.idempotencyKey}`,
  };
}
