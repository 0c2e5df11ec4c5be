// The customers aggregate: tables customers, beneficiaries, verification_steps and customer_documents. Every read
// and write of them goes through here, for the API (commands, hosted page) and the verification activities.
import type { Insertable, Kysely } from 'kysely';
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
import type { VerificationLinkState } from '../domain/verification-links';
import type { CustomerStatus } from '../domain/customers';
import type { KeysetQuery } from '../domain/pages';
import { childrenByParent, keysetPage } from './keyset';

export const withBeneficiaries = { beneficiaries: { orderBy: { position: 'asc' } } } as const;
export type CustomerRow = Prisma.CustomerGetPayload<{ include: typeof withBeneficiaries }>;
export type VerificationStepRow = Prisma.VerificationStepGetPayload<object>;
/** A customer with what decides whether a review can start: documents and steps. */
export const withReviewInputs = { ...withBeneficiaries, documents: true, verificationSteps: true } as const;
export type CustomerWithReviewInputs = Prisma.CustomerGetPayload<{ include: typeof withReviewInputs }>;

/** The columns of the hosted page's link (src/domain/verification-links.ts). */
export type VerificationLinkColumns = Pick<
  VerificationLinkState,
  'verificationTokenHash' | 'verificationLinkVersion' | 'verificationLinkExpiresAt'
>;

/** A new customer's columns; its beneficiaries and verification steps are given apart. */
export type NewCustomer = Omit<Insertable<DB['customers']>, 'address' | 'createdAt' | 'updatedAt'> & {
  address?: object | null;
};
export type NewBeneficiary = Omit<Insertable<DB['beneficiaries']>, 'customerId' | 'address' | 'createdAt'> & {
  address: object;
};
export type NewCustomerDocument = Omit<Insertable<DB['customerDocuments']>, 'createdAt'>;

/** The beneficiaries of these customers, in their order (one statement: their decimals and dates stay exact). */
function beneficiariesOf(db: Kysely<DB>, customerIds: string[]) {
  return db
    .selectFrom('beneficiaries')
    .selectAll()
    .where('customerId', 'in', customerIds)
    .orderBy('position', 'asc')
    .execute();
}

/** Reads a customer's related rows (a statement each: their decimals and dates stay exact). */
async function withRelations<Row extends { id: string }, Review extends boolean>(
  db: Kysely<DB>,
  row: Row,
  reviewInputs: Review,
): Promise<Review extends true ? CustomerWithReviewInputs : CustomerRow> {
  const beneficiaries = await beneficiariesOf(db, [row.id]);
  if (!reviewInputs) return { ...row, beneficiaries } as never;
  const documents = await db.selectFrom('customerDocuments').selectAll().where('customerId', '=', row.id).execute();
  const verificationSteps = await db
    .selectFrom('verificationSteps')
    .selectAll()
    .where('customerId', '=', row.id)
    .execute();
  return { ...row, beneficiaries, documents, verificationSteps } as never;
}

async function customerById<Review extends boolean>(db: Database, customerId: string, reviewInputs: Review) {
  const sql = sqlOf(db);
  const row = await sql.selectFrom('customers').selectAll().where('id', '=', customerId).executeTakeFirst();
  return row ? withRelations(sql, row, reviewInputs) : null;
}

/** The customer with its beneficiaries, or null (any partner's: the caller checks the owner, see ownedBy). */
export function findCustomer(db: Database, customerId: string): Promise<CustomerRow | null> {
  return customerById(db, customerId, false);
}

/** A customer known to exist, with its beneficiaries. */
export async function readCustomer(db: Database, customerId: string): Promise<CustomerRow> {
  const row = await findCustomer(db, customerId);
  if (!row) throw new Error(`customer ${customerId} does not exist`);
  return row;
}

export type CustomerStatusRow = Pick<
  CustomerRow,
  'id' | 'partnerId' | 'status' | 'type' | 'firstName' | 'lastName' | 'businessLegalName'
>;

