// A transaction with the accounts its presenter shows (TransactionRow), read with one SQL statement: the read
// behind GET /v1/transactions/{id} that partners poll, and the row every settlement step locks (sql-rows.ts).
import type { Db, SqlTransaction } from './database';
import type { TransactionRow, withReceiverAccount } from '../presenters/transactions';
import { JoinedRelation, readRowById, rowByIdQuery } from './sql-rows';

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
