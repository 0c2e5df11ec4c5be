// The hosted verification page's rules, without I/O: which language to speak, and which steps this customer still
// has, has done or has under review, worked out from the customer type, the uploaded documents and the verification
// steps (a rejected step with its reason). The page (src/presenters/hosted-page.ts) only lays them out.
import {
  BENEFICIARY_DOCUMENT_THRESHOLD,
  DocumentSide,
  DocumentType,
  identityDocumentSides,
  VerificationStep,
} from './verification';

/** Where the page's stylesheet and script are served (src/http/hosted-assets.ts). */
export const hostedAssetPaths = { css: '/hosted-assets/hosted.css', js: '/hosted-assets/hosted.js' } as const;

export const hostedLocales = ['pt', 'es', 'en'] as const;
export type HostedLocale = (typeof hostedLocales)[number];

const isLocale = (value: string | undefined): value is HostedLocale =>
  value !== undefined && (hostedLocales as readonly string[]).includes(value);

/**
 * The page's language: an explicit choice (the switch's `?lang=`, then the cookie it sets) over the browser's
 * Accept-Language (highest q first, primary subtag only: pt-BR and pt-PT both read Portuguese), else English.
 */
export function negotiateLocale(choice: { query?: string; cookie?: string; acceptLanguage?: string }): HostedLocale {
  if (isLocale(choice.query)) return choice.query;
  if (isLocale(choice.cookie)) return choice.cookie;
  const ranges = (choice.acceptLanguage ?? '')
    .slice(0, 500)
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { primary: tag.trim().toLowerCase().split('-')[0], q: q === undefined ? 1 : Number(q), index };
    })
    .filter((range) => range.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  return ranges.map((range) => range.primary).find(isLocale) ?? 'en';
}

/** What the page shows for one thing the customer provides. */
export type HostedStepState = 'todo' | 'uploaded' | 'in_review' | 'accepted' | 'rejected';

export interface HostedStep {
  /** Stable id for the page's anchors and the tests. */
  id: string;
  kind: 'identity' | 'document' | 'selfie' | 'data';
  /** The verification step it belongs to (none for the optional selfie). */
  step: VerificationStep | null;
  /** The document types that complete it (a choice for identity steps). */
  documentTypes: readonly DocumentType[];
  /** A business's beneficiary whose identity this is. */
  beneficiary: { id: string; name: string } | null;
  state: HostedStepState;
  optional: boolean;
  /** For a rejected step: the review's reasons. */
  rejection: { codes: string[]; description: string | null } | null;
  /** Identity steps: the sides already received, by document type. */
  sidesReceived: Partial<Record<DocumentType, DocumentSide[]>>;
}

export interface HostedPageInput {
  type: 'individual' | 'business';
  status: string;
  beneficiaries: { id: string; name: string; shareSize: string }[];
  documents: { documentType: string; documentSide: string | null; beneficiaryId: string | null }[];
  steps: {
    name: string;
    state: string;
    rejectionCodes: string[];
    rejectionDescription: string | null;
    awaitingDocument: boolean;
  }[];
}

export const identityDocumentTypes: readonly DocumentType[] = ['PASSPORT', 'NATIONAL_ID', 'DRIVER_LICENSE'];

type Documents = HostedPageInput['documents'];

function sidesReceived(documents: Documents): Partial<Record<DocumentType, DocumentSide[]>> {
  const received: Partial<Record<DocumentType, DocumentSide[]>> = {};
  for (const type of identityDocumentTypes) {
    const sides = [
      ...new Set(
        documents.filter((doc) => doc.documentType === type && doc.documentSide).map((doc) => doc.documentSide),
      ),
    ] as DocumentSide[];
    if (sides.length > 0) received[type] = sides;
  }
  return received;
}

function identityComplete(documents: Documents): boolean {
  return Object.entries(identityDocumentSides).some(([type, sides]) =>
    sides.every((side) => documents.some((doc) => doc.documentType === type && doc.documentSide === side)),
  );
}

/**
 * The state of a page step from its verification step: accepted and under review as the review says; a rejected
 * step waits for a new document (or is ready again once one arrived); a pending one is done once uploaded.
 */
function stateOf(row: HostedPageInput['steps'][number] | undefined, uploaded: boolean): HostedStepState {
  switch (row?.state) {
    case 'approved':
      return 'accepted';
    case 'under_review':
      return 'in_review';
    case 'partially_rejected':
    case 'rejected':
      return row.awaitingDocument || row.name === 'CUSTOMER_DATA' ? 'rejected' : 'uploaded';
    default:
      return uploaded ? 'uploaded' : 'todo';
  }
}

