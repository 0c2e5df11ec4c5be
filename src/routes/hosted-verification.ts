// The hosted verification page behind `verification.verification_link`: the partner's end user
// uploads documents and submits them without the partner's API key; the link's token is the secret.
// Same rules and workflow as the API's documents and check operations (src/services/customers.ts).
// The token is looked up by its SHA-256 and must not have expired; every status change replaces it
// (src/domain/verification-links.ts). Uploads are refused before their body is read when the token is not valid,
// or when the customer already uploaded HOSTED_UPLOADS_PER_CUSTOMER documents through this page.
// The page speaks Portuguese, Spanish or English (`?lang=` and the cookie it sets, else Accept-Language), shows the
// partner's brand (its name, its logo and its accent colour as a stylesheet, served here under the same token) and
// the steps this customer still has (src/domain/hosted-page.ts). It runs only /hosted-assets/ files: no inline code.
// The page shows no text taken from its query string: a form action sends the browser back with a message code
// (`?notice=document_uploaded`, `?error=file_too_large`), and the page shows the fixed text of that code, or nothing
// for a code it does not know. Otherwise anyone could put their own words on our domain with a crafted link.
import { z } from 'zod';
import { documentSides, documentTypes } from '../domain/verification';
import { HostedLocale, hostedSteps, negotiateLocale } from '../domain/hosted-page';
import { errorCodes, ErrorContext, hostedTexts, noticeCodes } from '../domain/hosted-texts';
import { ApiError, apiErrorOf } from '../http/errors';
import { readSingleFileUpload, SingleFileUpload } from '../http/multipart';
import { defineRoute } from '../http/route';
import { missingNames, renderHostedPage } from '../presenters/hosted-page';
import { logoOf, themeOf } from '../services/branding';
import { startVerification, uploadDocument } from '../services/customers';
import { currentLinkToken, customerByToken, hostedPageDataOf, hostedUploadsLeft } from '../services/hosted-page';
import { MAX_DOCUMENT_BYTES } from '../schemas/customers';

const tag = 'Hosted verification';
const tokenParam = z
  .object({ token: z.string().meta({ description: 'The secret part of verification_link.' }) })
  .strict();

/**
 * Scripts, styles and images from our origin only (the page's files, the partner's theme and logo); `blob:` images
 * are the script's previews of a picture the customer chose, which never leave the browser. No inline code.
 */
export const hostedPageContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export type PageNoticeCode = (typeof noticeCodes)[number];
export type PageErrorCode = (typeof errorCodes)[number];
export const hostedNoticeCodes: PageNoticeCode[] = [...noticeCodes];
export const hostedErrorCodes: PageErrorCode[] = [...errorCodes];

/** The language cookie the page's switch sets (a choice of three values, nothing else is read from it). */
const languageCookie = 'hosted_lang';

/** The text of a code, or null for anything else (`constructor`, `__proto__` included: own keys only). */
function textOf<T extends Record<string, unknown>>(texts: T, code: string | undefined): T[keyof T] | null {
  return code !== undefined && Object.hasOwn(texts, code) ? (texts[code] as T[keyof T]) : null;
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
    lang: z.string().max(10).optional().meta({
      description: 'The language the end user chose: pt, es or en (remembered in a cookie). Else Accept-Language.',
    }),
  })
  .strict();

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
    const locale = localeOf(koa, query.lang);
    const data = await hostedPageDataOf(services, customer);
    const steps = hostedSteps(data.input);
    const context: ErrorContext = {
      uploadLimit: services.config.hostedUploadsPerCustomer,
      maxMegabytes: MAX_DOCUMENT_BYTES / (1024 * 1024),
      missing: query.error === 'documents_missing' ? missingNames(locale, steps) : [],
    };
    const texts = hostedTexts[locale];
    koa.set('Content-Security-Policy', hostedPageContentSecurityPolicy);
    koa.set('Content-Language', texts.tag);
    koa.vary('Accept-Language');
    return renderHostedPage({
      locale,
      token: params.token,
      status: customer.status,
      customerName: (customer.type === 'individual'
        ? `${customer.firstName ?? ''} ${customer.lastName ?? ''}`
        : (customer.businessLegalName ?? '')
      ).trim(),
      steps,
      brand: data.brand,
      notice: textOf(texts.notices, query.notice),
      error: textOf(texts.errors, query.error)?.(context) ?? null,
      uploadsLeft: data.uploadsLeft,
      expiresAt: customer.verificationLinkExpiresAt,
      maxFileBytes: MAX_DOCUMENT_BYTES,
    });
  },
});

/** The page's language; a choice from the switch is remembered for the form actions' redirects. */
function localeOf(
  koa: {
    cookies: { get(name: string): string | undefined; set(name: string, value: string, options: object): unknown };
    get(field: string): string;
    secure: boolean;
  },
  choice: string | undefined,
): HostedLocale {
  const locale = negotiateLocale({
    query: choice,
    cookie: koa.cookies.get(languageCookie),
    acceptLanguage: koa.get('Accept-Language'),
  });
  if (choice === locale) {
    koa.cookies.set(languageCookie, locale, {
      path: '/verify',
      httpOnly: true,
      sameSite: 'lax',
      secure: koa.secure,
      maxAge: 365 * 24 * 3600 * 1000,
      overwrite: true,
    });
  }
  return locale;
}

const themeRoute = defineRoute({
  method: 'get',
  path: '/verify/{token}/theme.css',
  operationId: 'hostedVerificationTheme',
  tag,
  auth: 'none',
  rateLimit: 'client-address',
  summary: "Hosted page: the partner's theme",
  description:
    "The partner's accent colour as CSS custom properties (from a validated `#rrggbb` only); 404 without one.",
  params: tokenParam,
  response: { status: 200, description: 'The stylesheet.', contentType: 'text/css', schema: z.string() },
  errors: ['not_found'],
  async handler({ params, services, koa }) {
    const customer = await customerByToken(services, params.token);
    const theme = await themeOf(services.prisma, customer.partnerId);
    if (theme === null) throw new ApiError('not_found', 'This partner has no theme.');
    koa.type = 'text/css; charset=utf-8';
    return theme;
  },
});

const logoRoute = defineRoute({
  method: 'get',
  path: '/verify/{token}/logo',
  operationId: 'hostedVerificationLogo',
  tag,
  auth: 'none',
  rateLimit: 'client-address',
  summary: "Hosted page: the partner's logo",
  description:
    'The logo the partner uploaded (PNG, JPEG or WEBP by content), with that Content-Type and nosniff; 404 without one.',
  params: tokenParam,
  response: {
    status: 200,
    description: 'The image.',
    contentType: 'image/png',
    schema: z.string().meta({ format: 'binary' }),
  },
  errors: ['not_found'],
  async handler({ params, services, koa }) {
    const customer = await customerByToken(services, params.token);
    const logo = await logoOf(services.prisma, customer.partnerId);
    if (logo === null) throw new ApiError('not_found', 'This partner has no logo.');
    koa.type = logo.contentType;
    koa.set('Content-Disposition', 'inline; filename="logo"');
    return logo.bytes as never;
  },
});

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
    const refusal = apiErrorOf(error);
    if (!refusal || refusal.code === 'not_found') throw error;
    message = { error: errorCodeOf(refusal) };
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
      if (!(await hostedUploadsLeft(services, customer.id))) return { refused: 'upload_limit_reached' };
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
        token = await currentLinkToken(services, customer.id);
        return { notice: 'submitted' };
      },
    );
  },
});

export const hostedVerificationRoutes = [pageRoute, themeRoute, logoRoute, uploadRoute, submitRoute];
