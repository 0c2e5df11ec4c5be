// Customers as the API shows them (the full resource for create, get and events; the list item),
// and the operations the partner API and the hosted verification page share.
import { WorkflowHandle, WorkflowNotFoundError } from '@temporalio/client';
import type { AppConfig } from '../config';
import type { Db, Prisma } from '../db';
import {
  personDocumentTypes,
  RejectionCode,
  stepOfDocument,
  stepsFor,
  VerificationDecision,
  VerificationStep,
} from '../domain/verification';
import { DetectedFileType, detectFileType } from '../domain/file-types';
import { isUuid, newId } from '../domain/ids';
import {
  isLinkCurrent,
  issueVerificationLink,
  LinkSettings,
  linkFromPlaceholder,
  offersVerificationLink,
  storedLinkPlaceholder,
  verificationLinkOf,
} from '../domain/verification-links';
import { recordEvent } from '../events';
import { ApiError, ValidationDetail } from '../http/errors';
import type { SingleFileUpload } from '../http/multipart';
import { issuesToDetails } from '../http/validation';
import type { Address } from '../schemas/common';
import {
  BeneficiaryResource,
  CreateCustomerRequest,
  CustomerListItem,
  CustomerResource,
  CustomerStatus,
  CustomerType,
  DocumentMetadata,
  documentMetadataSchema,
  VerificationDetails,
} from '../schemas/customers';
import type { ApiServices } from '../services';
import { updateRefusal } from '../temporal/errors';
import { workflowIds } from '../temporal/workflow-ids';
import {
  customerVerificationWorkflow,
  setSandboxVerificationOutcomeUpdate,
  SubmitForVerificationResult,
  submitForVerificationUpdate,
  verificationRefusals,
} from '../../workflows/customer-verification';

export type CustomerRow = Prisma.CustomerGetPayload<{ include: { beneficiaries: true } }>;
export const withBeneficiaries = { beneficiaries: { orderBy: { position: 'asc' } } } as const;

const dateOnly = (date: Date): string => date.toISOString().slice(0, 10);

/** How verification links are made in this deployment (src/domain/verification-links.ts). */
export function linkSettingsOf(config: Pick<AppConfig, 'secrets' | 'publicBaseUrl' | 'verificationLinkTtlHours'>): LinkSettings {
  return {
    encryptionKey: config.secrets.encryptionKey,
    publicBaseUrl: config.publicBaseUrl,
    ttlHours: config.verificationLinkTtlHours,
  };
}

/** The link shown by the API (null unless the customer can submit). */
export function customerLinkOf(config: Parameters<typeof linkSettingsOf>[0], row: CustomerRow): string | null {
  return verificationLinkOf(linkSettingsOf(config), row);
}

/** The customer as an event stores it: the link's version instead of the link (the token is a secret). */
export function toCustomerForEvent(row: CustomerRow): CustomerResource {
  return toCustomer(row, storedLinkPlaceholder(row));
}

/** A customer stored in an event, as shown or sent: the placeholder becomes the link of that version. */
export function customerFromEvent(
  config: Parameters<typeof linkSettingsOf>[0],
  customerId: string,
  stored: Record<string, unknown>,
): Record<string, unknown> {
  const verification = stored.verification as Record<string, unknown> | undefined;
  if (!verification) return stored;
  const link = linkFromPlaceholder(linkSettingsOf(config), customerId, verification.verification_link);
  return { ...stored, verification: { ...verification, verification_link: link } };
}

/**
 * The rows with links that can be shown: an expired link (or one made with an earlier key) of a customer who can
 * still submit is replaced by a new version first. No event: the customer's status did not change.
 */
