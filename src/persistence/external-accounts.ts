// The external_accounts table: customers' bank accounts outside the service, registered once per customer and
// account identity.
import type { Db, DatabaseTransaction, Prisma } from './database';
import type { KeysetQuery } from '../http/pagination';
import { readRowById, rowByIdQuery, type TableMap } from './sql-rows';

export type ExternalAccountRow = Prisma.ExternalAccountGetPayload<object>;

/** A new account's columns; `details` is the rail object as the API shows it. */
export type NewExternalAccount = Omit<Prisma.ExternalAccountUncheckedCreateInput, 'details' | 'transactions'> & {
  details: object;
};

/** The columns of an account, read in SQL (sql-rows.ts): also with the transactions that pay it. */
export const externalAccountTable: TableMap<ExternalAccountRow> = {
  table: 'external_accounts',
  columns: {
    id: ['id'],
    partnerId: ['partner_id'],
    customerId: ['customer_id'],
    accountName: ['account_name'],
    paymentRail: ['payment_rail'],
    status: ['status'],
    isThirdParty: ['is_third_party'],
    details: ['details', 'json'],
    accountIdentity: ['account_identity'],
    screeningReason: ['screening_reason'],
    createdAt: ['created_at', 'date'],
    updatedAt: ['updated_at', 'date'],
  },
};

/** Read in SQL: every payout and fiat-to-fiat transaction reads its receiving account. */
const externalAccountById = rowByIdQuery<ExternalAccountRow>(externalAccountTable);

/** The account, or null (any partner's: the caller checks the owner, see ownedBy). */
export function findExternalAccount(db: Db, id: string): Promise<ExternalAccountRow | null> {
  return readRowById(db, externalAccountById, id);
}

/** The customer's account with this identity on its rail (accountIdentityOf), or null. */
export function findExternalAccountByIdentity(
  db: Db,
  customerId: string,
  accountIdentity: string,
): Promise<ExternalAccountRow | null> {
  return db.externalAccount.findUnique({ where: { customerId_accountIdentity: { customerId, accountIdentity } } });
}

/** A page of the partner's accounts, of one customer when `customerId` is given (src/http/pagination.ts). */
export function listExternalAccounts(
  db: Db,
  partnerId: string,
  filter: { customerId?: string },
  keyset: KeysetQuery,
): Promise<ExternalAccountRow[]> {
  return db.externalAccount.findMany({
    where: { partnerId, ...filter, ...keyset.where },
    orderBy: keyset.orderBy,
    take: keyset.take,
  });
}

/** Inserts the account; the unique index on (customer, account identity) refuses a second registration. */
export function insertExternalAccount(
  tx: DatabaseTransaction,
  account: NewExternalAccount,
): Promise<ExternalAccountRow> {
  return tx.externalAccount.create({ data: { ...account, details: account.details as Prisma.InputJsonObject } });
}
