// Request and response schemas of the partner's branding on the hosted verification page (issue 42).
import { z } from 'zod';
import { MAX_DISPLAY_NAME_LENGTH, MAX_LOGO_BYTES, logoContentTypes } from '../domain/branding';
import { timestampSchema } from './common';

export const updateBrandingSchema = z
  .object({
    display_name: z
      .string()
      .min(1)
      .max(MAX_DISPLAY_NAME_LENGTH)
      .regex(/^[^\p{Cc}]*$/u, 'must not contain control characters')
      .nullable()
      .meta({
        description: 'Name shown on the hosted page (plain text, escaped). null removes it.',
        example: 'Acme Pay',
      }),
    accent_color: z
      .string()
      .regex(/^#[0-9A-Fa-f]{6}$/, 'must be a #rrggbb hex colour')
      .nullable()
      .meta({
        description:
          'Accent colour of buttons and borders, `#rrggbb` (stored lower case). Text on it is black or white, ' +
          'whichever reaches WCAG AA; links use it only when it contrasts 4.5:1 on white. null: the neutral design.',
        example: '#0a7d5a',
      }),
  })
  .strict()
  .meta({ id: 'UpdateBrandingRequest' });
export type UpdateBrandingRequest = z.infer<typeof updateBrandingSchema>;

export const brandingSchema = z
  .object({
    display_name: z.string().nullable(),
    accent_color: z.string().nullable(),
    logo: z
      .object({
        content_type: z.enum(logoContentTypes),
        size_bytes: z.number().int(),
      })
      .nullable()
      .meta({ description: 'The uploaded logo (PUT /v1/partner/branding/logo), or null.' }),
    updated_at: timestampSchema.nullable(),
  })
  .meta({ id: 'PartnerBranding' });
export type BrandingResource = z.infer<typeof brandingSchema>;

export const logoUploadSchema = z.object({
  file: z.string().meta({
    format: 'binary',
    description: `PNG, JPEG or WEBP (recognised by content; SVG refused), at most ${MAX_LOGO_BYTES / 1024} KB.`,
  }),
});
