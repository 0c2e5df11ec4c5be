// The bank's own statement as the reconciliation's provider statement: each camt.053 line of the window's days (EUR
// and USD accounts) becomes a StatementLine named by the idempotency key the pain.001 carried in its remittance text
// (the bank copies it onto its statement). Payouts are `payout` lines, refunds and deposits sent back `return` lines,
// returns after completion `payout_return` lines (the key the payout-return path records). Lines of `others` (the exchange, the other rails) come first.
import type { StatementLine } from '../../domain/reconciliation';
import type { ProviderStatements, StatementPage, StatementWindow } from '../provider-statements';
import type { Iso20022BankClient } from './client';
import type { Camt053, Entry } from './messages';

/** A statement entry that names no operation of the service (no key): a credit, a bank's fee, money nobody asked for. */
export type UnkeyedEntryHandler = (entry: Entry, statement: Camt053) => Promise<void>;

const BANK_CURSOR = 'iso20022:';
const DAY_MS = 86_400_000;

export class Iso20022ProviderStatements implements ProviderStatements {
  constructor(
    private readonly bank: Iso20022BankClient,
    private readonly others: ProviderStatements,
    private readonly currencies: readonly string[] = ['EUR', 'USD'],
    /** Told of every entry that is no statement line (the worker keeps those no camt.054 accounted for). */
    private readonly onUnkeyed?: UnkeyedEntryHandler,
  ) {}

  async statementFor(window: StatementWindow, cursor: string | null, limit: number): Promise<StatementPage> {
    if (!cursor?.startsWith(BANK_CURSOR)) {
      const page = await this.others.statementFor(window, cursor, limit);
      if (page.next !== null || page.lines.length >= limit)
        return { lines: page.lines, next: page.next ?? `${BANK_CURSOR}0` };
      const rest = await this.statementFor(window, `${BANK_CURSOR}0`, limit - page.lines.length);
      return { lines: [...page.lines, ...rest.lines], next: rest.next };
    }
    const offset = Number(cursor.slice(BANK_CURSOR.length));
    const lines = await this.bankLines(window);
    const slice = lines.slice(offset, offset + limit);
    return { lines: slice, next: offset + limit < lines.length ? `${BANK_CURSOR}${offset + limit}` : null };
  }

  /**
   * Every line the bank's camt.053s list for the days the window touches (a statement books by day, so a line of the
   * window's first day is kept even when booked before its first hour).
   */
  async bankLines(window: StatementWindow): Promise<StatementLine[]> {
    const lines: StatementLine[] = [];
    const first = Date.UTC(window.from.getUTCFullYear(), window.from.getUTCMonth(), window.from.getUTCDate());
    for (let day = first; day < window.to.getTime(); day += DAY_MS) {
      const date = new Date(day).toISOString().slice(0, 10);
      for (const currency of this.currencies) {
        const statement = await this.bank.statement(currency, date);
        for (const entry of statement.entries) {
          const line = lineOf(entry);
          if (line) lines.push(line);
          else await this.onUnkeyed?.(entry, statement);
        }
      }
    }
    return lines;
  }
}

/**
 * A statement entry as the reconciliation names operations; null for a credit that is no operation of ours (a
 * deposit: the deposit path records it, docs/iso20022.md).
 */
export function lineOf(entry: Entry): StatementLine | null {
  const key = entry.remittance;
  if (!key || !key.includes(':')) return null;
  const isReturn = entry.returnReason !== undefined;
  if (!isReturn && entry.direction !== 'DBIT') return null;
  return {
    idempotencyKey: isReturn ? `${key.split(':')[0]}:payout_return` : key,
    providerReference: entry.reference,
    kind: isReturn ? 'payout_return' : /:(refund|return)$/.test(key) ? 'return' : 'payout',
    currency: entry.amount.currency,
    amount: entry.amount.toString(),
    // camt.053 books by day: the line's value date is the start of its booking day.
    valueDate: new Date(`${entry.bookingDate}T00:00:00Z`),
  };
}
