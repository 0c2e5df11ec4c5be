// Payouts returned after completion: the rows of transaction_payout_returns (one per transaction, one per provider
// and bank return reference), and what the return's decision reads (the payout's provider reference, the account
// paid again). The transaction's own row and status change stay in ./transactions.ts.
import type { Currency } from '../domain/money';
import { type DatabaseTransaction, sqlOf, type Database } from './internal/database';
import { newId } from '../domain/ids';

/** The columns of a return, as the service and the workflow's activities use them. */
export interface PayoutReturnRow {
  id: string;
  transactionId: string;
  provider: string;
  returnReference: string;
  payoutIdempotencyKey: string | null;
  payoutProviderReference: string | null;
  currency: Currency;
  /** A decimal string. */
  amount: string;
  reasonCode: string;
  returnedAt: Date;
  resolution: 'repaid' | 'refunded' | null;
  resolutionReason: string | null;
  resolutionReference: string | null;
  resolvedAt: Date | null;
  createdAt: Date;
}

const columns = [
  'id',
  'transactionId',
  'provider',
  'returnReference',
  'payoutIdempotencyKey',
  'payoutProviderReference',
  'currency',
  'amount',
  'reasonCode',
  'returnedAt',
  'resolution',
  'resolutionReason',
  'resolutionReference',
  'resolvedAt',
  'createdAt',
] as const;

function asRow(row: Record<(typeof columns)[number], unknown>): PayoutReturnRow {
  return { ...(row as unknown as PayoutReturnRow), amount: String(row.amount) };
}

export type NewPayoutReturn = Omit<
  PayoutReturnRow,
  'id' | 'resolution' | 'resolutionReason' | 'resolutionReference' | 'resolvedAt' | 'createdAt'
>;

/**
 * Records a return in the caller's database transaction; null when (provider, return reference) or the transaction
 * already has one (a concurrent or repeated report: the caller reads what is there and answers it as a replay).
 */
export async function insertPayoutReturn(
  tx: DatabaseTransaction,
  ret: NewPayoutReturn,
): Promise<PayoutReturnRow | null> {
  const row = await sqlOf(tx)
    .insertInto('transactionPayoutReturns')
    .values({ ...ret, id: newId(), createdAt: new Date() })
    .onConflict((conflict) => conflict.doNothing())
    .returning(columns)
    .executeTakeFirst();
  return row ? asRow(row) : null;
}

/** The return the provider reported under this reference, or null. */
export async function findPayoutReturnByReference(
  db: Database,
  provider: string,
  returnReference: string,
): Promise<PayoutReturnRow | null> {
  const row = await sqlOf(db)
    .selectFrom('transactionPayoutReturns')
    .select(columns)
    .where('provider', '=', provider)
    .where('returnReference', '=', returnReference)
    .executeTakeFirst();
  return row ? asRow(row) : null;
}

/** The return of a transaction, or null. */
export async function findPayoutReturnOfTransaction(
  db: Database,
  transactionId: string,
): Promise<PayoutReturnRow | null> {
  const row = await sqlOf(db)
    .selectFrom('transactionPayoutReturns')
    .select(columns)
    .where('transactionId', '=', transactionId)
    .executeTakeFirst();
  return row ? asRow(row) : null;
}

/** The return of a transaction under its row lock, in `tx` (after the transaction's own lock: one order). */
export async function lockPayoutReturnOfTransaction(
  tx: DatabaseTransaction,
  transactionId: string,
): Promise<PayoutReturnRow | null> {
  const row = await sqlOf(tx)
    .selectFrom('transactionPayoutReturns')
    .select(columns)
    .where('transactionId', '=', transactionId)
    .forUpdate()
    .executeTakeFirst();
  return row ? asRow(row) : null;
}

/** The operator's decision carried out: repaid or refunded, with the provider's reference of what did it. */
export async function markPayoutReturnResolved(
  tx: DatabaseTransaction,
  id: string,
  resolution: { resolution: 'repaid' | 'refunded'; reason: string; reference: string },
): Promise<void> {
  await sqlOf(tx)
    .updateTable('transactionPayoutReturns')
    .set({
      resolution: resolution.resolution,
      resolutionReason: resolution.reason,
      resolutionReference: resolution.reference,
      resolvedAt: new Date(),
    })
    .where('id', '=', id)
    .where('resolution', 'is', null)
    .execute();
}

/**
 * The transaction whose payout the provider names by its reference (the payout leg's provider reference), or null.
 * How a production report that carries no idempotency key finds its transaction.
 */
export async function findTransactionIdByPayoutReference(
  db: Database,
  providerReference: string,
): Promise<string | null> {
  const row = await sqlOf(db)
    .selectFrom('transactionLegs')
    .select('transactionId')
    .where('kind', '=', 'stablecoin_to_fiat')
    .where('providerReference', '=', providerReference)
    .executeTakeFirst();
  return row?.transactionId ?? null;
}

/** The payout leg's provider reference (set once the payout completed), or null. */
export async function payoutProviderReferenceOf(db: Database, transactionId: string): Promise<string | null> {
  const row = await sqlOf(db)
    .selectFrom('transactionLegs')
    .select('providerReference')
    .where('transactionId', '=', transactionId)
    .where('kind', '=', 'stablecoin_to_fiat')
    .executeTakeFirst();
  return row?.providerReference ?? null;
}

/** What a repay to an external account needs of it: owner, status, rail, currency and the rail object. */
export interface RepayDestinationRow {
  id: string;
  customerId: string;
  status: string;
  paymentRail: string;
  details: unknown;
}

export async function findRepayDestination(
  db: Database,
  externalAccountId: string,
): Promise<RepayDestinationRow | null> {
  const row = await sqlOf(db)
    .selectFrom('externalAccounts')
    .select(['id', 'customerId', 'status', 'paymentRail', 'details'])
    .where('id', '=', externalAccountId)
    .executeTakeFirst();
  return row ?? null;
}
