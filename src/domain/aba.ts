// ABA routing transit numbers (US): 9 digits where 3(d1+d4+d7) + 7(d2+d5+d8) + (d3+d6+d9) is a
// multiple of 10. The first two digits say what kind of institution it is: 01-12 and 21-32 are banks
// and thrifts of the twelve Federal Reserve districts, 61-72 their electronic (ACH) numbers. 00 (US
// government) and 80 (traveller's cheques) never name an account a customer can be paid into.

export type AbaCheck = { ok: true } | { ok: false; reason: string };

export function isValidAbaChecksum(value: string): boolean {
  if (!/^\d{9}$/.test(value)) return false;
  const d = [...value].map(Number);
  const sum = 3 * (d[0]! + d[3]! + d[6]!) + 7 * (d[1]! + d[4]! + d[7]!) + (d[2]! + d[5]! + d[8]!);
  return sum % 10 === 0;
}

function isAccountPrefix(prefix: number): boolean {
  return (prefix >= 1 && prefix <= 12) || (prefix >= 21 && prefix <= 32) || (prefix >= 61 && prefix <= 72);
}

export function checkAbaRoutingNumber(value: string): AbaCheck {
  if (!/^\d{9}$/.test(value)) return { ok: false, reason: 'must be 9 digits' };
  if (!isAccountPrefix(Number(value.slice(0, 2)))) {
    return { ok: false, reason: 'is not a bank routing number: it must start with 01-12, 21-32 or 61-72' };
  }
  if (!isValidAbaChecksum(value)) {
    return { ok: false, reason: 'is not a valid ABA routing number: the checksum does not match' };
  }
  return { ok: true };
}
