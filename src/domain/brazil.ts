// Brazilian identifiers: CPF and CNPJ tax numbers (check digits from cpf-cnpj-validator, which also
// knows the alphanumeric CNPJ of RFB Nota Técnica 49/2024, issued since July 2026) and pix keys.
import { cnpj, cpf } from 'cpf-cnpj-validator';
import { isValidPhoneNumber, parsePhoneNumberFromString } from 'libphonenumber-js/max';

export type BrazilianTaxIdType = 'cpf' | 'cnpj';

const cpfPattern = /^(\d{11}|\d{3}\.\d{3}\.\d{3}-\d{2})$/;
const cnpjPattern = /^([0-9A-Z]{12}\d{2}|[0-9A-Z]{2}\.[0-9A-Z]{3}\.[0-9A-Z]{3}\/[0-9A-Z]{4}-\d{2})$/;

/**
 * A CPF (11 digits) or CNPJ (14 characters: 12 digits or upper-case letters, then 2 check digits),
 * bare or with the official mask, with valid check digits. Returns the bare form, or null.
 */
export function parseBrazilianTaxId(raw: string): { type: BrazilianTaxIdType; value: string } | null {
  const value = raw.trim();
  if (cpfPattern.test(value)) {
    const bare = value.replace(/\D/g, '');
    return cpf.isValid(bare, true) ? { type: 'cpf', value: bare } : null;
  }
  if (cnpjPattern.test(value)) {
    const bare = value.replace(/[./-]/g, '');
    return cnpj.isValid(bare, true) ? { type: 'cnpj', value: bare } : null;
  }
  return null;
}

/** What a string that looks like a tax id is, to explain why it was refused. */
export function looksLikeTaxId(raw: string): BrazilianTaxIdType | null {
  const value = raw.trim();
  if (cpfPattern.test(value)) return 'cpf';
  if (cnpjPattern.test(value)) return 'cnpj';
  return null;
}

export const pixKeyTypes = ['cpf', 'cnpj', 'email', 'phone', 'random'] as const;
export type PixKeyType = (typeof pixKeyTypes)[number];

export interface PixKey {
  type: PixKeyType;
  /** The key as the pix directory (DICT) stores it. */
  value: string;
}

export type PixKeyParse = { ok: true; key: PixKey } | { ok: false; reason: string };

/** DICT limits an email key to 77 characters. */
export const MAX_PIX_EMAIL_LENGTH = 77;
const emailPattern =
  /^[a-z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Reads a pix key of one of the five DICT types and returns it in DICT form:
 * CPF (11 digits) and CNPJ (14 characters) bare, emails lower case, phones E.164 (+55...),
 * random keys (EVP) as lower-case UUIDs. The type follows from the shape: `@` is an email, a
 * leading `+` a phone, a UUID a random key, 11 digits a CPF, 14 characters a CNPJ. An 11-digit
 * string is always a CPF: phone keys must carry +55.
 */
export function parsePixKey(raw: string): PixKeyParse {
  const value = raw.trim();
  if (value.includes('@')) {
    const email = value.toLowerCase();
    if (email.length > MAX_PIX_EMAIL_LENGTH) {
      return { ok: false, reason: `an email key has at most ${MAX_PIX_EMAIL_LENGTH} characters` };
    }
    return emailPattern.test(email)
      ? { ok: true, key: { type: 'email', value: email } }
      : { ok: false, reason: 'is not a valid email address' };
  }
  if (value.startsWith('+')) {
    const compact = value.replace(/[\s().-]/g, '');
    if (!/^\+55\d{10,11}$/.test(compact)) {
      return {
        ok: false,
        reason: 'a phone key is a Brazilian number in E.164: +55, area code and number (e.g. +5511987654321)',
      };
    }
    const phone = parsePhoneNumberFromString(compact);
    if (!phone || phone.country !== 'BR' || !isValidPhoneNumber(compact)) {
      return { ok: false, reason: 'is not a valid Brazilian phone number' };
    }
    return { ok: true, key: { type: 'phone', value: phone.number } };
  }
  if (uuidPattern.test(value)) return { ok: true, key: { type: 'random', value: value.toLowerCase() } };
  const taxIdType = looksLikeTaxId(value);
  if (taxIdType) {
    const taxId = parseBrazilianTaxId(value);
    return taxId
      ? { ok: true, key: taxId }
      : { ok: false, reason: `is not a valid ${taxIdType.toUpperCase()}: wrong check digits` };
  }
  return {
    ok: false,
    reason:
      'is not a pix key: expected a CPF (11 digits), a CNPJ (14 characters), an email, a phone (+55...) or a random key (UUID)',
  };
}
