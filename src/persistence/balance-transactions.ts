// A partner's balance transactions: the ledger entries on its wallets and on its fee account (`partner_fees:<id>`),
// which carry the partner's id from the moment they are posted (src/persistence/ledger.ts), so a page of them is one
// range scan of ledger_entries (partner_id, created_at, id) in keyset order (a wallet: one per account of it).
import type { Currency } from '../domain/money';
import type { KeysetQuery } from '../domain/pages';
import { sqlOf, type Database } from './internal/database';
import { Prisma } from './generated/prisma/client';
import { sql } from 'kysely';
import { keysetPage } from './keyset';

export interface BalanceTransactionRow {
  id: string;
  createdAt: Date;
  currency: Currency;
  amount: Prisma.Decimal;
  balanceAfter: Prisma.Decimal | null;
  account: { walletId: string | null; systemCode: string | null };
  transaction: { reference: string; description: string };
}

export interface BalanceTransactionFilter {
  partnerId: string;
  walletId?: string;
  currency?: Currency;
  /** The start of the posting references of a kind of source, e.g. `transaction:`. */
  referencePrefix?: string;
}

export async function listBalanceTransactions(
  db: Database,
  filter: BalanceTransactionFilter,
  keyset: KeysetQuery,
): Promise<BalanceTransactionRow[]> {
  const entries = () => {
    let query = sqlOf(db)
      .selectFrom('ledgerEntries as e')
      .innerJoin('ledgerAccounts as a', 'a.id', 'e.accountId')
      .innerJoin('ledgerTransactions as t', 't.id', 'e.transactionId')
      .select(['e.id', 'e.createdAt', 'e.currency', 'e.amount', 'e.balanceAfter', 'a.walletId', 'a.systemCode'])
      .select(['t.reference', 't.description'])
      .where('e.partnerId', '=', filter.partnerId);
    if (filter.currency) query = query.where('e.currency', '=', filter.currency);
    // A join filter, not a range: a rare kind of source pages through the partner's other entries.
    if (filter.referencePrefix) query = query.where('t.reference', 'like', `${filter.referencePrefix}%`);
    return query;
  };
  let rows;
  if (!filter.walletId) {
    rows = await keysetPage(entries(), 'e', keyset).execute();
  } else {
    // A wallet has one account per currency: a page from each account index, merged (an account filter on the
    // partner's index would page its whole history).
    const accounts = await sqlOf(db)
      .selectFrom('ledgerAccounts')
      .select('id')
      .where('walletId', '=', filter.walletId)
      .$if(filter.currency !== undefined, (query) => query.where('currency', '=', filter.currency!))
      .execute();
    const pages = await Promise.all(
      accounts.map(({ id }) => keysetPage(entries().where('e.accountId', '=', id), 'e', keyset).execute()),
    );
    const newestFirst = (a: { createdAt: Date; id: string }, b: { createdAt: Date; id: string }) =>
      b.createdAt.getTime() - a.createdAt.getTime() || (b.id < a.id ? -1 : b.id > a.id ? 1 : 0);
    rows = pages
      .flat()
      .sort(keyset.direction === 'desc' ? newestFirst : (a, b) => newestFirst(b, a))
      .slice(0, keyset.take);
  }
  return rows.map((row) => ({
    id: row.id,
    createdAt: row.createdAt,
    currency: row.currency,
    amount: row.amount,
    balanceAfter: row.balanceAfter,
    account: { walletId: row.walletId, systemCode: row.systemCode },
    transaction: { reference: row.reference, description: row.description },
  }));
}

/** The fees a partner has earned, per currency: the balances of its fee accounts (sums of their entries). */
export async function partnerFeeBalances(
  db: Database,
  partnerId: string,
): Promise<Array<{ currency: Currency; amount: Prisma.Decimal }>> {
  const rows = (
    await sql`
    SELECT a.currency, COALESCE((SELECT sum(e.amount) FROM ledger_entries e WHERE e.account_id = a.id), 0)::text AS amount
    FROM ledger_accounts a
    WHERE a.system_code = ${`partner_fees:${partnerId}`}
    ORDER BY a.currency::text`.execute(sqlOf(db))
  ).rows as Array<{ currency: Currency; amount: string }>;
  return rows.map(({ currency, amount }) => ({ currency, amount: new Prisma.Decimal(amount) }));
}
