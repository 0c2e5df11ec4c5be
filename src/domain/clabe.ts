// CLABE, the 18-digit Mexican interbank account number: bank (3 digits), branch city (3),
// account (11) and a check digit. The check digit weighs the first 17 digits 3, 7, 1, 3, 7, 1, ...,
// sums each product modulo 10, and is (10 - sum mod 10) mod 10.
// (clabe-validator on npm does this too, but ships as an ES module only, which this CommonJS
// project and its jest set-up cannot load without extra transforms.)

const weights = [3, 7, 1] as const;

export function clabeCheckDigit(first17: string): number {
  let sum = 0;
  for (let index = 0; index < 17; index += 1) {
    sum += (Number(first17[index]) * weights[index % 3]!) % 10;
  }
  return (10 - (sum % 10)) % 10;
}

export type ClabeCheck = { ok: true; bankCode: string } | { ok: false; reason: string };

export function checkClabe(value: string): ClabeCheck {
  if (!/^\d{18}$/.test(value)) return { ok: false, reason: 'must be 18 digits' };
  if (clabeCheckDigit(value.slice(0, 17)) !== Number(value[17])) {
    return { ok: false, reason: 'is not a valid CLABE: the check digit does not match' };
  }
  return { ok: true, bankCode: value.slice(0, 3) };
}
