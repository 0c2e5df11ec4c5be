// A partner's balance transactions: the ledger entries on its wallets and on its fee account (`partner_fees:<id>`),
// which carry the partner's id from the moment they are posted (src/persistence/ledger.ts), so a page of them is one
// range scan of ledger_entries (partner_id, created_at, id) in keyset order.
import type { KeysetQuery } from '../http/pagination';
import { type Db, Prisma, sql, sqlOf, type SqlDb } from './database';

export interface BalanceTransactionRow {
  id: string;
  createdAt: Date;
  currency: string;
  amount: Prisma.Decimal;
  balanceAfter: Prisma.Decimal | null;
  account: { walletId: string | null; systemCode: string | null };
  transaction: { reference: string; description: string };
}

export interface BalanceTransactionFilter {
  partnerId: string;
  walletId?: string;
  currency?: string;
  /** The start of the posting references of a kind of source, e.g. `transaction:`. */
  referencePrefix?: string;
}

export async function listBalanceTransactions(
  db: Db,
  filter: BalanceTransactionFilter,
  keyset: KeysetQuery,
): Promise<BalanceTransactionRow[]> {
  return db.ledgerEntry.findMany({
    where: {
      partnerId: filter.partnerId,
      ...(filter.currency && { currency: filter.currency }),
      ...(filter.walletId && { account: { walletId: filter.walletId } }),
      ...(filter.referencePrefix && { transaction: { reference: { startsWith: filter.referencePrefix } } }),
      ...keyset.where,
    },
    orderBy: keyset.orderBy,
    take: keyset.take,
    select: {
      id: true,
      createdAt: true,
      currency: true,
      amount: true,
      balanceAfter: true,
      account: { select: { walletId: true, systemCode: true } },
      transaction: { select: { reference: true, description: true } },
    },
  });
}

/** The fees a partner has earned, per currency: the balances of its fee accounts (sums of their entries). */
export async function partnerFeeBalances(
  db: SqlDb,
  partnerId: string,
): Promise<Array<{ currency: string; amount: Prisma.Decimal }>> {
  const rows = (
    await sql`
    SELECT a.currency, COALESCE((SELECT sum(e.amount) FROM ledger_entries e WHERE e.account_id = a.id), 0)::text AS amount
    FROM ledger_accounts a
    WHERE a.system_code = ${`partner_fees:${partnerId}`}
    ORDER BY a.currency`.execute(sqlOf(db))
  ).rows as Array<{ currency: string; amount: string }>;
  return rows.map(({ currency, amount }) => ({ currency, amount: new Prisma.Decimal(amount) }));
}
