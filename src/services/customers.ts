// Customer commands: lookups (404 for another partner's customer), creation with its workflow,
// document uploads and the verification updates the partner API and the hosted page share.
import { ownedOrNotFound } from './owned';
import { WorkflowHandle, WorkflowNotFoundError } from '@temporalio/client';
import type { Database, DatabaseClient } from '../persistence/database';
import {
  countHostedUploads,
  CustomerRow,
  type CustomerStatusRow,
  findCustomer,
  findCustomerStatus,
  insertCustomer,
  insertCustomerDocument,
  listCustomers as listCustomerRows,
  listVerificationSteps,
  lockCustomer,
  markStepDocumentReceived,
  NewBeneficiary,
  NewCustomer,
  readCustomer,
  readCustomerLinkState,
  renewVerificationLink,
} from '../persistence/customers';
import { personDocumentTypes, stepOfDocument, stepsFor, VerificationDecision } from '../domain/verification';
import { DetectedFileType, detectFileType } from '../domain/file-types';
import { newId } from '../domain/ids';
import { recordEvent } from '../persistence/events';
import { paginate, type PageRequest } from '../domain/pages';
import { DomainError, type ValidationDetail } from '../domain/errors';
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from '../domain/json';
import type { SingleFileUpload } from '../domain/file-types';
import { issuesToDetails } from '../domain/validation';
import {
  customerLinkOf,
  linkSettingsOf,
  toCustomer,
  toCustomerForEvent,
  toVerificationDetails,
} from '../presenters/customers';
import { isLinkCurrent, issueVerificationLink, offersVerificationLink } from '../domain/verification-links';
import {
  CreateCustomerRequest,
  CustomerResource,
  DocumentMetadata,
  documentMetadataSchema,
  VerificationDetails,
} from '../schemas/customers';
import type { ApiServices } from '../app-services';
import { updateRefusal } from '../temporal/errors';
import { workflowIds } from '../temporal/workflow-ids';
import { callWorkflow, workflowStart, writeThenStart, writeRequest } from '../temporal/write-then-start';
import {
  customerVerificationWorkflow,
  setSandboxVerificationOutcomeUpdate,
  submitForVerificationUpdate,
  verificationRefusals,
} from '../../workflows/customer-verification';

/**
 * The row with a link that can be shown: an expired link (or one made with an earlier key) of a customer who can
 * still submit is replaced by a new version first. No event: the customer's status did not change.
 */
export async function withCurrentLink(services: ApiServices, row: CustomerRow): Promise<CustomerRow> {
  const settings = linkSettingsOf(services.config);
  if (!offersVerificationLink(row.status) || isLinkCurrent(settings, row)) return row;
  const renewed = issueVerificationLink(settings, row.id, row.verificationLinkVersion + 1);
  // Conditional on the version: of two concurrent renewals one wins and both show its (deterministic) link.
  await renewVerificationLink(services.prisma, row, renewed);
  return readCustomer(services.prisma, row.id);
}

/** A customer of this partner, or 404 (also for malformed ids and other partners' customers). */
export async function findCustomerOrThrow(
  db: DatabaseClient,
  partnerId: string,
  customerId: string,
): Promise<CustomerRow> {
  return ownedOrNotFound('customer', findCustomer, db, partnerId, customerId);
}

/**
 * The `customer_id` filter of a list: the where-fragment of the partner's customer, or 404 when the
 * customer is not the partner's (so a filter never reveals another partner's customer).
 */
export async function ownedCustomerFilter(
  db: DatabaseClient,
  partnerId: string,
  customerId: string | undefined,
): Promise<{ customerId?: string }> {
  if (customerId === undefined) return {};
  return { customerId: (await findCustomerOrThrow(db, partnerId, customerId)).id };
}

