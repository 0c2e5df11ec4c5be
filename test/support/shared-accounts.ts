// The run's shared system accounts (settlement, fiat_clearing, fx, ...): every test file posts to them, so a test
// that reads their balances reads them while none of their entries changes, and subtracts what other files posted
// between two of its reads.
import { Decimal } from '../../src/domain/money';
import type { LedgerAccountRef } from '../../src/domain/ledger';
import type { Harness } from './harness';

interface Entry {
  id: string;
  /** `system_code:currency` */
  name: string;
  amount: string;
  reference: string;
}

/** Every entry on the system accounts `accounts`, by id. */
async function entriesOf(harness: Harness, accounts: LedgerAccountRef[]): Promise<Map<string, Entry>> {
  const rows = await harness.prisma.$queryRaw<Entry[]>`
    SELECT e.id, a.system_code || ':' || a.currency AS name, e.amount::text AS amount, t.reference
    FROM ledger_entries e
    JOIN ledger_accounts a ON a.id = e.account_id
    JOIN ledger_transactions t ON t.id = e.transaction_id
    WHERE (a.system_code, a.currency) IN (
      SELECT * FROM unnest(${accounts.map((ref) => ('system' in ref ? ref.system : null))}::text[],
        ${accounts.map((ref) => ref.currency)}::currency[]))`;
  return new Map(rows.map((row) => [row.id, row]));
}

export interface UnpostedRead<T> {
  value: T;
  /** The accounts' entries `value` counts. */
  entries: Map<string, Entry>;
}

/**
 * `read` taken while none of the accounts' entries changed: the entries read before and after it are the same ones,
 * so what it read counts exactly these entries.
 */
export async function whileUnposted<T>(
  harness: Harness,
  accounts: LedgerAccountRef[],
  read: () => Promise<T>,
): Promise<UnpostedRead<T>> {
  let entries = await entriesOf(harness, accounts);
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const value = await read();
    const after = await entriesOf(harness, accounts);
    if (after.size === entries.size && [...after.keys()].every((id) => entries.has(id))) return { value, entries };
    entries = after;
  }
  throw new Error('the shared accounts kept changing while they were read');
}

/**
 * What other postings (references not matching `ours`) added to an account between two reads: the sum of the entries
 * `after` counts and `before` did not.
 */
export function postedByOthers(
  before: UnpostedRead<unknown>,
  after: UnpostedRead<unknown>,
  ours: RegExp,
): (account: LedgerAccountRef) => Decimal {
  const others = [...after.entries.values()].filter(
    (entry) => !before.entries.has(entry.id) && !ours.test(entry.reference),
  );
  return (account) =>
    others
      .filter((entry) => entry.name === `${'system' in account ? account.system : ''}:${account.currency}`)
      .reduce((sum, entry) => sum.plus(entry.amount), new Decimal(0));
}
