// The external_accounts table: customers' bank accounts outside the service, registered once per customer and
// account identity.
import type { Db, DatabaseTransaction, Prisma } from './database';
import type { KeysetQuery } from '../http/pagination';
import { readRowById, rowByIdQuery } from './sql-rows';

export type ExternalAccountRow = Prisma.ExternalAccountGetPayload<object>;

/** A new account's columns; `details` is the rail object as the API shows it. */
export type NewExternalAccount = Omit<Prisma.ExternalAccountUncheckedCreateInput, 'details' | 'transactions'> & {
  details: object;
};

/** Read in SQL (sql-rows.ts): every payout and fiat-to-fiat transaction reads its receiving account. */
const externalAccountById = rowByIdQuery<ExternalAccountRow>('ExternalAccount');

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
