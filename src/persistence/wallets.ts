// The wallets table: service-managed wallets, read with their balances (their ledger accounts, which the
// ledger writes).
import type { Blockchain } from '../domain/rails';
import type { KeysetQuery } from '../domain/pages';
import { childrenByParent, keysetPage } from './keyset';
import { type DatabaseTransaction, type Database, sqlOf, prismaOf, type DatabaseClient } from './internal/database';
import type { Prisma } from './generated/prisma/client';

export const withBalances = { ledgerAccounts: true } as const;
export type WalletRow = Prisma.WalletGetPayload<{ include: typeof withBalances }>;

export type WalletColumns = Prisma.WalletGetPayload<object>;

/** Any partner's wallet by id without its balances (what a transaction's checks need), or null. */
export async function findWalletColumns(db: Database, id: string): Promise<WalletColumns | null> {
  return (await sqlOf(db).selectFrom('wallets').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
}

/** Any partner's wallet by id, or null. */
export async function findWallet(db: Database, id: string): Promise<WalletRow | null> {
  const sql = sqlOf(db);
  const wallet = await findWalletColumns(db, id);
  if (!wallet) return null;
  // A statement of their own: balances are decimals, which JSON would not carry exactly.
  const ledgerAccounts = await sql.selectFrom('ledgerAccounts').selectAll().where('walletId', '=', id).execute();
  return { ...wallet, ledgerAccounts };
}

/** A wallet known to exist (e.g. just written in `db`). */
export async function readWallet(db: Database, id: string): Promise<WalletRow> {
  const wallet = await findWallet(db, id);
  if (!wallet) throw new Error(`wallet ${id} does not exist`);
  return wallet;
}

/** A page of a partner's wallets, optionally one customer's. */
export async function listWallets(
  db: DatabaseClient,
  filter: { partnerId: string; customerId?: string },
  keyset: KeysetQuery,
): Promise<WalletRow[]> {
  const sql = sqlOf(db);
  let query = sql.selectFrom('wallets as w').selectAll('w').where('w.partnerId', '=', filter.partnerId);
  if (filter.customerId) query = query.where('w.customerId', '=', filter.customerId);
  const wallets = await keysetPage(query, 'w', keyset).execute();
  if (wallets.length === 0) return [];
  const accounts = await sql
    .selectFrom('ledgerAccounts')
    .selectAll()
    .where(
      'walletId',
      'in',
      wallets.map(({ id }) => id),
    )
    .execute();
  const accountsOf = childrenByParent(accounts, 'walletId');
  return wallets.map((wallet) => ({ ...wallet, ledgerAccounts: accountsOf(wallet.id) }));
}

export async function insertWallet(
  tx: DatabaseTransaction,
  wallet: {
    id: string;
    partnerId: string;
    customerId: string;
    name: string;
    chain: Blockchain;
    address: string;
    keyReference: string;
  },
): Promise<void> {
  const now = new Date();
  await sqlOf(tx)
    .insertInto('wallets')
    .values({ ...wallet, createdAt: now, updatedAt: now })
    .execute();
}

/** The service-managed wallet at this address on this chain (any partner's), or null. */
export async function findWalletAtAddress(
  db: DatabaseClient,
  chain: Blockchain,
  address: string,
): Promise<{ id: string; partnerId: string } | null> {
  return prismaOf(db).wallet.findUnique({ where: { chain_address: { chain, address } } });
}
