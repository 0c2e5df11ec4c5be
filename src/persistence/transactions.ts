// Transactions and their deposits: the rows of the transactions, transaction_deposits tables. A transaction is read
// with the accounts its presenter shows (TransactionRow) in one SQL statement: the read behind
// GET /v1/transactions/{id} that partners poll, and the row every settlement step locks (sql-rows.ts).
import type { TransactionDeposit } from '@prisma/client';
import type { Db, Prisma, SqlTransaction } from './database';
import { type TransactionRow, withReceiverAccount } from '../presenters/transactions';
import { insertRow, JoinedRelation, readRowById, rowByIdQuery } from './sql-rows';
import type { KeysetQuery } from '../http/pagination';

/** The relations of `withReceiverAccount`, with the columns that point at them. */
const joins: Array<JoinedRelation & { relation: keyof typeof withReceiverAccount }> = [
  { relation: 'externalAccount', foreignKey: 'externalAccountId' },
  { relation: 'wallet', foreignKey: 'walletId' },
];

export const transactionRowById = rowByIdQuery<TransactionRow>('Transaction', joins);
export const lockedTransactionRowById = rowByIdQuery<TransactionRow>('Transaction', joins, { forUpdate: true });

export const readTransactionRow = (db: Db | SqlTransaction, id: string) => readRowById(db, transactionRowById, id);

/** The transaction under its row lock (one change of it at a time, across workers), in `tx`. */
export const lockTransactionRow = (tx: SqlTransaction, id: string) => readRowById(tx, lockedTransactionRowById, id);

/** Columns of a new transaction row (ids, status, amounts, deposit details, times); JSON null stored as NULL. */
export type NewTransactionRow = Omit<Prisma.TransactionUncheckedCreateInput, 'depositInstructions'> & {
  depositInstructions?: object | null;
};

/**
 * Inserts a transaction in the caller's SQL transaction (the one insert of every transaction, in SQL: Prisma would
 * compile it on each call).
 */
export async function insertTransaction(tx: SqlTransaction, row: NewTransactionRow): Promise<void> {
  await insertRow(tx, 'Transaction', row);
}

export type TransactionDepositRow = TransactionDeposit;

/** A deposit of a transaction as written (accepted, returning or returned). */
export type NewTransactionDeposit = Prisma.TransactionDepositUncheckedCreateInput;

/** Inserts a deposit in the caller's transaction (SQL or Prisma's). */
export async function insertTransactionDeposit(
  tx: SqlTransaction | Prisma.TransactionClient,
  deposit: NewTransactionDeposit,
): Promise<TransactionDepositRow> {
  if ('transactionDeposit' in tx) return tx.transactionDeposit.create({ data: deposit });
  return insertRow<TransactionDepositRow>(tx, 'TransactionDeposit', deposit as Record<string, unknown>);
}

export const findTransactionDeposit = (db: Db, id: string): Promise<TransactionDepositRow | null> =>
  db.transactionDeposit.findUnique({ where: { id } });

/** The transaction whose deposit reference this is (any partner's): how a bank credit finds its transaction. */
export const findTransactionByDepositReference = (db: Db, depositReference: string): Promise<TransactionRow | null> =>
  db.transaction.findUnique({ where: { depositReference }, include: withReceiverAccount });

export interface TransactionFilter {
  partnerId: string;
  customerId?: string;
  type?: string;
  status?: string;
}

/** One page of a partner's transactions, newest first (the keyset from http/pagination.ts). */
export const listTransactionRows = (
  db: Db,
  filter: TransactionFilter,
  keyset: KeysetQuery,
): Promise<TransactionRow[]> =>
  db.transaction.findMany({
    where: {
      partnerId: filter.partnerId,
      ...(filter.customerId ? { customerId: filter.customerId } : {}),
      ...(filter.type ? { type: filter.type } : {}),
      ...(filter.status ? { status: filter.status } : {}),
      ...keyset.where,
    },
    orderBy: keyset.orderBy,
    take: keyset.take,
    include: withReceiverAccount,
  });