const rejectionOf = (row: HostedPageInput['steps'][number] | undefined) =>
  row && (row.state === 'partially_rejected' || row.state === 'rejected')
    ? { codes: row.rejectionCodes, description: row.rejectionDescription }
    : null;

/** The page's steps for this customer, in the order the customer works through them. */
export function hostedSteps(input: HostedPageInput): HostedStep[] {
  const rowOf = (name: VerificationStep) => input.steps.find((step) => step.name === name);
  const own = input.documents.filter((doc) => doc.beneficiaryId === null);
  const steps: HostedStep[] = [];
  const base = { beneficiary: null, optional: false, sidesReceived: {} };
  const dataRow = rowOf('CUSTOMER_DATA');
  // Personal data is given through the partner; it appears here only when the review rejected it.
  if (dataRow && stateOf(dataRow, true) === 'rejected') {
    steps.push({
      ...base,
      id: 'step-data',
      kind: 'data',
      step: 'CUSTOMER_DATA',
      documentTypes: [],
      state: 'rejected',
      rejection: rejectionOf(dataRow),
    });
  }
  const documentStep = (step: VerificationStep, type: DocumentType): HostedStep => ({
    ...base,
    id: `step-${type.toLowerCase().replace(/_/g, '-')}`,
    kind: 'document',
    step,
    documentTypes: [type],
    state: stateOf(
      rowOf(step),
      own.some((doc) => doc.documentType === type),
    ),
    rejection: rejectionOf(rowOf(step)),
  });
  if (input.type === 'individual') {
    steps.push({
      ...base,
      id: 'step-identity',
      kind: 'identity',
      step: 'IDENTITY_DOCUMENT',
      documentTypes: identityDocumentTypes,
      state: stateOf(rowOf('IDENTITY_DOCUMENT'), identityComplete(own)),
      rejection: rejectionOf(rowOf('IDENTITY_DOCUMENT')),
      sidesReceived: sidesReceived(own),
    });
    steps.push(documentStep('PROOF_OF_ADDRESS', 'PROOF_OF_ADDRESS'));
    // Not required for a review, so only offered before the first one (never asked for again after a rejection).
    if (input.status === 'pending') {
      const selfie = own.some((doc) => doc.documentType === 'SELFIE');
      steps.push({
        ...base,
        id: 'step-selfie',
        kind: 'selfie',
        step: null,
        documentTypes: ['SELFIE'],
        state: selfie ? 'uploaded' : 'todo',
        optional: true,
        rejection: null,
      });
    }
    return steps;
  }
  steps.push(documentStep('INCORPORATION_CERT', 'INCORPORATION_CERTIFICATE'));
  steps.push(documentStep('INCORPORATION_ARTICLES', 'INCORPORATION_ARTICLES'));
  steps.push(documentStep('SHAREHOLDER_REGISTRY', 'SHAREHOLDER_REGISTRY'));
  const ownersRow = rowOf('CUSTOMER_BENEFICIARIES');
  for (const beneficiary of input.beneficiaries) {
    if (Number(beneficiary.shareSize) <= BENEFICIARY_DOCUMENT_THRESHOLD) continue;
    const theirs = input.documents.filter((doc) => doc.beneficiaryId === beneficiary.id);
    steps.push({
      ...base,
      id: `step-owner-${beneficiary.id}`,
      kind: 'identity',
      step: 'CUSTOMER_BENEFICIARIES',
      documentTypes: identityDocumentTypes,
      beneficiary: { id: beneficiary.id, name: beneficiary.name },
      state: stateOf(ownersRow, identityComplete(theirs)),
      rejection: rejectionOf(ownersRow),
      sidesReceived: sidesReceived(theirs),
    });
  }
  return steps;
}

/** Steps the customer can still act on: to upload (or replace) now. */
export const needsUpload = (step: HostedStep) =>
  (step.state === 'todo' || step.state === 'rejected') && step.kind !== 'data';

/** Required steps not yet provided: the review would refuse to start. */
export const missingSteps = (steps: HostedStep[]) => steps.filter((step) => !step.optional && needsUpload(step));

/** Required steps the customer has provided (uploaded, under review or accepted), of all required steps. */
export function progressOf(steps: HostedStep[]): { done: number; total: number } {
  const required = steps.filter((step) => !step.optional);
  return {
    done: required.filter((step) => !needsUpload(step) && step.state !== 'rejected').length,
    total: required.length,
  };
}