/** A customer's own columns without its related rows (what a check before it transacts needs), or null. */
export async function findCustomerStatus(db: Database, customerId: string): Promise<CustomerStatusRow | null> {
  const row = await sqlOf(db)
    .selectFrom('customers')
    .select(['id', 'partnerId', 'status', 'type', 'firstName', 'lastName', 'businessLegalName'])
    .where('id', '=', customerId)
    .executeTakeFirst();
  return row ?? null;
}

/** What a status check and the link of a customer known to exist need: its status and link version. */
export function readCustomerLinkState(
  db: DatabaseClient,
  customerId: string,
): Promise<Pick<CustomerRow, 'id' | 'status' | 'verificationLinkVersion'>> {
  return prismaOf(db).customer.findUniqueOrThrow({
    where: { id: customerId },
    select: { id: true, status: true, verificationLinkVersion: true },
  });
}

/** The customer whose hosted link has this token hash, or null. */
export function findCustomerByTokenHash(
  db: DatabaseClient,
  verificationTokenHash: string,
): Promise<CustomerRow | null> {
  return prismaOf(db).customer.findUnique({ where: { verificationTokenHash }, include: withBeneficiaries });
}

/** The customer with its documents and steps, or null. */
export function findCustomerWithReviewInputs(
  db: Database,
  customerId: string,
): Promise<CustomerWithReviewInputs | null> {
  return customerById(db, customerId, true);
}

/** A customer known to exist, with its documents and steps. */
export async function readCustomerWithReviewInputs(
  db: Database,
  customerId: string,
): Promise<CustomerWithReviewInputs> {
  const row = await findCustomerWithReviewInputs(db, customerId);
  if (!row) throw new Error(`customer ${customerId} does not exist`);
  return row;
}

/** A page of the partner's customers (src/schemas/pagination.ts). */
export async function listCustomers(
  db: Database,
  partnerId: string,
  filter: { status?: CustomerStatus },
  keyset: KeysetQuery,
): Promise<CustomerRow[]> {
  const sql = sqlOf(db);
  let query = sql.selectFrom('customers as c').selectAll('c').where('c.partnerId', '=', partnerId);
  if (filter.status) query = query.where('c.status', '=', filter.status);
  const customers = await keysetPage(query, 'c', keyset).execute();
  if (customers.length === 0) return [];
  // The page's beneficiaries in one more statement, not one per customer.
  const ofCustomer = childrenByParent(
    await beneficiariesOf(
      sql,
      customers.map(({ id }) => id),
    ),
    'customerId',
  );
  return customers.map((customer) => ({ ...customer, beneficiaries: ofCustomer(customer.id) }));
}

/** Row lock: one status change of a customer at a time (uploads included), even across workers. */
export async function lockCustomer(tx: DatabaseTransaction, customerId: string): Promise<void> {
  await sqlOf(tx).selectFrom('customers').select('id').where('id', '=', customerId).forUpdate().execute();
}

/** Inserts the customer with its beneficiaries (businesses) and its verification steps, all pending. */
export async function insertCustomer(
  tx: DatabaseTransaction,
  customer: NewCustomer,
  beneficiaries: NewBeneficiary[] | undefined,
  steps: readonly string[],
): Promise<CustomerRow> {
  const now = new Date();
  const row = await sqlOf(tx)
    .insertInto('customers')
    .values({ ...customer, address: jsonParameter(customer.address), createdAt: now, updatedAt: now })
    .returningAll()
    .executeTakeFirstOrThrow();
  if (beneficiaries !== undefined && beneficiaries.length > 0) {
    await sqlOf(tx)
      .insertInto('beneficiaries')
      .values(
        beneficiaries.map((beneficiary) => ({
          ...beneficiary,
          customerId: row.id,
          address: jsonParameter(beneficiary.address)!,
          createdAt: now,
        })),
      )
      .execute();
  }
  await sqlOf(tx)
    .insertInto('verificationSteps')
    .values(steps.map((name) => ({ customerId: row.id, name, state: 'pending', rejectionCodes: [], updatedAt: now })))
    .execute();
  return withRelations(sqlOf(tx), row, false);
}

