// Transactions and their deposits: the rows of the transactions, transaction_deposits, transaction_legs tables. A
// transaction is read with the accounts its presenter shows (TransactionRow) in one statement: the read behind
// GET /v1/transactions/{id} that partners poll, and the row every settlement step locks.
import { jsonObjectFrom } from 'kysely/helpers/postgres';
import {
  type DatabaseTransaction,
  type Database,
  type DB,
  decimalOf,
  type DecimalText,
  jsonParameter,
  relatedRow,
  reusableStatement,
  sqlOf,
  prismaOf,
  type DatabaseClient,
} from './internal/database';
import type { Prisma } from './generated/prisma/client';
import { type Insertable, type QueryCreator, type RawBuilder, sql } from 'kysely';
import { newId } from '../domain/ids';
import type { LegKind, TransactionStatus, TransactionType } from '../domain/transactions';
import type { KeysetQuery } from '../domain/pages';
import { keysetPage } from './keyset';

/** What a transaction is shown with: the external account paid and the wallet (a pay-in's receiver). */
export const withReceiverAccount = { externalAccount: true, wallet: true } as const;
export type TransactionRow = Prisma.TransactionGetPayload<{ include: typeof withReceiverAccount }>;

/** The statement reading transactions with their receiver accounts (one statement, no per-row queries). */
function transactionRows(db: QueryCreator<DB>) {
  return db
    .selectFrom('transactions as t')
    .selectAll('t')
    .select((select) => [
      jsonObjectFrom(
        select.selectFrom('externalAccounts as a').selectAll('a').whereRef('a.id', '=', 't.externalAccountId'),
      ).as('externalAccount'),
      jsonObjectFrom(select.selectFrom('wallets as w').selectAll('w').whereRef('w.id', '=', 't.walletId')).as('wallet'),
    ]);
}

type SelectedTransaction = Awaited<ReturnType<ReturnType<typeof transactionRows>['executeTakeFirstOrThrow']>>;

function asTransactionRow(row: SelectedTransaction): TransactionRow {
  return {
    ...row,
    externalAccount: relatedRow<TransactionRow['externalAccount']>(row.externalAccount),
    wallet: relatedRow<TransactionRow['wallet']>(row.wallet),
  };
}

const transactionById = reusableStatement((db, id: string) => transactionRows(db).where('t.id', '=', id), 1);
const lockedTransactionById = reusableStatement(
  (db, id: string) => transactionRows(db).where('t.id', '=', id).forUpdate('t'),
  1,
);

/** A transaction by id with its receiver accounts, or null. */
export async function readTransactionRow(db: Database, id: string): Promise<TransactionRow | null> {
  const [row] = await transactionById(db, id);
  return row ? asTransactionRow(row) : null;
}

/** The transaction under its row lock (one change of it at a time, across workers), in `tx`. */
export async function lockTransactionRow(tx: DatabaseTransaction, id: string): Promise<TransactionRow | null> {
  const [row] = await lockedTransactionById(tx, id);
  return row ? asTransactionRow(row) : null;
}

/** Columns of a new transaction row (ids, status, amounts, deposit details, times). */
export type NewTransactionRow = Omit<
  Insertable<DB['transactions']>,
  'depositInstructions' | 'receiverDetails' | 'createdAt' | 'updatedAt' | 'rates'
> & {
  rates: DecimalText[];
  depositInstructions?: object | null;
  receiverDetails?: object | null;
  createdAt?: Date;
};

/** Inserts a transaction in the caller's database transaction (the one insert of every transaction). */
export async function insertTransaction(tx: DatabaseTransaction, row: NewTransactionRow): Promise<void> {
  const now = row.createdAt ?? new Date();
  await sqlOf(tx)
    .insertInto('transactions')
    .values({
      ...row,
      rates: row.rates.map(decimalOf),
      depositInstructions: jsonParameter(row.depositInstructions),
      receiverDetails: jsonParameter(row.receiverDetails),
      createdAt: now,
      updatedAt: now,
    })
    .execute();
}

export type TransactionDepositRow = Prisma.TransactionDepositGetPayload<object>;

/** A deposit of a transaction as written (accepted, returning or returned). */
export type NewTransactionDeposit = Omit<Insertable<DB['transactionDeposits']>, 'createdAt' | 'updatedAt'>;

