// Brazilian identifiers: CPF and CNPJ tax numbers (check digits from cpf-cnpj-validator, which also
// knows the alphanumeric CNPJ of RFB Nota Técnica 49/2024, issued since July 2026) and pix keys.
import { cnpj, cpf } from 'cpf-cnpj-validator';
import { isValidPhoneNumber, parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { isUuid } from './uuid';

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
  if (isUuid(value)) return { ok: true, key: { type: 'random', value: value.toLowerCase() } };
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

// ---- pix "copia e cola" (BR Code) ----

/** CRC-16/CCITT-FALSE (polynomial 0x1021, initial 0xFFFF), as the BR Code's field 63 carries it. */
export function crc16Ccitt(text: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

/** One EMV field: id, two-digit length, value. */
function emvField(id: string, value: string): string {
  if (value.length > 99) throw new Error(`EMV field ${id} is longer than 99 characters`);
  return `${id}${value.length.toString().padStart(2, '0')}${value}`;
}

/** Names and cities in a BR Code are plain ASCII, upper case, within their field limits. */
function emvText(text: string, max: number): string {
  return text
    .normalize('NFD')
    .replace(/[^\x20-\x7e]/g, '')
    .toUpperCase()
    .slice(0, max);
}

/**
 * The pix "copia e cola" code (BCB BR Code, EMV merchant-presented QR payload) that pays `amount`
 * (a decimal string in BRL) to `key`, with `txid` (up to 25 letters and digits) as the payment
 * identifier the receiving bank reports with the deposit.
 */
export function pixCopyPasteCode(input: {
  key: string;
  amount: string;
  beneficiaryName: string;
  city: string;
  txid: string;
}): string {
  if (!/^[A-Za-z0-9]{1,25}$/.test(input.txid)) throw new Error('a pix txid is 1-25 letters and digits');
  const payload =
    emvField('00', '01') +
    emvField('01', '12') +
    emvField('26', emvField('00', 'br.gov.bcb.pix') + emvField('01', input.key)) +
    emvField('52', '0000') +
    emvField('53', '986') +
    emvField('54', input.amount) +
    emvField('58', 'BR') +
    emvField('59', emvText(input.beneficiaryName, 25)) +
    emvField('60', emvText(input.city, 15)) +
    emvField('62', emvField('05', input.txid)) +
    '6304';
  return payload + crc16Ccitt(payload);
}
