// The partner's brand on the hosted verification page: set through the API, read by the page.
import { readFile, rm } from 'node:fs/promises';
import { logoTypeOf, neutralAccent, normaliseHexColour, themeStylesheet } from '../domain/branding';
import { DomainError } from '../domain/errors';
import type { SingleFileUpload } from '../domain/file-types';
import {
  findPartnerBranding,
  findPartnerLogo,
  PartnerBrandingRow,
  setPartnerLogo,
  updatePartnerBranding,
} from '../persistence/partners';
import type { Database, DatabaseClient } from '../persistence/database';
import type { BrandingResource, UpdateBrandingRequest } from '../schemas/partners';

function toBranding(row: PartnerBrandingRow): BrandingResource {
  return {
    display_name: row.displayName,
    accent_color: row.accentColor,
    logo:
      row.logoContentType !== null
        ? {
            content_type: row.logoContentType as 'image/png' | 'image/jpeg' | 'image/webp',
            size_bytes: Number(row.logoSizeBytes),
          }
        : null,
    updated_at: row.updatedAt?.toISOString() ?? null,
  };
}

async function brandingRow(db: DatabaseClient, partnerId: string): Promise<PartnerBrandingRow> {
  const row = await findPartnerBranding(db, partnerId);
  if (!row) throw new Error(`partner ${partnerId} does not exist`);
  return row;
}

export async function getBranding(db: DatabaseClient, partnerId: string): Promise<BrandingResource> {
  return toBranding(await brandingRow(db, partnerId));
}

/** Replaces name and colour (both given: PUT); the logo stays. */
export async function putBranding(
  db: DatabaseClient,
  partnerId: string,
  request: UpdateBrandingRequest,
): Promise<BrandingResource> {
  await updatePartnerBranding(db, partnerId, {
    displayName: request.display_name?.trim() || null,
    accentColor: request.accent_color === null ? null : normaliseHexColour(request.accent_color),
  });
  return getBranding(db, partnerId);
}

/** Stores the uploaded logo when its bytes are a PNG, JPEG or WEBP image; the staged file is removed either way. */
export async function putLogo(
  db: DatabaseClient,
  partnerId: string,
  upload: SingleFileUpload,
): Promise<BrandingResource> {
  const file = upload.file;
  try {
    if (!file) throw DomainError.validation([{ code: 'missing_param', param: 'file', message: 'is required' }]);
    const contentType = file.sizeBytes > 0 ? logoTypeOf(file.head) : null;
    if (!contentType) {
      throw new DomainError('logo_invalid', 'The logo must be a non-empty PNG, JPEG or WEBP image (by its content).');
    }
    await setPartnerLogo(db, partnerId, { bytes: await readFile(file.path), contentType });
  } finally {
    if (file) await rm(file.path, { force: true });
  }
  return getBranding(db, partnerId);
}

/** What the hosted page shows of the partner's brand (no bytes). */
export async function pageBrandOf(
  db: DatabaseClient,
  partnerId: string,
): Promise<{ displayName: string | null; hasLogo: boolean; hasAccent: boolean }> {
  const row = await brandingRow(db, partnerId);
  return { displayName: row.displayName, hasLogo: row.logoContentType !== null, hasAccent: row.accentColor !== null };
}

/** The partner's theme stylesheet, or null without an accent colour. */
export async function themeOf(db: DatabaseClient, partnerId: string): Promise<string | null> {
  const { accentColor } = await brandingRow(db, partnerId);
  return accentColor === null ? null : themeStylesheet(accentColor, neutralAccent);
}

export function logoOf(db: DatabaseClient, partnerId: string): Promise<{ bytes: Buffer; contentType: string } | null> {
  return findPartnerLogo(db, partnerId);
}
