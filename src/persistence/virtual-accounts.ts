// The virtual_accounts table (read with the receiving wallet) and virtual_account_deposits: the bank references
// (IBANs, account numbers) issued to virtual accounts, by which incoming bank credits find their account.
import type { Currency } from '../domain/money';
import type { KeysetQuery } from '../domain/pages';
import { keysetPage } from './keyset';
import type { VirtualAccountStatus } from '../domain/virtual-accounts';
import { newId } from '../domain/ids';
import type {
  DepositAccountIssuer,
  DepositAddresses,
  DepositRail,
  IssuedDepositDetails,
  SenderCurrency,
} from '../providers/deposit-accounts';
import type { Kysely, Updateable } from 'kysely';
import { jsonObjectFrom } from 'kysely/helpers/postgres';
import {
  type DatabaseTransaction,
  type DB,
  type Database,
  jsonParameter,
  relatedRow,
  sqlOf,
  prismaOf,
  type DatabaseClient,
} from './internal/database';
import type { Prisma } from './generated/prisma/client';
import { findCustomer } from './customers';

export const withWallet = { wallet: true } as const;
export type VirtualAccountRow = Prisma.VirtualAccountGetPayload<{ include: typeof withWallet }>;

/** With the customer too, whose name the deposit details are issued to. */
export const withWalletAndCustomer = { ...withWallet, customer: true } as const;
export type VirtualAccountWithCustomerRow = Prisma.VirtualAccountGetPayload<{
  include: typeof withWalletAndCustomer;
}>;

/** Any partner's virtual account by id, or null. */
export async function findVirtualAccount(db: DatabaseClient, id: string): Promise<VirtualAccountRow | null> {
  return prismaOf(db).virtualAccount.findUnique({ where: { id }, include: withWallet });
}

/** A page of a partner's virtual accounts, optionally one customer's. */
export async function listVirtualAccounts(
  db: DatabaseClient,
  filter: { partnerId: string; customerId?: string },
  keyset: KeysetQuery,
): Promise<VirtualAccountRow[]> {
  let query = virtualAccountRows(sqlOf(db)).where('v.partnerId', '=', filter.partnerId);
  if (filter.customerId) query = query.where('v.customerId', '=', filter.customerId);
  return (await keysetPage(query, 'v', keyset).execute()).map(asVirtualAccountRow);
}

/** The statement reading virtual accounts with their wallet. */
function virtualAccountRows(db: Kysely<DB>) {
  return db
    .selectFrom('virtualAccounts as v')
    .selectAll('v')
    .select((select) =>
      jsonObjectFrom(select.selectFrom('wallets as w').selectAll('w').whereRef('w.id', '=', 'v.walletId')).as('wallet'),
    );
}

type SelectedVirtualAccount = Awaited<ReturnType<ReturnType<typeof virtualAccountRows>['executeTakeFirstOrThrow']>>;

function asVirtualAccountRow(row: SelectedVirtualAccount): VirtualAccountRow {
  return { ...row, wallet: relatedRow<VirtualAccountRow['wallet']>(row.wallet)! };
}

export async function insertVirtualAccount(
  tx: DatabaseTransaction,
  account: {
    id: string;
    partnerId: string;
    customerId: string;
    walletId: string;
    name: string;
    status: VirtualAccountStatus;
    senderCurrency: Currency;
    receiverCurrency: Currency;
    acceptsThirdPartyPayments: boolean | null;
    depositAddresses: DepositAddresses;
    decidedAt: Date | null;
  },
): Promise<VirtualAccountRow> {
  const now = new Date();
  await sqlOf(tx)
    .insertInto('virtualAccounts')
    .values({ ...account, depositAddresses: jsonParameter(account.depositAddresses)!, createdAt: now, updatedAt: now })
    .execute();
  return asVirtualAccountRow(
    await virtualAccountRows(sqlOf(tx)).where('v.id', '=', account.id).executeTakeFirstOrThrow(),
  );
}

/** The account under its row lock, or null. */
export async function lockVirtualAccount(tx: DatabaseTransaction, id: string): Promise<VirtualAccountRow | null> {
  const row = await virtualAccountRows(sqlOf(tx)).where('v.id', '=', id).forUpdate('v').executeTakeFirst();
  return row ? asVirtualAccountRow(row) : null;
}

/** The account and its customer under the account's row lock, or null: what a review decision reads. */
export async function lockVirtualAccountWithCustomer(
  tx: DatabaseTransaction,
  id: string,
): Promise<VirtualAccountWithCustomerRow | null> {
  const account = await lockVirtualAccount(tx, id);
  if (!account) return null;
  const { beneficiaries: _beneficiaries, ...customer } = (await findCustomer(tx, account.customerId))!;
  return { ...account, customer };
}