/**
 * Inserts a deposit in the caller's database transaction, once per credit: when the provider's reference was
 * recorded already (the same credit reported twice, perhaps at this very moment: the insert waits for the other
 * writer's commit) nothing is written and `inserted` is false, with the row recorded first.
 */
export async function insertTransactionDeposit(
  tx: DatabaseTransaction,
  deposit: NewTransactionDeposit,
): Promise<{ row: TransactionDepositRow; inserted: boolean }> {
  const now = new Date();
  const inserted = await sqlOf(tx)
    .insertInto('transactionDeposits')
    .values({ ...deposit, createdAt: now, updatedAt: now })
    .onConflict((conflict) => conflict.columns(['provider', 'providerReference']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { row: inserted, inserted: true };
  const recorded = await sqlOf(tx)
    .selectFrom('transactionDeposits')
    .selectAll()
    .where('provider', '=', deposit.provider)
    .where('providerReference', '=', deposit.providerReference)
    .executeTakeFirstOrThrow();
  return { row: recorded, inserted: false };
}

/** The transaction whose deposit reference this is (any partner's): how a bank credit finds its transaction. */
export const findTransactionByDepositReference = (
  db: DatabaseClient,
  depositReference: string,
): Promise<TransactionRow | null> =>
  prismaOf(db).transaction.findUnique({ where: { depositReference }, include: withReceiverAccount });

export interface TransactionFilter {
  partnerId: string;
  customerId?: string;
  type?: TransactionType;
  status?: TransactionStatus;
}

/** One page of a partner's transactions, newest first (the keyset from schemas/pagination.ts). */
export async function listTransactionRows(
  db: Database,
  filter: TransactionFilter,
  keyset: KeysetQuery,
): Promise<TransactionRow[]> {
  let query = transactionRows(sqlOf(db)).where('t.partnerId', '=', filter.partnerId);
  if (filter.customerId) query = query.where('t.customerId', '=', filter.customerId);
  if (filter.type) query = query.where('t.type', '=', filter.type);
  if (filter.status) query = query.where('t.status', '=', filter.status);
  return (await keysetPage(query, 't', keyset).execute()).map(asTransactionRow);
}

// ---- settlement steps (activities/transactions.ts) ----

/**
 * A locked transaction's status change (and its failure reason and sandbox simulation) as `updated` holds them, as a
 * statement for recordEvent to run with the change's event.
 */
export function transactionStatusChange(updated: TransactionRow): RawBuilder<unknown> {
  return sql`
    UPDATE transactions SET status = ${updated.status}::transaction_status, failure_reason = ${updated.failureReason},
      sandbox_simulation = ${updated.sandboxSimulation}, updated_at = ${updated.updatedAt}
    WHERE id = ${updated.id}::uuid`;
}

const openingLegAndReading = reusableStatement(
  (db, legId: string, kind: string, transactionId: string) =>
    transactionRows(
      db.with(
        'leg',
        // Parenthesised: kysely writes a raw expression after `AS` as it is.
        () => sql`(
          INSERT INTO transaction_legs (id, transaction_id, kind, status, created_at, updated_at)
          SELECT ${legId}::uuid, t.id, ${kind}::transaction_leg_kind, 'processing', now(), now()
          FROM transactions t WHERE t.id = ${transactionId}::uuid
          ON CONFLICT (transaction_id, kind) DO NOTHING)`,
      ) as unknown as QueryCreator<DB>,
    ).where('t.id', '=', transactionId),
  3,
);

/**
 * Opens a step's leg (once: a retry finds it open or closed) before its provider is called, and reads the transaction
 * as readTransactionRow does, in one statement; null (and no leg) when there is no such transaction.
 */
export async function openTransactionLeg(
  db: Database,
  transactionId: string,
  kind: LegKind,
): Promise<TransactionRow | null> {
  const [row] = await openingLegAndReading(db, newId(), kind, transactionId);
  return row ? asTransactionRow(row) : null;
}

/**
 * Closes an open leg with the provider's reference: true when it was open, else the leg's status as it is (a retry
 * finds it closed already; null when it was never opened).
 */
export async function closeTransactionLeg(
  tx: DatabaseTransaction,
  leg: {
    transactionId: string;
    kind: LegKind;
    status: 'completed' | 'rejected';
    providerReference: string;
    failureReason: string | null;
    /** An operator recorded the outcome (the provider could not tell): their reason. */
    operatorReason?: string;
  },
): Promise<true | { status: string | null }> {
  const closed = await sqlOf(tx)
    .updateTable('transactionLegs')
    .set({
      status: leg.status,
      providerReference: leg.providerReference,
      failureReason: leg.failureReason,
      ...(leg.operatorReason === undefined ? {} : { operatorReason: leg.operatorReason }),
      updatedAt: sql`now()`,
    })
    .where('transactionId', '=', leg.transactionId)
    .where('kind', '=', leg.kind)
    .where('status', '=', 'processing')
    .executeTakeFirst();
  if (closed.numUpdatedRows === 1n) return true;
  return { status: await transactionLegStatus(tx, leg.transactionId, leg.kind) };
}

/** The on-chain transaction that moved a leg's coin, once mined (the same values again on a retry). */
export async function recordLegChainTransfer(
  db: Database,
  transactionId: string,
  kind: LegKind,
  mined: { txHash: string; blockNumber: bigint },
): Promise<void> {
  await sqlOf(db)
    .updateTable('transactionLegs')
    .set({ chainTxHash: mined.txHash, chainBlockNumber: mined.blockNumber.toString() })
    .where('transactionId', '=', transactionId)
    .where('kind', '=', kind)
    .execute();
}

/** The legs of a transaction that were asked of a provider and never closed (status processing), by kind. */
export async function openTransactionLegs(db: Database, transactionId: string): Promise<LegKind[]> {
  const rows = await sqlOf(db)
    .selectFrom('transactionLegs')
    .select('kind')
    .where('transactionId', '=', transactionId)
    .where('status', '=', 'processing')
    .execute();
  return rows.map((row) => row.kind);
}

/** A leg's status, or null when it was never opened. */
export async function transactionLegStatus(db: Database, transactionId: string, kind: LegKind): Promise<string | null> {
  const row = await sqlOf(db)
    .selectFrom('transactionLegs')
    .select('status')
    .where('transactionId', '=', transactionId)
    .where('kind', '=', kind)
    .executeTakeFirst();
  return row?.status ?? null;
}

/** A deposit by id, or null. */
export const findTransactionDeposit = (db: Database, id: string): Promise<TransactionDepositRow | null> =>
  sqlOf(db)
    .selectFrom('transactionDeposits')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirst()
    .then((row) => row ?? null);

/**
 * The deposit that funded the transaction (the one it took: accepted, or to be refunded as not the expected
 * amount), in whatever status. Deposits that came late (`not_awaiting_deposit`) are never it: each is returned by
 * its own deposit-return workflow. A transaction takes one deposit; the order makes the choice defined regardless.
 */
export async function findFundingDeposit(db: Database, transactionId: string): Promise<TransactionDepositRow | null> {
  const row = await sqlOf(db)
    .selectFrom('transactionDeposits')
    .selectAll()
    .where('transactionId', '=', transactionId)
    .where((where) =>
      where.or([where('returnReason', 'is', null), where('returnReason', '!=', 'not_awaiting_deposit')]),
    )
    .orderBy('receivedAt')
    .orderBy('id')
    .executeTakeFirst();
  return row ?? null;
}

/** A deposit with its transaction (the rail it came on), or null. */
export const findDepositWithTransaction = (db: DatabaseClient, id: string) =>
  prismaOf(db).transactionDeposit.findUnique({ where: { id }, include: { transaction: true } });

/** The deposit under its row lock, in `tx`. */
export async function lockTransactionDeposit(
  tx: DatabaseTransaction,
  id: string,
): Promise<TransactionDepositRow | null> {
  const row = await sqlOf(tx)
    .selectFrom('transactionDeposits')
    .selectAll()
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
  return row ?? null;
}

/** A deposit's return: returning -> returned, or -> return_failed (attempts ran out) and back when retried. */
export async function setDepositStatus(
  tx: DatabaseTransaction,
  id: string,
  status: 'returning' | 'returned' | 'return_failed',
): Promise<void> {
  await sqlOf(tx)
    .updateTable('transactionDeposits')
    .set({ status, updatedAt: new Date() })
    .where('id', '=', id)
    .execute();
}
