// The customers aggregate: tables customers, beneficiaries, verification_steps and customer_documents. Every read
// and write of them goes through here, for the API (commands, hosted page) and the verification activities.
import type { Db, DatabaseTransaction, Prisma } from './database';
import type { VerificationLinkState } from '../domain/verification-links';
import type { KeysetQuery } from '../http/pagination';

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
export type NewCustomer = Omit<
  Prisma.CustomerUncheckedCreateInput,
  | 'beneficiaries'
  | 'documents'
  | 'verificationSteps'
  | 'externalAccounts'
  | 'wallets'
  | 'transactions'
  | 'virtualAccounts'
>;
export type NewBeneficiary = Omit<Prisma.BeneficiaryUncheckedCreateWithoutCustomerInput, 'documents'>;
export type NewCustomerDocument = Prisma.CustomerDocumentUncheckedCreateInput;

/** The customer with its beneficiaries, or null (any partner's: the caller checks the owner, see ownedBy). */
export function findCustomer(db: Db, customerId: string): Promise<CustomerRow | null> {
  return db.customer.findUnique({ where: { id: customerId }, include: withBeneficiaries });
}

/** A customer known to exist, with its beneficiaries (Prisma's not-found error otherwise). */
export function readCustomer(db: Db, customerId: string): Promise<CustomerRow> {
  return db.customer.findUniqueOrThrow({ where: { id: customerId }, include: withBeneficiaries });
}

/** What a status check and the link of a customer known to exist need: its status and link version. */
export function readCustomerLinkState(
  db: Db,
  customerId: string,
): Promise<Pick<CustomerRow, 'id' | 'status' | 'verificationLinkVersion'>> {
  return db.customer.findUniqueOrThrow({
    where: { id: customerId },
    select: { id: true, status: true, verificationLinkVersion: true },
  });
}

/** The customer whose hosted link has this token hash, or null. */
export function findCustomerByTokenHash(db: Db, verificationTokenHash: string): Promise<CustomerRow | null> {
  return db.customer.findUnique({ where: { verificationTokenHash }, include: withBeneficiaries });
}

/** The customer with its documents and steps, or null. */
export function findCustomerWithReviewInputs(db: Db, customerId: string): Promise<CustomerWithReviewInputs | null> {
  return db.customer.findUnique({ where: { id: customerId }, include: withReviewInputs });
}

/** A customer known to exist, with its documents and steps (Prisma's not-found error otherwise). */
export function readCustomerWithReviewInputs(db: Db, customerId: string): Promise<CustomerWithReviewInputs> {
  return db.customer.findUniqueOrThrow({ where: { id: customerId }, include: withReviewInputs });
}

/** A page of the partner's customers (src/http/pagination.ts). */
export function listCustomers(db: Db, partnerId: string, keyset: KeysetQuery): Promise<CustomerRow[]> {
  return db.customer.findMany({
    where: { partnerId, ...keyset.where },
    orderBy: keyset.orderBy,
    take: keyset.take,
    include: withBeneficiaries,
  });
}

/** Row lock: one status change of a customer at a time (uploads included), even across workers. */
export async function lockCustomer(tx: DatabaseTransaction, customerId: string): Promise<void> {
  await tx.$queryRaw`SELECT id FROM customers WHERE id = ${customerId}::uuid FOR UPDATE`;
}

/** Inserts the customer with its beneficiaries (businesses) and its verification steps, all pending. */
export function insertCustomer(
  tx: DatabaseTransaction,
  customer: NewCustomer,
  beneficiaries: NewBeneficiary[] | undefined,
  steps: readonly string[],
): Promise<CustomerRow> {
  return tx.customer.create({
    data: {
      ...customer,
      ...(beneficiaries !== undefined ? { beneficiaries: { create: beneficiaries } } : {}),
      verificationSteps: { create: steps.map((name) => ({ name, state: 'pending' })) },
    },
    include: withBeneficiaries,
  });
}

/** Replaces the link with `link` unless its version changed meanwhile; `updatedAt` stays (the customer did not change). */
export async function renewVerificationLink(
  db: Db,
  row: Pick<CustomerRow, 'id' | 'verificationLinkVersion' | 'updatedAt'>,
  link: VerificationLinkColumns,
): Promise<void> {
  await db.customer.updateMany({
    where: { id: row.id, verificationLinkVersion: row.verificationLinkVersion },
    data: { ...link, updatedAt: row.updatedAt },
  });
}

/** Sets the customer's status and the link that replaces the old one (nextVerificationLink). */
export function updateCustomerStatus(
  tx: DatabaseTransaction,
  customerId: string,
  status: string,
  link: VerificationLinkColumns,
): Promise<CustomerRow> {
  return tx.customer.update({
    where: { id: customerId },
    data: { status, ...link },
    include: withBeneficiaries,
  });
}

/** The documents a customer uploaded through the hosted page. */
export function countHostedUploads(db: Db, customerId: string): Promise<number> {
  return db.customerDocument.count({ where: { customerId, uploadedVia: 'hosted_page' } });
}

export async function insertCustomerDocument(tx: DatabaseTransaction, document: NewCustomerDocument): Promise<void> {
  await tx.customerDocument.create({ data: document });
}

export function listVerificationSteps(db: Db, customerId: string): Promise<VerificationStepRow[]> {
  return db.verificationStep.findMany({ where: { customerId } });
}

/** A document arrived for a step that was waiting for one (after a partial rejection). */
export async function markStepDocumentReceived(
  tx: DatabaseTransaction,
  customerId: string,
  step: string,
): Promise<void> {
  await tx.verificationStep.updateMany({
    where: { customerId, name: step, awaitingDocument: true },
    data: { awaitingDocument: false },
  });
}

/** A review starts: the open steps go under review, their earlier rejection cleared. */
export async function putOpenStepsUnderReview(tx: DatabaseTransaction, customerId: string): Promise<void> {
  await tx.verificationStep.updateMany({
    where: { customerId, state: { in: ['pending', 'partially_rejected'] } },
    data: { state: 'under_review', rejectionCodes: [], rejectionDescription: null },
  });
}

/** A review's rejection of one step. */
export async function rejectVerificationStep(
  tx: DatabaseTransaction,
  customerId: string,
  name: string,
  rejection: { state: string; rejectionCodes: string[]; rejectionDescription: string; awaitingDocument: boolean },
): Promise<void> {
  await tx.verificationStep.update({ where: { customerId_name: { customerId, name } }, data: rejection });
}

/** A review decided: the steps it did not reject are approved. */
export async function approveStepsUnderReview(tx: DatabaseTransaction, customerId: string): Promise<void> {
  await tx.verificationStep.updateMany({
    where: { customerId, state: 'under_review' },
    data: { state: 'approved' },
  });
}