/** Applies a change to the account and answers it as it is now. */
async function updateVirtualAccount(
  tx: DatabaseTransaction,
  id: string,
  changes: Updateable<DB['virtualAccounts']>,
): Promise<VirtualAccountRow> {
  await sqlOf(tx)
    .updateTable('virtualAccounts')
    .set({ ...changes, updatedAt: new Date() })
    .where('id', '=', id)
    .execute();
  return asVirtualAccountRow(await virtualAccountRows(sqlOf(tx)).where('v.id', '=', id).executeTakeFirstOrThrow());
}

export async function markVirtualAccountApproved(
  tx: DatabaseTransaction,
  id: string,
  depositAddresses: DepositAddresses,
  decidedAt: Date,
): Promise<VirtualAccountRow> {
  return updateVirtualAccount(tx, id, {
    status: 'approved',
    depositAddresses: jsonParameter(depositAddresses)!,
    decidedAt,
  });
}

/** The reason is kept for operators. */
export async function markVirtualAccountRejected(
  tx: DatabaseTransaction,
  id: string,
  reason: string | null,
  decidedAt: Date,
): Promise<VirtualAccountRow> {
  return updateVirtualAccount(tx, id, { status: 'rejected', rejectionReason: reason, decidedAt });
}

export async function markVirtualAccountCancelled(tx: DatabaseTransaction, id: string): Promise<VirtualAccountRow> {
  return updateVirtualAccount(tx, id, { status: 'cancelled' });
}

/** Counts the reminders sent about a review nobody has decided; answers whose account it is. */
export async function recordReviewReminder(
  db: DatabaseClient,
  id: string,
  reminder: number,
): Promise<{ partnerId: string }> {
  return prismaOf(db).virtualAccount.update({
    where: { id },
    data: { reviewReminders: reminder },
    select: { partnerId: true },
  });
}

/** Normalises a bank reference as issued: IBANs without spaces and upper case, account numbers as digits. */
function normaliseReference(rail: DepositRail, reference: string): string {
  const compact = reference.replace(/[\s-]/g, '');
  return rail === 'sepa' ? compact.toUpperCase() : compact;
}

/**
 * The virtual account an incoming bank credit is for: the IBAN (sepa) or account number (ach, wire,
 * swift) it was sent to. Any partner's; null when the reference names no virtual account.
 */
export async function findVirtualAccountByDepositReference(
  db: DatabaseClient,
  reference: { rail: DepositRail; identifier: string },
): Promise<VirtualAccountRow | null> {
  const found = await prismaOf(db).virtualAccountDeposit.findUnique({
    where: {
      rail_identifier: { rail: reference.rail, identifier: normaliseReference(reference.rail, reference.identifier) },
    },
    include: { virtualAccount: { include: withWallet } },
  });
  return found?.virtualAccount ?? null;
}

const MAX_ISSUE_ATTEMPTS = 10;

/**
 * Issues deposit details whose identifiers no other virtual account holds (a taken number moves on
 * to the next attempt; the unique index on virtual_account_deposits is the final guard). Shared by the
 * create command (sandbox: issued at once) and the approval activity.
 */
export async function allocateDepositDetails(
  tx: DatabaseTransaction,
  issuer: DepositAccountIssuer,
  request: { virtualAccountId: string; senderCurrency: SenderCurrency; beneficiaryName: string },
): Promise<IssuedDepositDetails> {
  for (let attempt = 0; attempt < MAX_ISSUE_ATTEMPTS; attempt += 1) {
    const issued = issuer.issue({ ...request, attempt });
    const taken = await sqlOf(tx)
      .selectFrom('virtualAccountDeposits')
      .select('id')
      .where((where) =>
        where.or(
          issued.references.map(({ rail, identifier }) =>
            where.and([where('rail', '=', rail), where('identifier', '=', identifier)]),
          ),
        ),
      )
      .limit(1)
      .execute();
    if (taken.length === 0) return issued;
  }
  throw new Error(`no free deposit account number after ${MAX_ISSUE_ATTEMPTS} attempts`);
}

export async function storeDepositReferences(
  tx: DatabaseTransaction,
  virtualAccountId: string,
  issued: IssuedDepositDetails,
): Promise<void> {
  await sqlOf(tx)
    .insertInto('virtualAccountDeposits')
    .values(issued.references.map((reference) => ({ id: newId(), virtualAccountId, ...reference })))
    .execute();
}
