// Field schemas shared by several resources. Each validates the way the OpenAPI description says.
import { getAlpha3Codes, alpha3ToAlpha2 } from 'i18n-iso-countries/index';
import { parsePhoneNumberFromString, CountryCode } from 'libphonenumber-js/max';
import { z } from 'zod';

const alpha3Codes = new Set(Object.keys(getAlpha3Codes()));

export function isCountryCode(value: string): boolean {
  return alpha3Codes.has(value);
}

export const countryCodeSchema = z
  .string()
  .refine(isCountryCode, 'must be an ISO 3166-1 alpha-3 country code (e.g. BRA, USA, DEU)')
  .meta({
    id: 'CountryCode',
    description: 'ISO 3166-1 alpha-3 country code, upper case.',
    example: 'BRA',
    enum: [...alpha3Codes].sort(),
  });

/** Text with something besides white space (it is trimmed), and no NUL: the description states both. */
export const NON_BLANK_PATTERN = '^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$';

/** Required text: trimmed, not empty, bounded. */
export const text = (max = 200) => z.string().trim().min(1).max(max).meta({ pattern: NON_BLANK_PATTERN });

export const uuidSchema = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a UUID')
  .meta({ format: 'uuid' });

export const timestampSchema = z.iso
  .datetime()
  .meta({ description: 'ISO 8601 UTC timestamp.', example: '2026-11-22T10:00:00.000Z' });

export const addressSchema = z
  .object({
    street_line_1: text(200),
    street_line_2: text(200).optional(),
    city: text(100),
    state: text(100).optional().meta({ description: 'State, province or region; optional where a country has none.' }),
    postal_code: text(20),
    country: countryCodeSchema,
  })
  .strict()
  .meta({ id: 'Address' });

export type Address = z.infer<typeof addressSchema>;

