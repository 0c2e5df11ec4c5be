// The wallets table: service-managed wallets, read with their balances (their ledger accounts, which the
// ledger writes).
import type { KeysetQuery } from '../http/pagination';
import type { DatabaseTransaction, Db, Prisma } from './database';
import type { TableMap } from './sql-rows';

export const withBalances = { ledgerAccounts: true } as const;
export type WalletRow = Prisma.WalletGetPayload<{ include: typeof withBalances }>;

/** Any partner's wallet by id, or null. */
export async function findWallet(db: Db, id: string): Promise<WalletRow | null> {
  return db.wallet.findUnique({ where: { id }, include: withBalances });
}

/** A wallet known to exist (e.g. just written in `db`). */
export async function readWallet(db: Db, id: string): Promise<WalletRow> {
  return db.wallet.findUniqueOrThrow({ where: { id }, include: withBalances });
}

/** A page of a partner's wallets, optionally one customer's. */
export async function listWallets(
  db: Db,
  filter: { partnerId: string; customerId?: string },
  keyset: KeysetQuery,
): Promise<WalletRow[]> {
  return db.wallet.findMany({
    where: { ...filter, ...keyset.where },
    orderBy: keyset.orderBy,
    take: keyset.take,
    include: withBalances,
  });
}

export async function insertWallet(
  tx: DatabaseTransaction,
  wallet: {
    id: string;
    partnerId: string;
    customerId: string;
    name: string;
    chain: string;
    address: string;
    keyReference: string;
  },
): Promise<void> {
  await tx.wallet.create({ data: wallet });
}

/** The service-managed wallet at this address on this chain (any partner's), or null. */
export async function findWalletAtAddress(
  db: Db,
  chain: string,
  address: string,
): Promise<{ id: string; partnerId: string } | null> {
  return db.wallet.findUnique({ where: { chain_address: { chain, address } } });
}

/** The columns of a wallet, read in SQL (sql-rows.ts) with the transactions it carries. */
export const walletTable: TableMap<Prisma.WalletGetPayload<object>> = {
  table: 'wallets',
  columns: {
    id: ['id'],
    partnerId: ['partner_id'],
    customerId: ['customer_id'],
    name: ['name'],
    chain: ['chain'],
    address: ['address'],
    keyReference: ['key_reference'],
    createdAt: ['created_at', 'date'],
    updatedAt: ['updated_at', 'date'],
  },
};
