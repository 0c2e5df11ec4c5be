// Transactions and their deposits: the rows of the transactions, transaction_deposits tables. A transaction is read
// with the accounts its presenter shows (TransactionRow) in one SQL statement: the read behind
// GET /v1/transactions/{id} that partners poll, and the row every settlement step locks (sql-rows.ts).
import { type Db, type Prisma, type PrismaClient, sqlPoolOf, type SqlTransaction } from './database';
import { newId } from '../domain/ids';
import type { TransactionStatus, TransactionType } from '../domain/transactions';
import { externalAccountTable } from './external-accounts';
import { insertRow, JoinedRelation, readRowById, rowByIdQuery, type TableMap } from './sql-rows';
import { walletTable } from './wallets';
import type { KeysetQuery } from '../http/pagination';

/** The relations of `withReceiverAccount`, with the columns that point at them. */
/** What a transaction is shown with: the external account paid and the wallet (a pay-in's receiver). */
export const withReceiverAccount = { externalAccount: true, wallet: true } as const;
export type TransactionRow = Prisma.TransactionGetPayload<{ include: typeof withReceiverAccount }>;

/** The columns of a transaction, read and written in SQL (sql-rows.ts). */
export const transactionTable: TableMap<Prisma.TransactionGetPayload<object>> = {
  table: 'transactions',
  columns: {
    id: ['id'],
    partnerId: ['partner_id'],
    customerId: ['customer_id'],
    type: ['type'],
    status: ['status'],
    quoteId: ['quote_id'],
    walletId: ['wallet_id'],
    externalAccountId: ['external_account_id'],
    receiverDetails: ['receiver_details', 'json'],
    virtualAccountId: ['virtual_account_id'],
    senderName: ['sender_name'],
    senderDocumentType: ['sender_document_type'],
    senderDocumentNumber: ['sender_document_number'],
    senderCurrency: ['sender_currency'],
    senderPaymentRail: ['sender_payment_rail'],
    senderAmount: ['sender_amount', 'decimal'],
    stablecoinCurrency: ['stablecoin_currency'],
    stablecoinPaymentRail: ['stablecoin_payment_rail'],
    stablecoinAmount: ['stablecoin_amount', 'decimal'],
    receiverCurrency: ['receiver_currency'],
    receiverPaymentRail: ['receiver_payment_rail'],
    receiverAmount: ['receiver_amount', 'decimal'],
    rates: ['rates', 'decimals'],
    serviceFee: ['service_fee', 'decimal'],
    partnerFee: ['partner_fee', 'decimal'],
    networkFee: ['network_fee', 'decimal'],
    depositReference: ['deposit_reference'],
    depositInstructions: ['deposit_instructions', 'json'],
    depositDeadline: ['deposit_deadline', 'date'],
    failureReason: ['failure_reason'],
    sandboxSimulation: ['sandbox_simulation'],
    createdAt: ['created_at', 'date'],
    updatedAt: ['updated_at', 'date'],
  },
};

/** The relations of `withReceiverAccount`, with the columns that point at them. */
const joins: Array<JoinedRelation & { relation: keyof typeof withReceiverAccount }> = [
  { relation: 'externalAccount', foreignKey: 'externalAccountId', target: externalAccountTable },
  { relation: 'wallet', foreignKey: 'walletId', target: walletTable },
];

export const transactionRowById = rowByIdQuery<TransactionRow>(transactionTable, joins);
export const lockedTransactionRowById = rowByIdQuery<TransactionRow>(transactionTable, joins, { forUpdate: true });

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
  await insertRow(tx, transactionTable, row);
}

export type TransactionDepositRow = Prisma.TransactionDepositGetPayload<object>;

/** The columns of a deposit, read and written in SQL (sql-rows.ts). */
export const transactionDepositTable: TableMap<TransactionDepositRow> = {
  table: 'transaction_deposits',
  columns: {
    id: ['id'],
    transactionId: ['transaction_id'],
    currency: ['currency'],
    amount: ['amount', 'decimal'],
    senderName: ['sender_name'],
    reference: ['reference'],
    status: ['status'],
    returnReason: ['return_reason'],
    receivedAt: ['received_at', 'date'],
    createdAt: ['created_at', 'date'],
    updatedAt: ['updated_at', 'date'],
  },
};

/** A deposit of a transaction as written (accepted, returning or returned). */
export type NewTransactionDeposit = Prisma.TransactionDepositUncheckedCreateInput;

/** Inserts a deposit in the caller's SQL transaction. */
export async function insertTransactionDeposit(
  tx: SqlTransaction,
  deposit: NewTransactionDeposit,
): Promise<TransactionDepositRow> {
  return insertRow(tx, transactionDepositTable, deposit as Record<string, unknown>);
}

