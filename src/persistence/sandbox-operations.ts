// The sandbox's simulated exchange, banks and chain keep what they did in sandbox_rail_operations, keyed by the
// idempotency key the service sent, as real providers keep their operations: a repeated request finds the first
// one (and counts `requests` up) instead of making a second.
import type { Currency } from '../domain/money';
import { sqlOf, type Database } from './internal/database';
import { sql } from 'kysely';

export type SandboxOperationKind = 'conversion' | 'payout' | 'return' | 'sell_back' | 'chain_send' | 'payout_return';

export interface SandboxOperation {
  kind: SandboxOperationKind;
  currency: Currency;
  /** A decimal string. */
  amount: string;
  outcome: 'completed' | 'rejected';
}

/** Records the operation under its key, or finds the first one made under it. Answers the operation kept. */
export async function recordSandboxOperation(
  db: Database,
  idempotencyKey: string,
  operation: SandboxOperation,
): Promise<SandboxOperation> {
  const [row] = (
    await sql`
    INSERT INTO sandbox_rail_operations (idempotency_key, kind, currency, amount, outcome)
    VALUES (${idempotencyKey}, ${operation.kind}, ${operation.currency}, ${operation.amount}::numeric, ${operation.outcome})
    ON CONFLICT (idempotency_key) DO UPDATE SET requests = sandbox_rail_operations.requests + 1
    RETURNING kind, currency, amount, outcome`.execute(sqlOf(db))
  ).rows as Array<{ kind: string; currency: Currency; amount: unknown; outcome: string }>;
  return row ? operationOf(row) : operation;
}

/** The operation made under the key, or null when none was. */
export async function findSandboxOperation(db: Database, idempotencyKey: string): Promise<SandboxOperation | null> {
  const [row] = (
    await sql`
    SELECT kind, currency, amount, outcome FROM sandbox_rail_operations WHERE idempotency_key = ${idempotencyKey}`.execute(
      sqlOf(db),
    )
  ).rows as Array<{ kind: string; currency: Currency; amount: unknown; outcome: string }>;
  return row ? operationOf(row) : null;
}

function operationOf(row: { kind: string; currency: Currency; amount: unknown; outcome: string }): SandboxOperation {
  return {
    kind: row.kind as SandboxOperationKind,
    currency: row.currency,
    amount: String(row.amount),
    outcome: row.outcome as SandboxOperation['outcome'],
  };
}
