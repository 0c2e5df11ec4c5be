// Customers as the API shows them: the full resource (create, get and event payloads), the list
// item and the verification details. Pure: rows in, API shapes out.
import type { CustomerRow, CustomerWithReviewInputs, VerificationStepRow } from '../persistence/customers';
import {
  DocumentSide,
  DocumentType,
  missingDocuments,
  RejectionCode,
  stepsFor,
  VerificationStep,
} from '../domain/verification';
import {
  issueVerificationLink,
  LinkConfig,
  linkFromPlaceholder,
  LinkSettings,
  storedLinkPlaceholder,
  verificationLinkOf,
} from '../domain/verification-links';
import type { Address } from '../schemas/common';
import type {
  BeneficiaryResource,
  CustomerListItem,
  CustomerResource,
  CustomerStatus,
  CustomerType,
  VerificationDetails,
} from '../schemas/customers';

/**
 * What must still be uploaded before a review can start, in words the end user can act on: the minimum documents
 * (src/domain/verification.ts), and after a partial rejection a new document for every rejected step awaiting one.
 * The review's start refuses on it; the hosted page shows it.
 */
export function missingBeforeReview(customer: CustomerWithReviewInputs): string[] {
  const missing = missingDocuments(
    {
      type: customer.type,
      beneficiaries: customer.beneficiaries.map((b) => ({
        id: b.id,
        shareSize: b.shareSize.toString(),
        name: `${b.firstName} ${b.lastName}`,
      })),
    },
    customer.documents.map((doc) => ({
      documentType: doc.documentType as DocumentType,
      documentSide: doc.documentSide as DocumentSide | null,
      beneficiaryId: doc.beneficiaryId,
    })),
  );
  for (const step of customer.verificationSteps) {
    if (step.awaitingDocument) missing.push(`a new document for the rejected step ${step.name}`);
  }
  return missing;
}

const dateOnly = (date: Date): string => date.toISOString().slice(0, 10);

/** How verification links are made in this deployment (src/domain/verification-links.ts). */
export function linkSettingsOf(config: LinkConfig): LinkSettings {
  return {
    encryptionKey: config.secrets.encryptionKey,
    publicBaseUrl: config.publicBaseUrl,
    ttlHours: config.verificationLinkTtlHours,
  };
}

/** The link shown by the API (null unless the customer can submit). */
export function customerLinkOf(config: LinkConfig, row: CustomerRow): string | null {
  return verificationLinkOf(linkSettingsOf(config), row);
}

/** The customer as an event stores it: the link's version instead of the link (the token is a secret). */
export function toCustomerForEvent(row: CustomerRow): CustomerResource {
  return toCustomer(row, storedLinkPlaceholder(row));
}

/** A customer stored in an event, as shown or sent: the placeholder becomes the link of that version. */
export function customerFromEvent(
  config: LinkConfig,
  customerId: string,
  stored: Record<string, unknown>,
): Record<string, unknown> {
  const verification = stored.verification as Record<string, unknown> | undefined;
  if (!verification) return stored;
  const link = linkFromPlaceholder(linkSettingsOf(config), customerId, verification.verification_link);
  return { ...stored, verification: { ...verification, verification_link: link } };
}

/** The columns replacing the link on a status change (the old token stops working at once). */
export function nextVerificationLink(config: LinkConfig, row: Pick<CustomerRow, 'id' | 'verificationLinkVersion'>) {
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
    type: row.type,
    status: row.status,
    email: row.email,
    phone_number: row.phoneNumber,
    country: row.country,
    address: row.address as unknown as Address,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
  if (row.type === 'individual') {
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

/** The customer's verification steps grouped by state, in the order of the customer type's steps. */
export function toVerificationDetails(customer: CustomerRow, stepRows: VerificationStepRow[]): VerificationDetails {
  const order = stepsFor(customer.type);
  const steps = [...stepRows].sort(
    (a, b) => order.indexOf(a.name as VerificationStep) - order.indexOf(b.name as VerificationStep),
  );
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
    customer_status: customer.status,
    verification_steps: {
      pending: named('pending'),
      under_review: named('under_review'),
      approved: named('approved'),
      partially_rejected: rejected('partially_rejected'),
      rejected: rejected('rejected'),
    },
  };
}
