// Field schemas shared by several resources. Each validates the way the OpenAPI description says.
import { getAlpha3Codes, alpha3ToAlpha2 } from 'i18n-iso-countries';
import { parsePhoneNumberFromString, CountryCode } from 'libphonenumber-js/max';
import { z } from 'zod';

const alpha3Codes = new Set(Object.keys(getAlpha3Codes()));

export function isCountryCode(value: string): boolean {
  return alpha3Codes.has(value);
}

export const countryCodeSchema = z
  .string()
  .refine(isCountryCode, 'must be an ISO 3166-1 alpha-3 country code (e.g. BRA, USA, DEU)')
  .meta({ description: 'ISO 3166-1 alpha-3 country code, upper case.', example: 'BRA' });

/** Required text: trimmed, not empty, bounded. */
export const text = (max = 200) => z.string().trim().min(1).max(max);

export const uuidSchema = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a UUID');

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

/** YYYY-MM-DD of a day that exists, strictly before today (UTC) and not before 1900. */
export const pastDateSchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date in YYYY-MM-DD format')
  .refine(isRealDate, 'is not a calendar date')
  .refine((value) => value < todayUtc(), 'must be in the past')
  .refine((value) => value >= '1900-01-01', 'must not be before 1900-01-01')
  .meta({ format: 'date', example: '1990-05-17' });

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
  .meta({ example: 'ana@example.com' });

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
  description:
    "Phone number. Accepted as E.164 with or without the leading `+` (`+5511987654321`, `5511987654321`) or in the national format of the customer's country; stored and returned as E.164 with `+`.",
  example: '+5511987654321',
});

export const websiteSchema = z
  .url({ protocol: /^https?$/, hostname: z.regexes.domain, error: 'must be an http(s) URL' })
  .max(2048);

/** Decimal string with at most `scale` fractional digits, e.g. "25" or "33.33". */
export const decimalString = (scale: number) =>
  z
    .string()
    .regex(
      new RegExp(`^\\d{1,15}(\\.\\d{1,${scale}})?$`),
      `must be a decimal number as a string, with at most ${scale} decimal places`,
    );

/** Run object-level checks even when some fields failed, so one response lists every problem. */
export const always = {
  when: (payload: { value: unknown }) => typeof payload.value === 'object' && payload.value !== null,
} as const;

/** A money amount in a request: a decimal string greater than 0 (its currency's decimals are checked where known). */
export const positiveAmountSchema = z
  .string()
  .regex(/^\d{1,15}(\.\d+)?$/, 'must be a decimal number as a string, e.g. "100.50"')
  .refine((text) => !/^0+(\.0+)?$/.test(text), 'must be greater than 0');
