// The hosted verification page behind `verification.verification_link`: the partner's end user
// uploads documents and submits them without the partner's API key; the link's token is the secret.
// Same rules and workflow as the API's documents and check operations (src/services/customers.ts).
// The token is looked up by its SHA-256 and must not have expired; every status change replaces it
// (src/domain/verification-links.ts). Uploads are refused before their body is read when the token is not valid,
// or when the customer already uploaded HOSTED_UPLOADS_PER_CUSTOMER documents through this page.
// The page shows no text taken from its query string: a form action sends the browser back with a message code
// (`?notice=document_uploaded`, `?error=file_too_large`), and the page shows the fixed text of that code, or nothing
// for a code it does not know. Otherwise anyone could put their own words on our domain with a crafted link.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import {
  companyDocumentTypes,
  documentSides,
  documentTypes,
  personDocumentTypes,
  sidedDocumentTypes,
} from '../domain/verification';
import { hashVerificationToken, isWellFormedToken, verificationToken } from '../domain/verification-links';
import { ApiError } from '../http/errors';
import { readSingleFileUpload, SingleFileUpload } from '../http/multipart';
import { defineRoute } from '../http/route';
import {
  countHostedUploads,
  CustomerRow,
  findCustomerByTokenHash,
  readCustomerLinkState,
  readCustomerWithReviewInputs,
} from '../persistence/customers';
import { missingBeforeReview } from '../presenters/customers';
import { startVerification, uploadDocument } from '../services/customers';
import { MAX_DOCUMENT_BYTES } from '../schemas/customers';
import type { ApiServices } from '../app-services';

const tag = 'Hosted verification';
const tokenParam = z
  .object({ token: z.string().meta({ description: 'The secret part of verification_link.' }) })
  .strict();

const stylesheet =
  'body { font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; } .error { color: #b00020; }';
/** The page runs no script and loads nothing; its one stylesheet is allowed by hash. */
export const hostedPageContentSecurityPolicy = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(stylesheet).digest('base64')}'`,
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');
/** What the page may say after a form action went through, by code. */
const noticeTexts = {
  document_uploaded: () => 'Document uploaded.',
  submitted: () => 'Submitted: your documents are under review.',
} satisfies Record<string, (context: PageContext) => string>;

/** What the page may say after a form action was refused, by code. */
const errorTexts = {
  file_missing: () => 'Choose a file to upload.',
  file_invalid: () => 'The file must be a PDF, JPEG, PNG, WEBP or HEIC document, and not empty.',
  file_too_large: () => `The file is larger than ${MAX_DOCUMENT_BYTES / (1024 * 1024)} MB.`,
  document_side_invalid: () =>
    `Choose the side (FRONT or BACK) for ${sidedDocumentTypes.join(', ')}, and no side for other documents.`,
  document_invalid: () => 'This document type, or the person chosen, does not fit this verification.',
  upload_limit_reached: (context) =>
    `No more documents can be uploaded on this page (at most ${context.uploadLimit}). ` +
    'Please contact the company that sent you this link.',
  documents_missing: (context) =>
    context.missing.length > 0
      ? `Upload the missing documents before submitting: ${context.missing.join('; ')}.`
      : 'Upload the missing documents before submitting.',
  under_review: () => 'Your documents are under review: please wait for the result.',
  already_approved: () => 'Your verification is complete: there is nothing more to do.',
  rejected: () => 'Your verification was declined: no more documents are accepted.',
  request_invalid: () => 'The form could not be processed. Please try again.',
} satisfies Record<string, (context: PageContext) => string>;

export type PageNoticeCode = keyof typeof noticeTexts;
export type PageErrorCode = keyof typeof errorTexts;
export const hostedNoticeCodes = Object.keys(noticeTexts) as PageNoticeCode[];
export const hostedErrorCodes = Object.keys(errorTexts) as PageErrorCode[];

/** What the texts may name: the service's own state, never the request's. */
interface PageContext {
  uploadLimit: number;
  /** What is still missing before a review (only worked out for `documents_missing`). */
  missing: string[];
}

/** The text of a code, or null for anything else (`constructor`, `__proto__` included: own keys only). */
function textOf<T extends Record<string, (context: PageContext) => string>>(
  texts: T,
  code: string | undefined,
  context: PageContext,
): string | null {
  return code !== undefined && Object.hasOwn(texts, code) ? (texts[code] as T[keyof T])(context) : null;
}

const messageQuery = z
  .object({
    notice: z
      .string()
      .max(500)
      .optional()
      .meta({
        description: `Message code after a form action: ${hostedNoticeCodes.join(', ')}. Other values show nothing.`,
      }),
    error: z
      .string()
      .max(500)
      .optional()
      .meta({
        description: `Message code after a refused form action: ${hostedErrorCodes.join(', ')}. Other values show nothing.`,
      }),
  })
  .strict();

