// The hosted verification page behind `verification.verification_link`: the partner's end user
// uploads documents and submits them without the partner's API key; the link's token is the secret.
// Same rules and workflow as the API's documents and check operations (src/services/customers.ts).
// The token is looked up by its SHA-256 and must not have expired; every status change replaces it
// (src/domain/verification-links.ts). Uploads are refused before their body is read when the token is not valid.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { documentSides, documentTypes, personDocumentTypes, companyDocumentTypes } from '../domain/verification';
import { hashVerificationToken, isWellFormedToken, verificationToken } from '../domain/verification-links';
import { ApiError } from '../http/errors';
import { readSingleFileUpload } from '../http/multipart';
import { defineRoute } from '../http/route';
import { CustomerRow, withBeneficiaries } from '../presenters/customers';
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
const messageQuery = z
  .object({
    notice: z.string().max(500).optional(),
    error: z.string().max(500).optional(),
  })
  .strict();

/** The customer of a valid link; 404 for unknown, replaced and expired links alike. */
async function customerByToken(services: ApiServices, token: string): Promise<CustomerRow> {
  const customer = isWellFormedToken(token)
    ? await services.prisma.customer.findUnique({
        where: { verificationTokenHash: hashVerificationToken(token) },
        include: withBeneficiaries,
      })
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

function renderPage(customer: CustomerRow, token: string, notice?: string, error?: string): string {
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
    ? `<form method="post" action="/verify/${token}/documents" enctype="multipart/form-data">
<h2>Upload a document</h2>
<label>Type <select name="document_type">${options(types)}</select></label>
<label>Side <select name="document_side"><option value="">(none)</option>${options(documentSides)}</select></label>
${customer.type === 'business' ? `<label>Person <select name="beneficiary_id"><option value="">(the company)</option>${beneficiaries}</select></label>` : ''}
<label>File <input type="file" name="file" required></label>
<button type="submit">Upload</button>
</form>
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
    koa.set('Content-Security-Policy', hostedPageContentSecurityPolicy);
    return renderPage(customer, params.token, query.notice, query.error);
  },
});

/** Runs a form action and sends the browser back to the page with its outcome. */
async function thenRedirect(
  koa: { redirect(url: string): void },
  token: () => string,
  action: () => Promise<string>,
): Promise<void> {
  let target: string;
  try {
    const notice = await action();
    target = `/verify/${token()}?notice=${encodeURIComponent(notice)}`;
  } catch (error) {
    if (!(error instanceof ApiError) || error.code === 'not_found') throw error;
    target = `/verify/${token()}?error=${encodeURIComponent(error.message.slice(0, 400))}`;
  }
  koa.redirect(target);
}

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
    'separate fields (same rules as the API upload). Redirects (303) back to the page with a notice or an error.',
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
    async read(ctx, services) {
      // The link first: without a valid token not one byte of the body is read.
      await customerByToken(services, String(ctx.params.token));
      return readSingleFileUpload(ctx, {
        fileField: 'file',
        textFields: ['document_type', 'document_side', 'country', 'beneficiary_id'],
        maxFileBytes: MAX_DOCUMENT_BYTES,
        stagingDir: services.documentStore.stagingDir,
      });
    },
  },
  response: { status: 303, description: 'Back to the page.' },
  errors: ['not_found', 'unsupported_media_type', 'payload_too_large'],
  async handler({ params, body, services, koa }) {
    const customer = await customerByToken(services, params.token);
    // Empty form fields mean "not given".
    const metadata = Object.fromEntries(Object.entries(body.fields).filter(([, value]) => value !== ''));
    await thenRedirect(
      koa,
      () => params.token,
      async () => {
        await uploadDocument(services, customer, { file: body.file, fields: { metadata: JSON.stringify(metadata) } });
        return 'Document uploaded.';
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
    'Same as POST /v1/customers/{customerId}/check. Redirects (303) back to the page with a notice or an error.',
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
        const current = await services.prisma.customer.findUniqueOrThrow({ where: { id: customer.id } });
        token = verificationToken(services.config.secrets.encryptionKey, current.id, current.verificationLinkVersion);
        return 'Submitted: your documents are under review.';
      },
    );
  },
});

export const hostedVerificationRoutes = [pageRoute, uploadRoute, submitRoute];
