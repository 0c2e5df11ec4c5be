// The wallet_transfers table, read with both wallets: the API's commands and reads, and the transfer
// activities, which change a transfer's status only under its row lock. Also the one read of the wallets
// table a transfer needs, a destination given by its address.
import type { WalletTransferStatus } from '../domain/wallet-transfers';
import type { KeysetQuery } from '../http/pagination';
import type { DatabaseTransaction, Db, Prisma } from './database';

export const withWallets = { fromWallet: true, toWallet: true } as const;
export type WalletTransferRow = Prisma.WalletTransferGetPayload<{ include: typeof withWallets }>;

/** Any partner's transfer by id, or null. */
export async function findWalletTransfer(db: Db, id: string): Promise<WalletTransferRow | null> {
  return db.walletTransfer.findUnique({ where: { id }, include: withWallets });
}

/** This partner's transfer by id, or null. */
export async function findPartnerWalletTransfer(
  db: Db,
  partnerId: string,
  id: string,
): Promise<WalletTransferRow | null> {
  return db.walletTransfer.findFirst({ where: { id, partnerId }, include: withWallets });
}

/** A page of a partner's transfers, optionally those from or to one wallet, optionally of one status. */
export async function listWalletTransfers(
  db: Db,
  filter: { partnerId: string; walletId?: string; status?: WalletTransferStatus },
  keyset: KeysetQuery,
): Promise<WalletTransferRow[]> {
  const byWallet = filter.walletId ? { OR: [{ fromWalletId: filter.walletId }, { toWalletId: filter.walletId }] } : {};
  return db.walletTransfer.findMany({
    where: {
      AND: [{ partnerId: filter.partnerId }, byWallet, filter.status ? { status: filter.status } : {}, keyset.where],
    },
    orderBy: keyset.orderBy,
    take: keyset.take,
    include: withWallets,
  });
}

export async function insertWalletTransfer(
  tx: DatabaseTransaction,
  transfer: {
    id: string;
    partnerId: string;
    customerId: string;
    fromWalletId: string;
    toWalletId: string | null;
    toAddress: string;
    chain: string;
    currency: string;
    amount: string;
    networkFee: string;
    status: WalletTransferStatus;
    sandboxSimulation: string | null;
  },
): Promise<WalletTransferRow> {
  return tx.walletTransfer.create({ data: transfer, include: withWallets });
}

/** The transfer under its row lock, or null: one status change of it at a time, even across workers. */
export async function lockWalletTransfer(tx: DatabaseTransaction, id: string): Promise<WalletTransferRow | null> {
  await tx.$queryRaw`SELECT id FROM wallet_transfers WHERE id = ${id}::uuid FOR UPDATE`;
  return tx.walletTransfer.findUnique({ where: { id }, include: withWallets });
}

/** Sets the status, with the hash of the send or the failure's reason when there is one. */
export async function updateWalletTransferStatus(
  tx: DatabaseTransaction,
  id: string,
  status: WalletTransferStatus,
  changes: { txHash?: string; failureReason?: string },
): Promise<WalletTransferRow> {
  return tx.walletTransfer.update({ where: { id }, data: { status, ...changes }, include: withWallets });
}