/** The customer of a valid link; 404 for unknown, replaced and expired links alike. */
async function customerByToken(services: ApiServices, token: string): Promise<CustomerRow> {
  const customer = isWellFormedToken(token)
    ? await findCustomerByTokenHash(services.prisma, hashVerificationToken(token))
    : null;
  if (!customer || customer.verificationLinkExpiresAt.getTime() <= Date.now()) {
    throw new ApiError(
      'not_found',
      'No such verification link: it may have expired or been replaced. Ask for a new link.',
    );
  }
  return customer;
}

const escapeHtml = (value: string) =>
  value.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] ?? char,
  );

function renderPage(
  customer: CustomerRow,
  token: string,
  { notice, error, uploadsLeft }: { notice: string | null; error: string | null; uploadsLeft: boolean },
): string {
  const name =
    customer.type === 'individual'
      ? `${customer.firstName ?? ''} ${customer.lastName ?? ''}`
      : (customer.businessLegalName ?? '');
  const open = customer.status === 'pending' || customer.status === 'partially_rejected';
  const types =
    customer.type === 'individual' ? personDocumentTypes : [...companyDocumentTypes, ...personDocumentTypes];
  const options = (values: readonly string[]) => values.map((value) => `<option>${value}</option>`).join('');
  const beneficiaries = customer.beneficiaries
    .map((b) => `<option value="${b.id}">${escapeHtml(`${b.firstName} ${b.lastName}`)}</option>`)
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Identity verification</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>${stylesheet}</style></head>
<body>
<h1>Identity verification</h1>
<p>${escapeHtml(name.trim())}: <strong id="status">${customer.status}</strong></p>
${notice ? `<p role="status">${escapeHtml(notice)}</p>` : ''}
${error ? `<p role="alert" class="error">${escapeHtml(error)}</p>` : ''}
${
  open
    ? `${
        uploadsLeft
          ? `<form method="post" action="/verify/${token}/documents" enctype="multipart/form-data">
<h2>Upload a document</h2>
<label>Type <select name="document_type">${options(types)}</select></label>
<label>Side <select name="document_side"><option value="">(none)</option>${options(documentSides)}</select></label>
${customer.type === 'business' ? `<label>Person <select name="beneficiary_id"><option value="">(the company)</option>${beneficiaries}</select></label>` : ''}
<label>File <input type="file" name="file" required></label>
<button type="submit">Upload</button>
</form>`
          : '<p>No more documents can be uploaded on this page.</p>'
      }
<form method="post" action="/verify/${token}/submit"><h2>Done uploading?</h2><button type="submit">Submit for verification</button></form>`
    : '<p>Nothing to do here now.</p>'
}
</body></html>`;
}

const pageRoute = defineRoute({
  method: 'get',
  path: '/verify/{token}',
  operationId: 'hostedVerificationPage',
  tag,
  auth: 'none',
  rateLimit: 'client-address',
  summary: 'Hosted verification page',
  description:
    'HTML page for the end user: shows the status, uploads documents and submits them while pending or partially_rejected.',
  params: tokenParam,
  query: messageQuery,
  response: { status: 200, description: 'The page.', contentType: 'text/html', schema: z.string() },
  errors: ['not_found'],
  async handler({ params, query, services, koa }) {
    const customer = await customerByToken(services, params.token);
    const uploadLimit = services.config.hostedUploadsPerCustomer;
    const context: PageContext = {
      uploadLimit,
      missing: query.error === 'documents_missing' ? await missingBeforeReviewOf(services, customer) : [],
    };
    koa.set('Content-Security-Policy', hostedPageContentSecurityPolicy);
    return renderPage(customer, params.token, {
      notice: textOf(noticeTexts, query.notice, context),
      error: textOf(errorTexts, query.error, context),
      uploadsLeft: (await countHostedUploads(services.prisma, customer.id)) < uploadLimit,
    });
  },
});

async function missingBeforeReviewOf(services: ApiServices, customer: CustomerRow): Promise<string[]> {
  return missingBeforeReview(await readCustomerWithReviewInputs(services.prisma, customer.id));
}

/** The page's code for a refusal of a form action (a partner would see it as this API error). */
function errorCodeOf(error: ApiError): PageErrorCode {
  switch (error.code) {
    case 'payload_too_large':
      return 'file_too_large';
    case 'customer_verification_in_progress':
      return 'under_review';
    case 'customer_already_approved':
      return 'already_approved';
    case 'customer_rejected':
      return 'rejected';
    case 'verification_documents_missing':
      return 'documents_missing';
    case 'document_not_applicable':
      return 'document_invalid';
    case 'validation_error': {
      const [first] = error.details ?? [];
      if (first?.param === 'file') return first.code === 'missing_param' ? 'file_missing' : 'file_invalid';
      if (first?.param === 'metadata.document_side') return 'document_side_invalid';
      if (first?.param.startsWith('metadata')) return 'document_invalid';
      return 'request_invalid';
    }
    default:
      return 'request_invalid';
  }
}

/** Sends the browser back to the page with a message code (303 See Other). */
function redirectToPage(koa: { redirect(url: string): void }, token: string, message: MessageCode): void {
  const [kind, code] = 'notice' in message ? ['notice', message.notice] : ['error', message.error];
  koa.redirect(`/verify/${token}?${kind}=${code}`);
}

type MessageCode = { notice: PageNoticeCode } | { error: PageErrorCode };

/** Runs a form action and sends the browser back to the page with its outcome's code. */
async function thenRedirect(
  koa: { redirect(url: string): void },
  token: () => string,
  action: () => Promise<MessageCode>,
): Promise<void> {
  let message: MessageCode;
  try {
    message = await action();
  } catch (error) {
    if (!(error instanceof ApiError) || error.code === 'not_found') throw error;
    message = { error: errorCodeOf(error) };
  }
  redirectToPage(koa, token(), message);
}

/** What the hosted upload reads: the upload, or the reason it was refused before (or while) its file was read. */
type HostedUpload = SingleFileUpload | { refused: PageErrorCode };

const uploadRoute = defineRoute({
  method: 'post',
  path: '/verify/{token}/documents',
  operationId: 'hostedVerificationUpload',
  tag,
  auth: 'none',
  rateLimit: 'client-address',
  summary: 'Hosted page: upload one document',
  description:
    'Form post from the hosted page: `file` plus `document_type`, `document_side`, `country`, `beneficiary_id` as ' +
    'separate fields (same rules as the API upload). Redirects (303) back to the page with `?notice=document_uploaded`, ' +
    'or with `?error=<code>` when refused (nothing stored): `file_too_large` (over 10 MB), `upload_limit_reached` ' +
    '(the customer already uploaded HOSTED_UPLOADS_PER_CUSTOMER documents, default 20, through this page; refused ' +
    'before the file is read), `file_missing`, `file_invalid`, `document_side_invalid`, `document_invalid`, ' +
    '`under_review`, `already_approved`, `rejected`, `request_invalid`.',
  params: tokenParam,
  body: {
    contentType: 'multipart/form-data',
    schema: z.object({
      file: z.string().meta({ format: 'binary' }),
      document_type: z.enum(documentTypes),
      document_side: z.enum(documentSides).optional(),
      country: z.string().optional(),
      beneficiary_id: z.string().optional(),
    }),
    async read(ctx, services): Promise<HostedUpload> {
      // The link first: without a valid token not one byte of the body is read; nor once the cap is reached.
      const customer = await customerByToken(services, String(ctx.params.token));
      if ((await countHostedUploads(services.prisma, customer.id)) >= services.config.hostedUploadsPerCustomer)
        return { refused: 'upload_limit_reached' };
      try {
        return await readSingleFileUpload(ctx, {
          fileField: 'file',
          textFields: ['document_type', 'document_side', 'country', 'beneficiary_id'],
          maxFileBytes: MAX_DOCUMENT_BYTES,
          stagingDir: services.documentStore.stagingDir,
        });
      } catch (error) {
        // A file over the limit is the end user's mistake: back to the page. A broken form is no browser's: 400.
        if (error instanceof ApiError && error.code === 'payload_too_large') return { refused: 'file_too_large' };
        throw error;
      }
    },
  },
  response: { status: 303, description: 'Back to the page, with a message code.' },
  errors: ['not_found', 'unsupported_media_type'],
  async handler({ params, body, services, koa }) {
    if ('refused' in body) {
      redirectToPage(koa, params.token, { error: body.refused });
      return;
    }
    const customer = await customerByToken(services, params.token);
    // Empty form fields mean "not given".
    const metadata = Object.fromEntries(Object.entries(body.fields).filter(([, value]) => value !== ''));
    await thenRedirect(
      koa,
      () => params.token,
      async () => {
        const outcome = await uploadDocument(
          services,
          customer,
          { file: body.file, fields: { metadata: JSON.stringify(metadata) } },
          { via: 'hosted_page', maxPerCustomer: services.config.hostedUploadsPerCustomer },
        );
        return outcome === 'stored' ? { notice: 'document_uploaded' } : { error: 'upload_limit_reached' };
      },
    );
  },
});

const submitRoute = defineRoute({
  method: 'post',
  path: '/verify/{token}/submit',
  operationId: 'hostedVerificationSubmit',
  tag,
  auth: 'none',
  rateLimit: 'client-address',
  summary: 'Hosted page: submit for verification',
  description:
    'Same as POST /v1/customers/{customerId}/check. Redirects (303) back to the page with `?notice=submitted` (to the ' +
    "customer's new link), or with `?error=<code>`: `documents_missing` (the page then lists them), `under_review`, " +
    '`already_approved`, `rejected`.',
  params: tokenParam,
  response: { status: 303, description: 'Back to the page.' },
  errors: ['not_found'],
  async handler({ params, services, koa }) {
    const customer = await customerByToken(services, params.token);
    let token = params.token;
    await thenRedirect(
      koa,
      () => token,
      async () => {
        await startVerification(services, customer);
        // The status changed, so the link did too: send the browser to the new one.
        const current = await readCustomerLinkState(services.prisma, customer.id);
        token = verificationToken(services.config.secrets.encryptionKey, current.id, current.verificationLinkVersion);
        return { notice: 'submitted' };
      },
    );
  },
});

export const hostedVerificationRoutes = [pageRoute, uploadRoute, submitRoute];
