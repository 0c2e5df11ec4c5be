// IBAN and BIC checks for SEPA accounts, on ibantools: the country's IBAN length and BBAN format,
// the mod-97 check digits and, where a country defines one, the national check digit.
import { alpha3ToAlpha2 } from 'i18n-iso-countries/index';
import { electronicFormatIBAN, validateBIC, validateIBAN, ValidationErrorsBIC, ValidationErrorsIBAN } from 'ibantools';

/** SEPA scheme countries (SPEC 2.5), ISO 3166-1 alpha-3. */
// prettier-ignore
export const sepaCountries = [
  'AND', 'AUT', 'BEL', 'BGR', 'HRV', 'CYP', 'CZE', 'DNK', 'EST', 'FIN', 'FRA', 'DEU', 'GRC', 'HUN', 'ISL', 'IRL',
  'ITA', 'LVA', 'LIE', 'LTU', 'LUX', 'MLT', 'MCO', 'NLD', 'NOR', 'POL', 'PRT', 'ROU', 'SMR', 'SVK', 'SVN', 'ESP',
  'SWE', 'CHE', 'GBR', 'VAT',
] as const;

export type IbanCheck = { ok: true; iban: string; countryAlpha2: string } | { ok: false; reason: string };

/** Validates an IBAN given with or without spaces, in any case; returns its electronic form. */
export function checkIban(raw: string): IbanCheck {
  const iban = electronicFormatIBAN(raw) ?? '';
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{1,30}$/.test(iban)) {
    return {
      ok: false,
      reason: 'must be an IBAN: 2-letter country code, 2 check digits and the account (e.g. DE89370400440532013000)',
    };
  }
  // A Swiss QR-IBAN only receives QR-bill payments, never a SEPA transfer.
  const result = validateIBAN(iban, { allowQRIBAN: false });
  if (result.valid) return { ok: true, iban, countryAlpha2: iban.slice(0, 2) };
  const errors = new Set(result.errorCodes);
  if (errors.has(ValidationErrorsIBAN.NoIBANCountry))
    return { ok: false, reason: `${iban.slice(0, 2)} is not a country that uses IBANs` };
  if (errors.has(ValidationErrorsIBAN.WrongBBANLength))
    return { ok: false, reason: `has the wrong length for an IBAN of ${iban.slice(0, 2)}` };
  if (errors.has(ValidationErrorsIBAN.WrongBBANFormat))
    return { ok: false, reason: `does not have the account format of ${iban.slice(0, 2)}` };
  if (errors.has(ValidationErrorsIBAN.QRIBANNotAllowed))
    return { ok: false, reason: 'is a Swiss QR-IBAN, which cannot receive SEPA transfers' };
  if (errors.has(ValidationErrorsIBAN.WrongAccountBankBranchChecksum))
    return { ok: false, reason: 'is not a valid IBAN: the national check digits do not match' };
  return { ok: false, reason: 'is not a valid IBAN: the check digits do not match' };
}

export type BicCheck = { ok: true; bic: string } | { ok: false; reason: string };

/** BIC (SWIFT code): 4-letter institution, 2-letter country, 2-character location, optional 3-character branch. */
export function checkBic(raw: string): BicCheck {
  const bic = raw.trim().toUpperCase();
  const result = validateBIC(bic);
  if (result.valid) return { ok: true, bic };
  if (result.errorCodes.includes(ValidationErrorsBIC.NoBICCountry) && /^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$/.test(bic)) {
    return { ok: false, reason: `${bic.slice(4, 6)} is not a country code` };
  }
  return { ok: false, reason: 'must be a BIC of 8 or 11 characters (e.g. DEUTDEFF or DEUTDEFF500)' };
}

/** ISO alpha-2 of a SEPA country, to compare with an IBAN's country. */
export function alpha2Of(country: string): string | undefined {
  return alpha3ToAlpha2(country);
}
