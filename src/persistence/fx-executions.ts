// Settlement legs executed at a liquidity provider's firm quote: the execution and its FX gain or loss posting are
// written in one database transaction (the posting's reference makes a repeat a no-op, the primary key one row).
import { fxResultEntries } from '../domain/fx';
import { ledgerReference } from '../domain/ledger';
import { Money, type Currency } from '../domain/money';
import { sql } from 'kysely';
import { sqlOf, withDatabaseTransaction, type DatabaseClient, type Database } from './internal/database';
import { postLedgerEntries } from './ledger';

export interface FxExecutionRecord {
  transactionId: string;
  step: 'fiat_to_stablecoin' | 'stablecoin_to_fiat';
  quoteId: string;
  sold: Money;
  atLockedRate: Money;
  executed: Money;
  /** Units bought per unit sold, as the provider executed. */
  price: string;
  executedAt: Date;
}

export const fxLedgerReference = (transactionId: string, step: string) => ledgerReference(transactionId, `fx:${step}`);

/** Records the execution and books its result; a second record of the same leg keeps the first. */
export async function recordFxExecution(prisma: DatabaseClient, record: FxExecutionRecord): Promise<void> {
  const result = record.executed.minus(record.atLockedRate);
  await withDatabaseTransaction(prisma, async (tx) => {
    const inserted = await sql`
      INSERT INTO fx_executions (transaction_id, step, quote_id, sold_currency, sold_amount, bought_currency,
        at_locked_rate, executed_amount, price, result, executed_at)
      VALUES (${record.transactionId}::uuid, ${record.step}, ${record.quoteId}, ${record.sold.currency},
        ${record.sold.toString()}::numeric, ${record.executed.currency}, ${record.atLockedRate.toString()}::numeric,
        ${record.executed.toString()}::numeric, ${record.price}::numeric, ${result.toString()}::numeric,
        ${record.executedAt})
      ON CONFLICT (transaction_id, step) DO NOTHING
      RETURNING transaction_id`.execute(sqlOf(tx));
    if (inserted.rows.length === 0) return;
    const entries = fxResultEntries(result);
    if (entries.length === 0) return;
    await postLedgerEntries(tx, {
      reference: fxLedgerReference(record.transactionId, record.step),
      description: `FX ${result.isNegative() ? 'loss' : 'gain'} of ${record.step} of transaction ${record.transactionId} (quote ${record.quoteId})`,
      entries,
    });
  });
}

export interface FxExecutionRow {
  transactionId: string;
  step: FxExecutionRecord['step'];
  quoteId: string;
  sold: Money;
  atLockedRate: Money;
  executed: Money;
  price: string;
  result: Money;
  executedAt: Date;
}

/** A transaction's executions (the settlement report shows them). */
export async function fxExecutionsOf(db: Database, transactionIds: readonly string[]): Promise<FxExecutionRow[]> {
  if (transactionIds.length === 0) return [];
  const rows = (
    await sql`
    SELECT transaction_id, step, quote_id, sold_currency, sold_amount, bought_currency, at_locked_rate,
      executed_amount, price, result, executed_at
    FROM fx_executions WHERE transaction_id = ANY(${[...transactionIds]}::uuid[])
    ORDER BY executed_at, step`.execute(sqlOf(db))
  ).rows as RawRow[];
  return rows.map(rowOf);
}

export interface FxResultByPair {
  pair: string;
  /** The currency results are in (what the legs bought). */
  currency: string;
  legs: number;
  sold: string;
  gains: string;
  losses: string;
  net: string;
}

/** The FX result per currency pair (sold/bought) of the executions in [from, to). */
export async function fxResultByPair(db: Database, from: Date, to: Date): Promise<FxResultByPair[]> {
  const rows = (
    await sql`
    SELECT sold_currency, bought_currency, count(*)::int AS legs, sum(sold_amount) AS sold,
      coalesce(sum(result) FILTER (WHERE result > 0), 0) AS gains,
      coalesce(sum(result) FILTER (WHERE result < 0), 0) AS losses, sum(result) AS net
    FROM fx_executions WHERE executed_at >= ${from} AND executed_at < ${to}
    GROUP BY sold_currency, bought_currency ORDER BY sold_currency::text, bought_currency::text`.execute(sqlOf(db))
  ).rows as Array<{
    soldCurrency: Currency;
    boughtCurrency: Currency;
    legs: number;
    sold: unknown;
    gains: unknown;
    losses: unknown;
    net: unknown;
  }>;
  return rows.map((row) => {
    const bought = row.boughtCurrency;
    const sold = row.soldCurrency;
    return {
      pair: `${row.soldCurrency}/${row.boughtCurrency}`,
      currency: row.boughtCurrency,
      legs: row.legs,
      sold: Money.of(sold, String(row.sold)).toString(),
      gains: Money.of(bought, String(row.gains)).toString(),
      losses: Money.of(bought, String(row.losses)).toString(),
      net: Money.of(bought, String(row.net)).toString(),
    };
  });
}

/** As the SQL builder returns it (camel-cased names). */
interface RawRow {
  transactionId: string;
  step: FxExecutionRecord['step'];
  quoteId: string;
  soldCurrency: Currency;
  soldAmount: unknown;
  boughtCurrency: Currency;
  atLockedRate: unknown;
  executedAmount: unknown;
  price: unknown;
  result: unknown;
  executedAt: Date;
}

function rowOf(row: RawRow): FxExecutionRow {
  const sold = row.soldCurrency;
  const bought = row.boughtCurrency;
  return {
    transactionId: row.transactionId,
    step: row.step,
    quoteId: row.quoteId,
    sold: Money.of(sold, String(row.soldAmount)),
    atLockedRate: Money.of(bought, String(row.atLockedRate)),
    executed: Money.of(bought, String(row.executedAmount)),
    price: String(row.price),
    result: Money.of(bought, String(row.result)),
    executedAt: new Date(row.executedAt),
  };
}
