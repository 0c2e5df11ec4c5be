// What the service keeps of a bank's reports (docs/iso20022.md): every credit camt.054 notified, with the payer's
// account (a refund or a deposit's return is sent back to it), and what the bank reported that the service could not
// take (a credit naming no transaction, a statement line matching no operation), listed for operators. Both tables are
// append-only for the services' roles; a report read twice keeps its first row.
import { jsonParameter, sqlOf, type Database } from './internal/database';
import { newId } from '../domain/ids';
import type { Currency } from '../domain/money';

export type BankAccountJson = { iban: string } | { number: string };
export type BankAgentJson = { bic: string } | { abaRoutingNumber: string };

export interface BankCreditInput {
  bank: string;
  entryReference: string;
  account: string;
  messageId: string;
  /** Decimal text. */
  amount: string;
  currency: Currency;
  /** YYYY-MM-DD */
  bookingDate: string;
  remittance: string | null;
  debtorName: string | null;
  debtorAccount: BankAccountJson | null;
  debtorAgent: BankAgentJson | null;
}

export interface BankCreditDebtor {
  name: string | null;
  account: BankAccountJson | null;
  agent: BankAgentJson | null;
}

export async function recordBankCredit(db: Database, credit: BankCreditInput): Promise<void> {
  await sqlOf(db)
    .insertInto('bankCredits')
    .values({
      ...credit,
      bookingDate: new Date(`${credit.bookingDate}T00:00:00Z`),
      debtorAccount: jsonParameter(credit.debtorAccount),
      debtorAgent: jsonParameter(credit.debtorAgent),
      recordedAt: new Date(),
    })
    .onConflict((conflict) => conflict.columns(['bank', 'entryReference']).doNothing())
    .execute();
}

/** The payer of a credit as the bank named it, or null when the service never read that credit. */
export async function findBankCreditDebtor(
  db: Database,
  bank: string,
  entryReference: string,
): Promise<BankCreditDebtor | null> {
  const row = await sqlOf(db)
    .selectFrom('bankCredits')
    .select(['debtorName', 'debtorAccount', 'debtorAgent'])
    .where('bank', '=', bank)
    .where('entryReference', '=', entryReference)
    .executeTakeFirst();
  if (!row) return null;
  return {
    name: row.debtorName,
    account: (row.debtorAccount ?? null) as BankAccountJson | null,
    agent: (row.debtorAgent ?? null) as BankAgentJson | null,
  };
}

export interface UnmatchedBankEntryInput {
  bank: string;
  /** camt.054 | camt.053 */
  source: 'camt.054' | 'camt.053';
  entryReference: string;
  account: string;
  messageId: string;
  direction: 'CRDT' | 'DBIT';
  amount: string;
  currency: string;
  bookingDate: string;
  remittance: string | null;
  counterparty: string | null;
  detail: string;
}

export interface UnmatchedBankEntryRow extends Omit<UnmatchedBankEntryInput, 'bookingDate'> {
  id: string;
  bookingDate: string;
  recordedAt: Date;
}

/** Keeps one entry the service could not take; true when it is new (not kept before). */
export async function recordUnmatchedBankEntry(db: Database, entry: UnmatchedBankEntryInput): Promise<boolean> {
  const inserted = await sqlOf(db)
    .insertInto('bankUnmatchedEntries')
    .values({
      ...entry,
      id: newId(),
      bookingDate: new Date(`${entry.bookingDate}T00:00:00Z`),
      recordedAt: new Date(),
    })
    .onConflict((conflict) => conflict.columns(['bank', 'source', 'entryReference']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** The entries kept since a time (or all), oldest first, at most `limit`. */
export async function listUnmatchedBankEntries(
  db: Database,
  filter: { since?: Date; bank?: string; limit?: number } = {},
): Promise<UnmatchedBankEntryRow[]> {
  let query = sqlOf(db).selectFrom('bankUnmatchedEntries').selectAll();
  if (filter.since) query = query.where('recordedAt', '>=', filter.since);
  if (filter.bank) query = query.where('bank', '=', filter.bank);
  const rows = await query
    .orderBy('recordedAt')
    .orderBy('id')
    .limit(filter.limit ?? 1000)
    .execute();
  return rows.map((row) => ({
    ...row,
    source: row.source as UnmatchedBankEntryRow['source'],
    direction: row.direction as UnmatchedBankEntryRow['direction'],
    amount: row.amount.toString(),
    bookingDate: new Date(row.bookingDate).toISOString().slice(0, 10),
  }));
}