export async function withCurrentLinks(services: ApiServices, rows: CustomerRow[]): Promise<CustomerRow[]> {
  const settings = linkSettingsOf(services.config);
  return Promise.all(
    rows.map(async (row) => {
      if (!offersVerificationLink(row.status) || isLinkCurrent(settings, row)) return row;
      const renewed = issueVerificationLink(settings, row.id, row.verificationLinkVersion + 1);
      // Conditional on the version: of two concurrent renewals one wins and both show its (deterministic) link.
      await services.prisma.customer.updateMany({
        where: { id: row.id, verificationLinkVersion: row.verificationLinkVersion },
        data: { ...renewed, updatedAt: row.updatedAt },
      });
      return services.prisma.customer.findUniqueOrThrow({ where: { id: row.id }, include: withBeneficiaries });
    }),
  );
}

/** The columns replacing the link on a status change (the old token stops working at once). */
export function nextVerificationLink(config: Parameters<typeof linkSettingsOf>[0], row: Pick<CustomerRow, 'id' | 'verificationLinkVersion'>) {
  return issueVerificationLink(linkSettingsOf(config), row.id, row.verificationLinkVersion + 1);
}

function beneficiaryOf(row: CustomerRow['beneficiaries'][number]): BeneficiaryResource {
  return {
    id: row.id,
    first_name: row.firstName,
    last_name: row.lastName,
    ...(row.email !== null ? { email: row.email } : {}),
    ...(row.phoneNumber !== null ? { phone_number: row.phoneNumber } : {}),
    date_of_birth: dateOnly(row.dateOfBirth),
    tin: row.tin,
    country: row.country,
    share_size: row.shareSize.toString(),
    address: row.address as unknown as Address,
  };
}

