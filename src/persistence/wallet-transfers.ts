// The wallet_transfers table, read with both wallets: the API's commands and reads, and the transfer
// activities, which change a transfer's status only under its row lock. Also the one read of the wallets
// table a transfer needs, a destination given by its address.
import type { Currency } from '../domain/money';
import type { Blockchain } from '../domain/rails';
import type { WalletTransferStatus } from '../domain/wallet-transfers';
import type { KeysetQuery } from '../domain/pages';
import { keysetPage } from './keyset';
import type { Kysely } from 'kysely';
import { jsonObjectFrom } from 'kysely/helpers/postgres';
import {
  type DatabaseTransaction,
  type DB,
  type Database,
  relatedRow,
  sqlOf,
  prismaOf,
  type DatabaseClient,
} from './internal/database';
import type { Prisma } from './generated/prisma/client';

export const withWallets = { fromWallet: true, toWallet: true } as const;
export type WalletTransferRow = Prisma.WalletTransferGetPayload<{ include: typeof withWallets }>;

/** Any partner's transfer by id, or null. */
export async function findWalletTransfer(db: DatabaseClient, id: string): Promise<WalletTransferRow | null> {
  return prismaOf(db).walletTransfer.findUnique({ where: { id }, include: withWallets });
}

/** This partner's transfer by id, or null. */
export async function findPartnerWalletTransfer(
  db: DatabaseClient,
  partnerId: string,
  id: string,
): Promise<WalletTransferRow | null> {
  return prismaOf(db).walletTransfer.findFirst({ where: { id, partnerId }, include: withWallets });
}

/** A page of a partner's transfers, optionally those from or to one wallet, optionally of one status. */
export async function listWalletTransfers(
  db: DatabaseClient,
  filter: { partnerId: string; walletId?: string; status?: WalletTransferStatus },
  keyset: KeysetQuery,
): Promise<WalletTransferRow[]> {
  const status = filter.status;
  const transfers = () => {
    const query = walletTransferRows(sqlOf(db)).where('t.partnerId', '=', filter.partnerId);
    return status ? query.where('t.status', '=', status) : query;
  };
  const walletId = filter.walletId;
  if (!walletId) return (await keysetPage(transfers(), 't', keyset).execute()).map(asWalletTransferRow);
  // From or to the wallet: a page from each of the two wallet indexes, merged (an OR would page the partner's
  // whole history in order). A transfer to itself comes from the first.
  const from = await keysetPage(transfers().where('t.fromWalletId', '=', walletId), 't', keyset).execute();
  const to = await keysetPage(
    transfers().where('t.toWalletId', '=', walletId).where('t.fromWalletId', '!=', walletId),
    't',
    keyset,
  ).execute();
  const newestFirst = (a: { createdAt: Date; id: string }, b: { createdAt: Date; id: string }) =>
    b.createdAt.getTime() - a.createdAt.getTime() || (b.id < a.id ? -1 : b.id > a.id ? 1 : 0);
  const merged = [...from, ...to].sort(keyset.direction === 'desc' ? newestFirst : (a, b) => newestFirst(b, a));
  return merged.slice(0, keyset.take).map(asWalletTransferRow);
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
    chain: Blockchain;
    currency: Currency;
    amount: string;
    networkFee: string;
    status: WalletTransferStatus;
    sandboxSimulation: string | null;
  },
): Promise<WalletTransferRow> {
  const now = new Date();
  await sqlOf(tx)
    .insertInto('walletTransfers')
    .values({ ...transfer, createdAt: now, updatedAt: now })
    .execute();
  return asWalletTransferRow(
    await walletTransferRows(sqlOf(tx)).where('t.id', '=', transfer.id).executeTakeFirstOrThrow(),
  );
}

/** The statement reading transfers with both wallets. */
function walletTransferRows(db: Kysely<DB>) {
  return db
    .selectFrom('walletTransfers as t')
    .selectAll('t')
    .select((select) => [
      jsonObjectFrom(select.selectFrom('wallets as f').selectAll('f').whereRef('f.id', '=', 't.fromWalletId')).as(
        'fromWallet',
      ),
      jsonObjectFrom(select.selectFrom('wallets as d').selectAll('d').whereRef('d.id', '=', 't.toWalletId')).as(
        'toWallet',
      ),
    ]);
}

type SelectedWalletTransfer = Awaited<ReturnType<ReturnType<typeof walletTransferRows>['executeTakeFirstOrThrow']>>;

function asWalletTransferRow(row: SelectedWalletTransfer): WalletTransferRow {
  return {
    ...row,
    fromWallet: relatedRow<WalletTransferRow['fromWallet']>(row.fromWallet)!,
    toWallet: relatedRow<WalletTransferRow['toWallet']>(row.toWallet),
  };
}

/** The transfer under its row lock, or null: one status change of it at a time, even across workers. */
export async function lockWalletTransfer(tx: DatabaseTransaction, id: string): Promise<WalletTransferRow | null> {
  const row = await walletTransferRows(sqlOf(tx)).where('t.id', '=', id).forUpdate('t').executeTakeFirst();
  return row ? asWalletTransferRow(row) : null;
}

/** Sets the status, with the hash of the send or the failure's reason when there is one. */
export async function updateWalletTransferStatus(
  tx: DatabaseTransaction,
  id: string,
  status: WalletTransferStatus,
  changes: { txHash?: string; failureReason?: string },
): Promise<WalletTransferRow> {
  await sqlOf(tx)
    .updateTable('walletTransfers')
    .set({ status, ...changes, updatedAt: new Date() })
    .where('id', '=', id)
    .execute();
  return asWalletTransferRow(await walletTransferRows(sqlOf(tx)).where('t.id', '=', id).executeTakeFirstOrThrow());
}