/** The one check other modules use before a customer may transact (its own columns: one statement). */
export async function requireApprovedCustomer(
  db: DatabaseClient,
  partnerId: string,
  customerId: string,
): Promise<CustomerStatusRow> {
  const customer = await ownedOrNotFound('customer', findCustomerStatus, db, partnerId, customerId);
  if (customer.status !== 'approved') {
    throw new DomainError(
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
  if (request.simulate !== undefined && services.config.appEnv !== 'sandbox') {
    throw DomainError.invalidParam('simulate', 'is a sandbox control; production customers are screened as they are');
  }
  const id = newId();
  const base = {
    id,
    partnerId,
    type: request.type,
    sandboxSimulation: request.simulate ?? null,
    status: 'pending' as const,
    email: request.email,
    phoneNumber: request.phone_number,
    country: request.country,
    address: request.address,
    ...issueVerificationLink(linkSettingsOf(services.config), id, 1),
  };
  const customer: NewCustomer =
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
        };
  const beneficiaries: NewBeneficiary[] | undefined =
    request.type === 'individual'
      ? undefined
      : request.beneficiaries.map((beneficiary, position) => ({
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
        }));
  const { config } = services;
  return writeThenStart(services, async (tx, start) => {
    const row = await insertCustomer(tx, customer, beneficiaries, stepsFor(request.type));
    const resource = toCustomer(row, customerLinkOf(config, row));
    await recordEvent(tx, {
      partnerId,
      type: 'customer.created',
      resourceId: id,
      resourceStatus: row.status,
      resource: toCustomerForEvent(row),
    });
    await start(
      workflowStart(customerVerificationWorkflow, {
        workflowId: workflowIds.customerVerification(id),
        args: [{ customerId: id, partnerId, customerType: request.type }],
        searchAttributes: { PartnerId: partnerId, CustomerId: id, ResourceId: id },
      }),
    );
    return resource;
  });
}

/** Map of the workflow's refusals to API errors. */
function refusalToDomainError(error: unknown): DomainError | null {
  const refusal = updateRefusal(error);
  if (!refusal) return null;
  switch (refusal.type) {
    case verificationRefusals.rejected:
      return new DomainError('customer_rejected', refusal.message);
    case verificationRefusals.approved:
      return new DomainError('customer_already_approved', refusal.message);
    case verificationRefusals.underReview:
      return new DomainError('customer_verification_in_progress', refusal.message);
    case verificationRefusals.invalidDecision:
      return new DomainError('invalid_verification_outcome', refusal.message);
    default:
      return null;
  }
}

function refuseUnlessAcceptingDocuments(customer: CustomerRow): void {
  refuseIfDecided(customer);
  if (customer.status === 'under_review') {
    throw new DomainError('customer_verification_in_progress', 'The customer is under review; wait for the result.');
  }
}

/**
 * Where a document comes from: the partner's API, or the hosted verification page, which takes at most
 * `maxPerCustomer` documents per customer (HOSTED_UPLOADS_PER_CUSTOMER).
 */
export type DocumentSource = { via: 'api' } | { via: 'hosted_page'; maxPerCustomer: number };

/**
 * Validates and stores one document (file + metadata) for a customer. From the hosted page, a customer who reached
 * its cap is refused (`hosted_upload_limit_reached`, decided under the customer's row lock, so concurrent uploads
 * cannot pass it) and nothing is stored.
 */
export async function uploadDocument(
  services: ApiServices,
  customer: CustomerRow,
  upload: SingleFileUpload,
  source: DocumentSource = { via: 'api' },
): Promise<'stored' | 'hosted_upload_limit_reached'> {
  const details: ValidationDetail[] = [];
  let metadata: DocumentMetadata | undefined;
  const rawMetadata = upload.fields.metadata;
  if (rawMetadata === undefined) {
    details.push({ code: 'missing_param', param: 'metadata', message: 'is required (a JSON string)' });
  } else {
    let parsedJson: unknown;
    if (jsonNestsDeeperThan(rawMetadata, MAX_JSON_DEPTH)) {
      details.push({
        code: 'invalid_param',
        param: 'metadata',
        message: `must not nest JSON arrays and objects deeper than ${MAX_JSON_DEPTH} levels`,
      });
    } else {
      try {
        parsedJson = JSON.parse(rawMetadata);
      } catch {
        details.push({ code: 'invalid_param', param: 'metadata', message: 'must be a JSON string' });
      }
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
  if (details.length > 0) throw DomainError.validation(details);
  // Rules that depend on the customer (its type, its beneficiaries): the request's shape was fine.
  const ruleProblems = documentRuleProblems(customer, metadata as DocumentMetadata);
  if (ruleProblems.length > 0) {
    throw new DomainError('document_not_applicable', ruleProblems.map((p) => `${p.param}: ${p.message}`).join('; '));
  }
  const valid = metadata as DocumentMetadata;
  const file = upload.file as NonNullable<SingleFileUpload['file']>;
  const detected = fileType as DetectedFileType;

  const documentId = newId();
  const storageKey = `customers/${customer.id}/${documentId}`;
  await services.documentStore.putFile(storageKey, file.path);
  let outcome: 'stored' | 'hosted_upload_limit_reached' = 'stored';
  try {
    await writeRequest(services.prisma, async (tx) => {
      // Lock the customer so an upload cannot race a status change (e.g. check or a decision), nor another upload.
      await lockCustomer(tx, customer.id);
      const current = await readCustomer(tx, customer.id);
      refuseUnlessAcceptingDocuments(current);
      if (source.via === 'hosted_page' && (await countHostedUploads(tx, customer.id)) >= source.maxPerCustomer) {
        outcome = 'hosted_upload_limit_reached';
        return;
      }
      await insertCustomerDocument(tx, {
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
        uploadedVia: source.via,
      });
      const step = stepOfDocument(valid.document_type, valid.beneficiary_id !== undefined);
      if (step) await markStepDocumentReceived(tx, customer.id, step);
    });
  } catch (error) {
    await services.documentStore.delete(storageKey);
    throw error;
  }
  if (outcome !== 'stored') await services.documentStore.delete(storageKey);
  return outcome;
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
    throw new DomainError(
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
    throw new DomainError('customer_rejected', 'The customer was rejected; this is final.');
  if (customer.status === 'approved')
    throw new DomainError('customer_already_approved', 'The customer is already approved.');
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
    return await callWorkflow(services, workflowIds.customerVerification(customer.id), update);
  } catch (error) {
    const refusal = refusalToDomainError(error);
    if (refusal) throw refusal;
    if (error instanceof WorkflowNotFoundError) {
      refuseIfDecided(await readCustomerLinkState(services.prisma, customer.id));
    }
    throw error;
  }
}

export async function verificationDetailsOf(db: DatabaseClient, customer: CustomerRow): Promise<VerificationDetails> {
  return toVerificationDetails(customer, await listVerificationSteps(db, customer.id));
}

/** A page of the partner's customers, each with its current verification link. */
export async function listCustomers(
  services: ApiServices,
  partnerId: string,
  page: PageRequest,
  filter: Parameters<typeof listCustomerRows>[2],
) {
  const { rows, cursor } = await paginate(page, (keyset) =>
    listCustomerRows(services.prisma, partnerId, filter, keyset),
  );
  return { rows: await Promise.all(rows.map((row) => withCurrentLink(services, row))), cursor };
}