/** Replaces the link with `link` unless its version changed meanwhile; `updatedAt` stays (the customer did not change). */
export async function renewVerificationLink(
  db: DatabaseClient,
  row: Pick<CustomerRow, 'id' | 'verificationLinkVersion' | 'updatedAt'>,
  link: VerificationLinkColumns,
): Promise<void> {
  await prismaOf(db).customer.updateMany({
    where: { id: row.id, verificationLinkVersion: row.verificationLinkVersion },
    data: { ...link, updatedAt: row.updatedAt },
  });
}

/** Sets the customer's status and the link that replaces the old one (nextVerificationLink). */
export async function updateCustomerStatus(
  tx: DatabaseTransaction,
  customerId: string,
  status: CustomerStatus,
  link: VerificationLinkColumns,
): Promise<CustomerRow> {
  const row = await sqlOf(tx)
    .updateTable('customers')
    .set({ status, ...link, updatedAt: new Date() })
    .where('id', '=', customerId)
    .returningAll()
    .executeTakeFirstOrThrow();
  return withRelations(sqlOf(tx), row, false);
}

/** The documents a customer uploaded through the hosted page. */
export async function countHostedUploads(db: Database, customerId: string): Promise<number> {
  const { count } = await sqlOf(db)
    .selectFrom('customerDocuments')
    .select((select) => select.fn.countAll<string>().as('count'))
    .where('customerId', '=', customerId)
    .where('uploadedVia', '=', 'hosted_page')
    .executeTakeFirstOrThrow();
  return Number(count);
}

export async function insertCustomerDocument(tx: DatabaseTransaction, document: NewCustomerDocument): Promise<void> {
  await sqlOf(tx)
    .insertInto('customerDocuments')
    .values({ ...document, createdAt: new Date() })
    .execute();
}

export function listVerificationSteps(db: DatabaseClient, customerId: string): Promise<VerificationStepRow[]> {
  return prismaOf(db).verificationStep.findMany({ where: { customerId } });
}

/** A document arrived for a step that was waiting for one (after a partial rejection). */
export async function markStepDocumentReceived(
  tx: DatabaseTransaction,
  customerId: string,
  step: string,
): Promise<void> {
  await sqlOf(tx)
    .updateTable('verificationSteps')
    .set({ awaitingDocument: false, updatedAt: new Date() })
    .where('customerId', '=', customerId)
    .where('name', '=', step)
    .where('awaitingDocument', '=', true)
    .execute();
}

/** A review starts: the open steps go under review, their earlier rejection cleared. */
export async function putOpenStepsUnderReview(tx: DatabaseTransaction, customerId: string): Promise<void> {
  await sqlOf(tx)
    .updateTable('verificationSteps')
    .set({ state: 'under_review', rejectionCodes: [], rejectionDescription: null, updatedAt: new Date() })
    .where('customerId', '=', customerId)
    .where('state', 'in', ['pending', 'partially_rejected'])
    .execute();
}

/** A review's rejection of one step. */
export async function rejectVerificationStep(
  tx: DatabaseTransaction,
  customerId: string,
  name: string,
  rejection: {
    state: 'approved' | 'partially_rejected' | 'rejected';
    rejectionCodes: string[];
    rejectionDescription: string;
    awaitingDocument: boolean;
  },
): Promise<void> {
  await sqlOf(tx)
    .updateTable('verificationSteps')
    .set({ ...rejection, updatedAt: new Date() })
    .where('customerId', '=', customerId)
    .where('name', '=', name)
    .execute();
}

/** A review decided: the steps it did not reject are approved. */
export async function approveStepsUnderReview(tx: DatabaseTransaction, customerId: string): Promise<void> {
  await sqlOf(tx)
    .updateTable('verificationSteps')
    .set({ state: 'approved', updatedAt: new Date() })
    .where('customerId', '=', customerId)
    .where('state', '=', 'under_review')
    .execute();
}
