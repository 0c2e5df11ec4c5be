// The external_accounts table: customers' bank accounts outside the service, registered once per customer and
// account identity.
import type { Insertable } from 'kysely';
import {
  type DatabaseTransaction,
  type DB,
  type Database,
  jsonParameter,
  sqlOf,
  prismaOf,
  type DatabaseClient,
} from './internal/database';
import type { Prisma } from './generated/prisma/client';
import type { KeysetQuery } from '../domain/pages';
import { keysetPage } from './keyset';

export type ExternalAccountRow = Prisma.ExternalAccountGetPayload<object>;

/** A new account's columns; `details` is the rail object as the API shows it. */
export type NewExternalAccount = Omit<Insertable<DB['externalAccounts']>, 'details'> & {
  details: object;
};

/** The account, or null (any partner's: the caller checks the owner, see ownedBy). */
export async function findExternalAccount(db: Database, id: string): Promise<ExternalAccountRow | null> {
  const row = await sqlOf(db).selectFrom('externalAccounts').selectAll().where('id', '=', id).executeTakeFirst();
  return row ?? null;
}

/** The customer's account with this identity on its rail (accountIdentityOf), or null. */
export function findExternalAccountByIdentity(
  db: DatabaseClient,
  customerId: string,
  accountIdentity: string,
): Promise<ExternalAccountRow | null> {
  return prismaOf(db).externalAccount.findUnique({
    where: { customerId_accountIdentity: { customerId, accountIdentity } },
  });
}

/** A page of the partner's accounts, of one customer when `customerId` is given (src/schemas/pagination.ts). */
export function listExternalAccounts(
  db: DatabaseClient,
  partnerId: string,
  filter: { customerId?: string },
  keyset: KeysetQuery,
): Promise<ExternalAccountRow[]> {
  let query = sqlOf(db).selectFrom('externalAccounts as a').selectAll('a').where('a.partnerId', '=', partnerId);
  if (filter.customerId) query = query.where('a.customerId', '=', filter.customerId);
  return keysetPage(query, 'a', keyset).execute();
}

/** Inserts the account; the unique index on (customer, account identity) refuses a second registration. */
export function insertExternalAccount(
  tx: DatabaseTransaction,
  account: NewExternalAccount,
): Promise<ExternalAccountRow> {
  return sqlOf(tx)
    .insertInto('externalAccounts')
    .values({ ...account, details: jsonParameter(account.details)! })
    .returningAll()
    .executeTakeFirstOrThrow();
}