export const findTransactionDeposit = (db: Db, id: string): Promise<TransactionDepositRow | null> =>
  db.transactionDeposit.findUnique({ where: { id } });

/** The transaction whose deposit reference this is (any partner's): how a bank credit finds its transaction. */
export const findTransactionByDepositReference = (db: Db, depositReference: string): Promise<TransactionRow | null> =>
  db.transaction.findUnique({ where: { depositReference }, include: withReceiverAccount });

export interface TransactionFilter {
  partnerId: string;
  customerId?: string;
  type?: TransactionType;
  status?: TransactionStatus;
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

// ---- settlement steps (activities/transactions.ts) ----

/**
 * Writes a locked transaction's status change (and its failure reason and sandbox simulation) as `updated` holds
 * them: one UPDATE, without Prisma compiling an update with two includes.
 */
export async function writeTransactionStatus(tx: SqlTransaction, updated: TransactionRow): Promise<void> {
  await tx.$executeRaw`
    UPDATE transactions
    SET status = ${updated.status}, failure_reason = ${updated.failureReason},
      sandbox_simulation = ${updated.sandboxSimulation}, updated_at = ${updated.updatedAt}
    WHERE id = ${updated.id}::uuid`;
}

/** Opens a step's leg (once: a retry finds it open or closed) before its provider is called. */
export async function openTransactionLeg(prisma: PrismaClient, transactionId: string, kind: string): Promise<void> {
  await sqlPoolOf(prisma).query({
    name: 'open-transaction-leg',
    text: `INSERT INTO transaction_legs (id, transaction_id, kind, status, created_at, updated_at)
      VALUES ($1, $2, $3, 'processing', now(), now()) ON CONFLICT (transaction_id, kind) DO NOTHING`,
    values: [newId(), transactionId, kind],
  });
}

/**
 * Closes an open leg with the provider's reference: true when it was open, else the leg's status as it is (a retry
 * finds it closed already; null when it was never opened).
 */
export async function closeTransactionLeg(
  tx: SqlTransaction,
  leg: {
    transactionId: string;
    kind: string;
    status: 'completed' | 'rejected';
    providerReference: string;
    failureReason: string | null;
  },
): Promise<true | { status: string | null }> {
  const closed = await tx.$executeRaw`
    UPDATE transaction_legs
    SET status = ${leg.status}, provider_reference = ${leg.providerReference}, failure_reason = ${leg.failureReason},
      updated_at = now()
    WHERE transaction_id = ${leg.transactionId}::uuid AND kind = ${leg.kind} AND status = 'processing'`;
  if (closed === 1) return true;
  const [current] = await tx.$queryRaw<Array<{ status: string }>>`
    SELECT status FROM transaction_legs WHERE transaction_id = ${leg.transactionId}::uuid AND kind = ${leg.kind}`;
  return { status: current?.status ?? null };
}

/** A leg's status, or null when it was never opened. */
export async function transactionLegStatus(
  prisma: PrismaClient,
  transactionId: string,
  kind: string,
): Promise<string | null> {
  const { rows } = await sqlPoolOf(prisma).query<{ status: string }>({
    name: 'transaction-leg-status',
    text: 'SELECT status FROM transaction_legs WHERE transaction_id = $1 AND kind = $2',
    values: [transactionId, kind],
  });
  return rows[0]?.status ?? null;
}

const depositById = rowByIdQuery<TransactionDepositRow>(transactionDepositTable);

/** A deposit by id, in the caller's SQL transaction. */
export const readTransactionDeposit = (tx: SqlTransaction, id: string) => readRowById(tx, depositById, id);

/** The deposit a transaction took and has not returned yet (accepted, or returning). */
export const findHeldDeposit = (db: Db, transactionId: string): Promise<TransactionDepositRow | null> =>
  db.transactionDeposit.findFirst({ where: { transactionId, status: { in: ['accepted', 'returning'] } } });

/** A deposit with its transaction (the rail it came on), or null. */
export const findDepositWithTransaction = (db: Db, id: string) =>
  db.transactionDeposit.findUnique({ where: { id }, include: { transaction: true } });

/** The deposit under its row lock, in `tx`. */
export async function lockTransactionDeposit(
  tx: Prisma.TransactionClient,
  id: string,
): Promise<TransactionDepositRow | null> {
  await tx.$queryRaw`SELECT id FROM transaction_deposits WHERE id = ${id}::uuid FOR UPDATE`;
  return tx.transactionDeposit.findUnique({ where: { id } });
}

export async function markDepositReturned(tx: Prisma.TransactionClient, id: string): Promise<void> {
  await tx.transactionDeposit.update({ where: { id }, data: { status: 'returned' } });
}