function baseOf(row: CustomerRow) {
  const common = {
    id: row.id,
    type: row.type as CustomerType,
    status: row.status as CustomerStatus,
    email: row.email,
    phone_number: row.phoneNumber,
    country: row.country,
    address: row.address as unknown as Address,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
  if ((row.type as CustomerType) === 'individual') {
    return {
      ...common,
      type: 'individual' as const,
      first_name: row.firstName ?? '',
      last_name: row.lastName ?? '',
      date_of_birth: row.dateOfBirth ? dateOnly(row.dateOfBirth) : '',
      tin: row.tin ?? '',
    };
  }
  return {
    ...common,
    type: 'business' as const,
    business_legal_name: row.businessLegalName ?? '',
    date_of_incorporation: row.dateOfIncorporation ? dateOnly(row.dateOfIncorporation) : '',
    tax_id: row.taxId ?? '',
    ...(row.website !== null ? { website: row.website } : {}),
    no_ubos: row.noUbos ?? false,
    beneficiaries: row.beneficiaries.map(beneficiaryOf),
  };
}

/** `link`: customerLinkOf for the API, the stored placeholder for events. */
export function toCustomer(row: CustomerRow, link: string | null): CustomerResource {
  return {
    ...baseOf(row),
    partner_id: row.partnerId,
    verification: { verification_link: link, verification_type: 'LIGHT' },
  };
}

export function toCustomerListItem(row: CustomerRow, link: string | null): CustomerListItem {
  return { ...baseOf(row), ...(link !== null ? { verification_link: link } : {}) };
}

// ---- operations shared by the partner API and the hosted verification page ----

/** A customer of this partner, or 404 (also for malformed ids and other partners' customers). */
export async function findCustomerOrThrow(db: Db, partnerId: string, customerId: string): Promise<CustomerRow> {
  const row = isUuid(customerId)
    ? await db.customer.findFirst({ where: { id: customerId, partnerId }, include: withBeneficiaries })
    : null;
  if (!row) throw ApiError.notFound('customer', customerId);
  return row;
}

/**
 * The `customer_id` filter of a list: the where-fragment of the partner's customer, or 404 when the
 * customer is not the partner's (so a filter never reveals another partner's customer).
 */
export async function ownedCustomerFilter(
  db: Db,
  partnerId: string,
  customerId: string | undefined,
): Promise<{ customerId?: string }> {
  if (customerId === undefined) return {};
  return { customerId: (await findCustomerOrThrow(db, partnerId, customerId)).id };
}

/** The one check other modules use before a customer may transact. */
export async function requireApprovedCustomer(db: Db, partnerId: string, customerId: string): Promise<CustomerRow> {
  const customer = await findCustomerOrThrow(db, partnerId, customerId);
  if (customer.status !== 'approved') {
    throw new ApiError(
      'customer_not_approved',
      `Customer ${customerId} is ${customer.status}; only approved customers can do this.`,
    );
  }
  return customer;
}

export async function createCustomer(
  services: ApiServices,
  partnerId: string,
  request: CreateCustomerRequest,
): Promise<CustomerResource> {
  const id = newId();
  const base = {
    id,
    partnerId,
    type: request.type,
    status: 'pending',
    email: request.email,
    phoneNumber: request.phone_number,
    country: request.country,
    address: request.address,
    ...issueVerificationLink(linkSettingsOf(services.config), id, 1),
  };
  const data: Prisma.CustomerUncheckedCreateInput =
    request.type === 'individual'
      ? {
          ...base,
          firstName: request.first_name,
          lastName: request.last_name,
          dateOfBirth: new Date(`${request.date_of_birth}T00:00:00Z`),
          tin: request.tin,
        }
      : {
          ...base,
          businessLegalName: request.business_legal_name,
          dateOfIncorporation: new Date(`${request.date_of_incorporation}T00:00:00Z`),
          taxId: request.tax_id,
          website: request.website ?? null,
          noUbos: request.no_ubos,
          beneficiaries: {
            create: request.beneficiaries.map((beneficiary, position) => ({
              id: newId(),
              position,
              firstName: beneficiary.first_name,
              lastName: beneficiary.last_name,
              email: beneficiary.email ?? null,
              phoneNumber: beneficiary.phone_number ?? null,
              dateOfBirth: new Date(`${beneficiary.date_of_birth}T00:00:00Z`),
              tin: beneficiary.tin,
              country: beneficiary.country,
              shareSize: beneficiary.share_size,
              address: beneficiary.address,
            })),
          },
        };
  const { config, temporal } = services;
  return services.prisma.$transaction(
    async (tx) => {
      const row = await tx.customer.create({
        data: {
          ...data,
          verificationSteps: { create: stepsFor(request.type).map((name) => ({ name, state: 'pending' })) },
        },
        include: withBeneficiaries,
      });
      await recordEvent(tx, {
        partnerId,
        type: 'customer.created',
        resourceId: id,
        resourceStatus: row.status,
        resource: toCustomerForEvent(row),
      });
      // Started before the commit: if Temporal is unreachable the customer is not created either.
      await temporal.workflow.start(customerVerificationWorkflow, {
        workflowId: workflowIds.customerVerification(id),
        taskQueue: config.temporal.taskQueue,
        args: [{ customerId: id, partnerId, customerType: request.type }],
      });
      return toCustomer(row, customerLinkOf(config, row));
    },
    { timeout: 15_000 },
  );
}

/** Map of the workflow's refusals to API errors. */
function refusalToApiError(error: unknown): ApiError | null {
  const refusal = updateRefusal(error);
  if (!refusal) return null;
  switch (refusal.type) {
    case verificationRefusals.rejected:
      return new ApiError('customer_rejected', refusal.message);
    case verificationRefusals.approved:
      return new ApiError('customer_already_approved', refusal.message);
    case verificationRefusals.underReview:
      return new ApiError('customer_verification_in_progress', refusal.message);
    case verificationRefusals.invalidDecision:
      return ApiError.invalidParam('rejected_steps', refusal.message);
    default:
      return null;
  }
}

function refuseUnlessAcceptingDocuments(customer: CustomerRow): void {
  refuseIfDecided(customer);
  if (customer.status === 'under_review') {
    throw new ApiError('customer_verification_in_progress', 'The customer is under review; wait for the result.');
  }
}

/** Validates and stores one document (file + metadata) for a customer. */
export async function uploadDocument(
  services: ApiServices,
  customer: CustomerRow,
  upload: SingleFileUpload,
): Promise<void> {
  const details: ValidationDetail[] = [];
  let metadata: DocumentMetadata | undefined;
  const rawMetadata = upload.fields.metadata;
  if (rawMetadata === undefined) {
    details.push({ code: 'missing_param', param: 'metadata', message: 'is required (a JSON string)' });
  } else {
    let parsedJson: unknown;
    try {
      parsedJson = JSON.parse(rawMetadata);
    } catch {
      details.push({ code: 'invalid_param', param: 'metadata', message: 'must be a JSON string' });
    }
    if (parsedJson !== undefined) {
      const result = documentMetadataSchema.safeParse(parsedJson);
      if (result.success) metadata = result.data;
      else details.push(...issuesToDetails(result.error.issues, parsedJson, ['metadata']));
    }
  }
  let fileType: DetectedFileType | null = null;
  if (!upload.file) {
    details.push({ code: 'missing_param', param: 'file', message: 'is required' });
  } else if (upload.file.sizeBytes === 0) {
    details.push({ code: 'invalid_param', param: 'file', message: 'is empty' });
  } else {
    fileType = detectFileType(upload.file.head);
    if (!fileType)
      details.push({ code: 'invalid_param', param: 'file', message: 'must be a PDF, JPEG, PNG, WEBP or HEIC file' });
  }
  if (metadata) details.push(...documentRuleProblems(customer, metadata));
  if (details.length > 0) throw ApiError.validation(details);
  const valid = metadata as DocumentMetadata;
  const file = upload.file as NonNullable<SingleFileUpload['file']>;
  const detected = fileType as DetectedFileType;

  const documentId = newId();
  const storageKey = `customers/${customer.id}/${documentId}`;
  await services.documentStore.putFile(storageKey, file.path);
  try {
    await services.prisma.$transaction(async (tx) => {
      // Lock the customer so an upload cannot race a status change (e.g. check or a decision).
      await tx.$queryRaw`SELECT id FROM customers WHERE id = ${customer.id}::uuid FOR UPDATE`;
      const current = await tx.customer.findUniqueOrThrow({ where: { id: customer.id }, include: withBeneficiaries });
      refuseUnlessAcceptingDocuments(current);
      await tx.customerDocument.create({
        data: {
          id: documentId,
          customerId: customer.id,
          beneficiaryId: valid.beneficiary_id ?? null,
          documentType: valid.document_type,
          documentSide: valid.document_side ?? null,
          country: valid.country ?? null,
          fileName: file.fileName,
          contentType: detected.mime,
          sizeBytes: file.sizeBytes,
          sha256: file.sha256,
          storageKey,
        },
      });
      const step = stepOfDocument(valid.document_type, valid.beneficiary_id !== undefined);
      if (step) {
        await tx.verificationStep.updateMany({
          where: { customerId: customer.id, name: step, awaitingDocument: true },
          data: { awaitingDocument: false },
        });
      }
    });
  } catch (error) {
    await services.documentStore.delete(storageKey);
    throw error;
  }
}

/** Rules of SPEC 2.4 that depend on the customer. */
function documentRuleProblems(customer: CustomerRow, metadata: DocumentMetadata): ValidationDetail[] {
  const problems: ValidationDetail[] = [];
  const isPersonDocument = personDocumentTypes.includes(metadata.document_type);
  if (customer.type === 'individual') {
    if (!isPersonDocument) {
      problems.push({
        code: 'invalid_param',
        param: 'metadata.document_type',
        message: `${metadata.document_type} is a business document; individuals can upload ${personDocumentTypes.join(', ')}`,
      });
    }
    if (metadata.beneficiary_id !== undefined) {
      problems.push({
        code: 'invalid_param',
        param: 'metadata.beneficiary_id',
        message: 'only applies to business customers',
      });
    }
    return problems;
  }
  if (metadata.beneficiary_id !== undefined) {
    if (!customer.beneficiaries.some((beneficiary) => beneficiary.id === metadata.beneficiary_id)) {
      problems.push({
        code: 'invalid_param',
        param: 'metadata.beneficiary_id',
        message: "is not one of this customer's beneficiaries",
      });
    }
    if (!isPersonDocument) {
      problems.push({
        code: 'invalid_param',
        param: 'metadata.document_type',
        message: `documents of a beneficiary must be one of ${personDocumentTypes.join(', ')}`,
      });
    }
  } else if (isPersonDocument) {
    problems.push({
      code: 'invalid_param',
      param: 'metadata.document_type',
      message: `${metadata.document_type} is a personal document: for a business, send it with the beneficiary_id of the person`,
    });
  }
  return problems;
}

/** POST check and the hosted page's submit: asks the customer's workflow to start a review. */
export async function startVerification(services: ApiServices, customer: CustomerRow): Promise<void> {
  refuseUnlessAcceptingDocuments(customer);
  const result = await updateVerificationWorkflow(services, customer, (handle) =>
    handle.executeUpdate(submitForVerificationUpdate),
  );
  if (!result.accepted) {
    throw new ApiError(
      'verification_documents_missing',
      `Upload these documents before calling check: ${result.missing.join('; ')}.`,
    );
  }
}

/** Sandbox: sets the outcome of the customer's current (or next) review. */
export async function setSandboxOutcome(
  services: ApiServices,
  customer: CustomerRow,
  outcome: VerificationDecision,
): Promise<void> {
  refuseIfDecided(customer);
  await updateVerificationWorkflow(services, customer, (handle) =>
    handle.executeUpdate(setSandboxVerificationOutcomeUpdate, { args: [outcome] }),
  );
}

function refuseIfDecided(customer: Pick<CustomerRow, 'status'>): void {
  if (customer.status === 'rejected')
    throw new ApiError('customer_rejected', 'The customer was rejected; this is final.');
  if (customer.status === 'approved')
    throw new ApiError('customer_already_approved', 'The customer is already approved.');
}

/**
 * Runs an update on the customer's verification workflow, mapping its refusals to API errors. A
 * workflow that completed meanwhile (the customer was just approved or rejected) answers from the
 * stored status.
 */
async function updateVerificationWorkflow<T>(
  services: ApiServices,
  customer: CustomerRow,
  update: (handle: WorkflowHandle) => Promise<T>,
): Promise<T> {
  try {
    return await update(services.temporal.workflow.getHandle(workflowIds.customerVerification(customer.id)));
  } catch (error) {
    const refusal = refusalToApiError(error);
    if (refusal) throw refusal;
    if (error instanceof WorkflowNotFoundError) {
      refuseIfDecided(await services.prisma.customer.findUniqueOrThrow({ where: { id: customer.id } }));
    }
    throw error;
  }
}

export async function verificationDetailsOf(db: Db, customer: CustomerRow): Promise<VerificationDetails> {
  const steps = await db.verificationStep.findMany({ where: { customerId: customer.id } });
  const order = stepsFor(customer.type as CustomerType);
  steps.sort((a, b) => order.indexOf(a.name as VerificationStep) - order.indexOf(b.name as VerificationStep));
  const named = (state: string) =>
    steps.filter((step) => step.state === state).map((step) => step.name as VerificationStep);
  const rejected = (state: string) =>
    steps
      .filter((step) => step.state === state)
      .map((step) => ({
        name: step.name as VerificationStep,
        rejection_code: step.rejectionCodes as RejectionCode[],
        rejection_description: step.rejectionDescription ?? '',
      }));
  return {
    customer_id: customer.id,
    customer_status: customer.status as CustomerStatus,
    verification_steps: {
      pending: named('pending'),
      under_review: named('under_review'),
      approved: named('approved'),
      partially_rejected: rejected('partially_rejected'),
      rejected: rejected('rejected'),
    },
  };
}
