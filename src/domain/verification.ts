// KYC/KYB rules that do not depend on storage: which documents exist, which a customer type may
// upload, which must be present before verification starts, and the verification steps.
// Pure and deterministic: workflows, activities and routes all import it.

export const documentTypes = [
  'PASSPORT',
  'NATIONAL_ID',
  'DRIVER_LICENSE',
  'PROOF_OF_ADDRESS',
  'SELFIE',
  'INCORPORATION_ARTICLES',
  'INCORPORATION_CERTIFICATE',
  'INCUMBENCY_CERTIFICATE',
  'SHAREHOLDER_REGISTRY',
  'STATE_COMPANY_REGISTRY',
] as const;
export type DocumentType = (typeof documentTypes)[number];

export const documentSides = ['FRONT', 'BACK'] as const;
export type DocumentSide = (typeof documentSides)[number];

/** Documents about a person: an individual customer, or a business's beneficiary (with beneficiary_id). */
export const personDocumentTypes: readonly DocumentType[] = [
  'PASSPORT',
  'NATIONAL_ID',
  'DRIVER_LICENSE',
  'PROOF_OF_ADDRESS',
  'SELFIE',
];
/** Documents about a company: business customers only, never with a beneficiary_id. */
export const companyDocumentTypes: readonly DocumentType[] = [
  'INCORPORATION_ARTICLES',
  'INCORPORATION_CERTIFICATE',
  'INCUMBENCY_CERTIFICATE',
  'SHAREHOLDER_REGISTRY',
  'STATE_COMPANY_REGISTRY',
];
export const sidedDocumentTypes: readonly DocumentType[] = ['NATIONAL_ID', 'PASSPORT', 'DRIVER_LICENSE'];
/** Identity documents and the sides that make one complete (a passport has one data page). */
export const identityDocumentSides: Record<string, readonly DocumentSide[]> = {
  PASSPORT: ['FRONT'],
  NATIONAL_ID: ['FRONT', 'BACK'],
  DRIVER_LICENSE: ['FRONT', 'BACK'],
};

/** Shareholders above this percentage must provide an identity document (SPEC 8). */
export const BENEFICIARY_DOCUMENT_THRESHOLD = 25;

export const individualSteps = ['CUSTOMER_DATA', 'IDENTITY_DOCUMENT', 'PROOF_OF_ADDRESS'] as const;
export const businessSteps = [
  'CUSTOMER_DATA',
  'INCORPORATION_CERT',
  'INCORPORATION_ARTICLES',
  'SHAREHOLDER_REGISTRY',
  'CUSTOMER_BENEFICIARIES',
] as const;
export type VerificationStep = (typeof individualSteps)[number] | (typeof businessSteps)[number];
export const allSteps: readonly VerificationStep[] = [...new Set([...individualSteps, ...businessSteps])];

export function stepsFor(type: 'individual' | 'business'): readonly VerificationStep[] {
  return type === 'individual' ? individualSteps : businessSteps;
}

/** Which step a document belongs to; documents without a step are supporting evidence. */
export function stepOfDocument(type: DocumentType, hasBeneficiary: boolean): VerificationStep | null {
  if (hasBeneficiary) return 'CUSTOMER_BENEFICIARIES';
  switch (type) {
    case 'PASSPORT':
    case 'NATIONAL_ID':
    case 'DRIVER_LICENSE':
      return 'IDENTITY_DOCUMENT';
    case 'PROOF_OF_ADDRESS':
      return 'PROOF_OF_ADDRESS';
    case 'INCORPORATION_CERTIFICATE':
      return 'INCORPORATION_CERT';
    case 'INCORPORATION_ARTICLES':
      return 'INCORPORATION_ARTICLES';
    case 'SHAREHOLDER_REGISTRY':
      return 'SHAREHOLDER_REGISTRY';
    default:
      return null;
  }
}

/** Steps fixed by uploading a new document (CUSTOMER_DATA is resubmitted as it is, or through the hosted page). */
export function stepNeedsDocument(step: VerificationStep): boolean {
  return step !== 'CUSTOMER_DATA';
}

export const rejectionCodes = [
  'WRONG_ADDRESS',
  'EXPIRED',
  'FRAUDULENT',
  'ILLEGIBLE',
  'INCOMPLETE',
  'DATA_MISMATCH',
  'UNSUPPORTED_DOCUMENT',
  'SANCTIONS_MATCH',
  'UNSUPPORTED_JURISDICTION',
] as const;
export type RejectionCode = (typeof rejectionCodes)[number];

export interface RejectedStep {
  name: VerificationStep;
  rejection_code: RejectionCode[];
  rejection_description: string;
}

/** A verification result, from the provider, an operator or the sandbox. */
export interface VerificationDecision {
  outcome: 'approved' | 'partially_rejected' | 'rejected';
  /** Steps that failed; required for partially_rejected and rejected, empty for approved. */
  rejected_steps: RejectedStep[];
}

export interface UploadedDocument {
  documentType: DocumentType;
  documentSide: DocumentSide | null;
  beneficiaryId: string | null;
}

function hasCompleteIdentityDocument(documents: UploadedDocument[]): boolean {
  return Object.entries(identityDocumentSides).some(([type, sides]) =>
    sides.every((side) => documents.some((doc) => doc.documentType === type && doc.documentSide === side)),
  );
}

/**
 * The minimum set before verification can start; returns what is missing, in words a partner can act on.
 * - individual: a complete identity document (passport FRONT, or national id / driver license FRONT and BACK)
 *   and a PROOF_OF_ADDRESS
 * - business: INCORPORATION_CERTIFICATE, INCORPORATION_ARTICLES, SHAREHOLDER_REGISTRY, and a complete identity
 *   document for every beneficiary holding more than 25%
 */
export function missingDocuments(
  customer: { type: 'individual' | 'business'; beneficiaries: { id: string; shareSize: string; name: string }[] },
  documents: UploadedDocument[],
): string[] {
  const missing: string[] = [];
  const own = documents.filter((doc) => doc.beneficiaryId === null);
  if (customer.type === 'individual') {
    if (!hasCompleteIdentityDocument(own)) {
      missing.push(
        'an identity document: PASSPORT (FRONT), NATIONAL_ID (FRONT and BACK) or DRIVER_LICENSE (FRONT and BACK)',
      );
    }
    if (!own.some((doc) => doc.documentType === 'PROOF_OF_ADDRESS')) missing.push('PROOF_OF_ADDRESS');
    return missing;
  }
  for (const type of ['INCORPORATION_CERTIFICATE', 'INCORPORATION_ARTICLES', 'SHAREHOLDER_REGISTRY'] as const) {
    if (!own.some((doc) => doc.documentType === type)) missing.push(type);
  }
  for (const beneficiary of customer.beneficiaries) {
    if (Number(beneficiary.shareSize) <= BENEFICIARY_DOCUMENT_THRESHOLD) continue;
    const theirs = documents.filter((doc) => doc.beneficiaryId === beneficiary.id);
    if (!hasCompleteIdentityDocument(theirs)) {
      missing.push(`an identity document for beneficiary ${beneficiary.id} (${beneficiary.name})`);
    }
  }
  return missing;
}
