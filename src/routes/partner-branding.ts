// The partner's brand on the hosted verification page (issue 42): display name, accent colour and logo.
import { MAX_LOGO_BYTES } from '../domain/branding';
import { readSingleFileUpload } from '../http/multipart';
import { defineRoute } from '../http/route';
import { brandingSchema, logoUploadSchema, updateBrandingSchema } from '../schemas/partners';
import { getBranding, putBranding, putLogo } from '../services/branding';

const tag = 'Partner';

const getBrandingRoute = defineRoute({
  method: 'get',
  path: '/v1/partner/branding',
  operationId: 'getPartnerBranding',
  tag,
  summary: "Get the hosted page's branding",
  description: 'The display name, accent colour and logo the hosted verification page shows for your customers.',
  response: { status: 200, description: 'The branding.', schema: brandingSchema },
  async handler({ partner, services }) {
    return getBranding(services.prisma, partner.id);
  },
});

const putBrandingRoute = defineRoute({
  method: 'put',
  path: '/v1/partner/branding',
  operationId: 'updatePartnerBranding',
  tag,
  summary: "Set the hosted page's name and accent colour",
  description:
    'Replaces the display name and the accent colour (both fields; null removes one; the logo stays). The colour ' +
    "must be `#rrggbb`: nothing else can reach the page's stylesheet. Without a colour the page uses its neutral design.",
  body: updateBrandingSchema,
  response: { status: 200, description: 'The branding now.', schema: brandingSchema },
  async handler({ body, partner, services }) {
    return putBranding(services.prisma, partner.id, body);
  },
});

const putLogoRoute = defineRoute({
  method: 'put',
  path: '/v1/partner/branding/logo',
  operationId: 'uploadPartnerLogo',
  tag,
  summary: "Upload the hosted page's logo",
  description:
    'multipart/form-data with a `file` part: a PNG, JPEG or WEBP image recognised by its content (SVG and anything ' +
    `else: 422 logo_invalid), at most ${MAX_LOGO_BYTES / 1024} KB (larger: 413). Replaces the previous logo. The page ` +
    "serves it from this API's domain with its detected Content-Type and `X-Content-Type-Options: nosniff`.",
  body: {
    contentType: 'multipart/form-data',
    schema: logoUploadSchema,
    read(ctx, services) {
      return readSingleFileUpload(ctx, {
        fileField: 'file',
        textFields: [],
        maxFileBytes: MAX_LOGO_BYTES,
        stagingDir: services.documentStore.stagingDir,
      });
    },
  },
  response: { status: 200, description: 'The branding now.', schema: brandingSchema },
  errors: ['logo_invalid', 'payload_too_large', 'unsupported_media_type'],
  async handler({ body, partner, services }) {
    return putLogo(services.prisma, partner.id, body);
  },
});

export const partnerBrandingRoutes = [getBrandingRoute, putBrandingRoute, putLogoRoute];
