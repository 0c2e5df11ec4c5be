// A partner's brand on the hosted verification page: rules without I/O. The accent colour ends up inside a
// stylesheet, so only `#rrggbb` is ever accepted or written out (no names, no functions, nothing to break out of
// a declaration); the logo is recognised by its bytes and only raster types a browser shows as an image qualify
// (no SVG: it can carry script).
import { detectFileType } from './file-types';

export const MAX_LOGO_BYTES = 256 * 1024;
export const MAX_DISPLAY_NAME_LENGTH = 80;
export const logoContentTypes = ['image/png', 'image/jpeg', 'image/webp'] as const;
export type LogoContentType = (typeof logoContentTypes)[number];

const hexColour = /^#[0-9a-fA-F]{6}$/;

/** `#RRGGBB` in any case; stored and served lower case. */
export function isHexColour(value: string): boolean {
  return hexColour.test(value);
}

export function normaliseHexColour(value: string): string {
  if (!isHexColour(value)) throw new Error('not a #rrggbb colour');
  return value.toLowerCase();
}

/** The logo's content type from its first bytes, or null when it is not an accepted image. */
export function logoTypeOf(head: Buffer): LogoContentType | null {
  const mime = detectFileType(head)?.mime;
  return (logoContentTypes as readonly string[]).includes(mime ?? '') ? (mime as LogoContentType) : null;
}

function relativeLuminance(hex: string): number {
  const channel = (offset: number) => {
    const value = parseInt(hex.slice(offset, offset + 2), 16) / 255;
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/**
 * The text colour on an accent background: black or white, whichever contrasts more (one of them always reaches
 * 4.5:1, WCAG AA), so no partner colour can make the page's buttons unreadable.
 */
export function textColourOn(accent: string): '#000000' | '#ffffff' {
  return contrastRatio(accent, '#000000') >= contrastRatio(accent, '#ffffff') ? '#000000' : '#ffffff';
}

/**
 * The accent as text or borders on the page's white background: the partner's colour when it reaches 4.5:1 on
 * white, else the neutral accent (a light yellow would make links unreadable).
 */
export function accentOnWhite(accent: string, neutral: string): string {
  return contrastRatio(accent, '#ffffff') >= 4.5 ? accent : neutral;
}

/** The per-partner stylesheet: custom properties only, from validated colours (src/routes/hosted-verification.ts). */
export function themeStylesheet(accent: string, neutral: string): string {
  const colour = normaliseHexColour(accent);
  return `:root{--accent:${colour};--on-accent:${textColourOn(colour)};--accent-text:${accentOnWhite(colour, neutral)}}\n`;
}

/** Neutral accent (AA on white, 4.5:1 or more); a partner's theme overrides the custom properties. */
export const neutralAccent = '#1d4ed8';
