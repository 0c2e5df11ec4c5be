// The partners table: the API's clients. A partner is made with its first API key (src/persistence/api-keys.ts).
import { type Database, prismaOf, type DatabaseClient } from './internal/database';
import type { NewApiKey } from './api-keys';

/** Inserts the partner together with its first key (one Prisma call: both or neither). */
export async function insertPartner(
  db: DatabaseClient,
  partner: { id: string; name: string },
  firstKey: NewApiKey,
): Promise<void> {
  await prismaOf(db).partner.create({ data: { ...partner, apiKeys: { create: firstKey } } });
}

/** The partner's id when it exists, else null. */
export function findPartner(db: DatabaseClient, partnerId: string): Promise<{ id: string } | null> {
  return prismaOf(db).partner.findUnique({ where: { id: partnerId }, select: { id: true } });
}

/** The brand on the hosted page, without the logo's bytes (src/domain/branding.ts). */
export interface PartnerBrandingRow {
  displayName: string | null;
  accentColor: string | null;
  logoContentType: string | null;
  logoSizeBytes: number | null;
  updatedAt: Date | null;
}

/** The partner's brand, or null when the partner does not exist. */
export async function findPartnerBranding(db: DatabaseClient, partnerId: string): Promise<PartnerBrandingRow | null> {
  const [row] = await prismaOf(db).$queryRaw<PartnerBrandingRow[]>`
    SELECT brand_display_name AS "displayName", brand_accent_color AS "accentColor",
           brand_logo_content_type AS "logoContentType", octet_length(brand_logo) AS "logoSizeBytes",
           brand_updated_at AS "updatedAt"
    FROM partners WHERE id = ${partnerId}::uuid`;
  return row ?? null;
}

/** Sets the display name and the accent colour (null clears one). */
export async function updatePartnerBranding(
  db: DatabaseClient,
  partnerId: string,
  branding: { displayName: string | null; accentColor: string | null },
): Promise<void> {
  await prismaOf(db).partner.update({
    where: { id: partnerId },
    data: {
      brandDisplayName: branding.displayName,
      brandAccentColor: branding.accentColor,
      brandUpdatedAt: new Date(),
    },
  });
}

/** Replaces the logo (bytes checked by the caller: type by content, size). */
export async function setPartnerLogo(
  db: DatabaseClient,
  partnerId: string,
  logo: { bytes: Buffer; contentType: string },
): Promise<void> {
  await prismaOf(db).partner.update({
    where: { id: partnerId },
    data: { brandLogo: new Uint8Array(logo.bytes), brandLogoContentType: logo.contentType, brandUpdatedAt: new Date() },
  });
}

/** The logo's bytes and type, or null when the partner has none. */
export async function findPartnerLogo(
  db: DatabaseClient,
  partnerId: string,
): Promise<{ bytes: Buffer; contentType: string } | null> {
  const row = await prismaOf(db).partner.findUnique({
    where: { id: partnerId },
    select: { brandLogo: true, brandLogoContentType: true },
  });
  return row?.brandLogo && row.brandLogoContentType
    ? { bytes: Buffer.from(row.brandLogo), contentType: row.brandLogoContentType }
    : null;
}