function isRealDate(value: string): boolean {
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

function todayUtc(now: Date = new Date()): string {
  return now.toISOString().slice(0, 10);
}

/**
 * A regex source matching the years `from` to `to` (four digits each), e.g. 1900-2007 -> 19\d{2}|200[0-7].
 * The description states a date's year range with it.
 */
export function yearRangePattern(from: number, to: number): string {
  const parts: string[] = [];
  let year = from;
  while (year <= to) {
    // The widest aligned block (1000, 100, 10 or 1 years) starting at `year` that stays within `to`.
    let size = 1000;
    while (size > 1 && (year % size !== 0 || year + size - 1 > to)) size /= 10;
    const digits = Math.log10(size);
    const prefix = String(year).slice(0, 4 - digits);
    parts.push(digits === 0 ? prefix : `${prefix}\\d{${digits}}`);
    year += size;
  }
  return `(${parts.join('|')})`;
}

/**
 * The description's pattern of a date whose year is `from` to `to`. `to` is computed when the description is built
 * (at start): years that are surely past then stay past, so the pattern is never looser than the rule.
 */
export const datePattern = (from: number, to: number) =>
  `^${yearRangePattern(from, to)}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$`;

/**
 * YYYY-MM-DD of a day that exists, strictly before today (UTC) and not before 1900. The description states the
 * years up to last year (`yearsAgo` = 1) or earlier (a minimum age); this year's past days are accepted too.
 */
export const pastDate = (yearsAgo = 1) =>
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date in YYYY-MM-DD format')
    .refine(isRealDate, 'is not a calendar date')
    .refine((value) => value < todayUtc(), 'must be in the past')
    .refine((value) => value >= '1900-01-01', 'must not be before 1900-01-01')
    .meta({
      format: 'date',
      pattern: datePattern(1900, new Date().getUTCFullYear() - yearsAgo),
      example: '1990-05-17',
    });

export const pastDateSchema = pastDate();

/** Whole years between a YYYY-MM-DD date and today (UTC). */
export function ageInYears(date: string, now: Date = new Date()): number {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const today = todayUtc(now);
  const [tYear, tMonth, tDay] = today.split('-').map(Number) as [number, number, number];
  return tYear - year - (tMonth < month || (tMonth === month && tDay < day) ? 1 : 0);
}

export const emailSchema = z
  .email({ error: 'must be a valid email address' })
  .max(254)
  .transform((value) => value.toLowerCase())
  // `format: email` differs between validators; the pattern is the one the server applies.
  .meta({ example: 'ana@example.com', pattern: z.regexes.email.source });

/**
 * Normalises a phone number to E.164. Accepted: E.164 with or without the leading `+`, or the
 * national format of `defaultCountry` (ISO alpha-3). Returns null when the number is not valid.
 */
export function normalisePhoneNumber(raw: string, defaultCountry?: string): string | null {
  const trimmed = raw.trim();
  if (!/^\+?[\d\s().-]{6,24}$/.test(trimmed)) return null;
  const region = defaultCountry ? (alpha3ToAlpha2(defaultCountry) as CountryCode | undefined) : undefined;
  const candidates = trimmed.startsWith('+')
    ? [parsePhoneNumberFromString(trimmed)]
    : [
        parsePhoneNumberFromString(`+${trimmed.replace(/\D/g, '')}`),
        region ? parsePhoneNumberFromString(trimmed, region) : undefined,
      ];
  const valid = candidates.find((phone) => phone?.isValid());
  return valid ? valid.number : null;
}

export const phoneNumberInputSchema = z.string().meta({
  format: 'phone',
  pattern: '^\\+?[\\d\\s().-]{6,24}$',
  description:
    "Phone number. Accepted as E.164 with or without the leading `+` (`+5511987654321`, `5511987654321`) or in the national format of the customer's country; stored and returned as E.164 with `+`.",
  example: '+5511987654321',
});

/** A TCP port, 0-65535, as a URL parser takes it. */
export const PORT_PATTERN = '(6553[0-5]|655[0-2]\\d|65[0-4]\\d{2}|6[0-4]\\d{3}|[1-5]\\d{4}|\\d{1,4})';

export const websiteSchema = z
  .url({ protocol: /^https?$/, hostname: z.regexes.domain, error: 'must be an http(s) URL' })
  .max(2048)
  .meta({
    format: 'uri',
    // A host name of at most 253 characters, as the server's domain rule.
    pattern:
      '^https?://(?=[^/?#:]{1,253}([:/?#]|$))([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}' +
      `(:${PORT_PATTERN})?([/?#][^\\s]*)?$`,
    example: 'https://acme.example',
  });

/** Decimal string with at most `scale` fractional digits, e.g. "25" or "33.33". */
export const decimalString = (scale: number) =>
  z
    .string()
    .regex(
      new RegExp(`^\\d{1,15}(\\.\\d{1,${scale}})?$`),
      `must be a decimal number as a string, with at most ${scale} decimal places`,
    );

/**
 * The description's pattern of a money amount greater than 0 with at most `scale` decimal places (any number when
 * omitted): the lookahead excludes every spelling of zero ("0", "0.00", "000").
 */
export const positiveAmountPattern = (scale?: number) =>
  `^(?!0+(\\.0+)?$)\\d{1,15}(\\.\\d{1,${scale ?? ''}})?$`.replace('{1,}', '+');

/** Run object-level checks even when some fields failed, so one response lists every problem. */
export const always = {
  when: (payload: { value: unknown }) => typeof payload.value === 'object' && payload.value !== null,
} as const;

/** A money amount in a request: a decimal string greater than 0 (its currency's decimals are checked where known). */
export const positiveAmountSchema = z
  .string()
  .regex(/^\d{1,15}(\.\d+)?$/, 'must be a decimal number as a string, e.g. "100.50"')
  .refine((text) => !/^0+(\.0+)?$/.test(text), 'must be greater than 0')
  .meta({ pattern: positiveAmountPattern() });

/** A positive amount in a currency the request itself names, with that currency's decimal places stated. */
export const positiveAmountOf = (scale: number) =>
  positiveAmountSchema
    .regex(new RegExp(`^\\d+(\\.\\d{1,${scale}})?$`), `must have at most ${scale} decimal places`)
    .meta({ pattern: positiveAmountPattern(scale) });
