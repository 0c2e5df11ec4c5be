// Argentine account numbers, 22 digits in two blocks, each ending in a check digit:
//   block 1 (8 digits): entity (3) + branch (4) + check digit, weights 7 1 3 9 7 1 3
//   block 2 (14 digits): account (13) + check digit, weights 3 9 7 1 3 9 7 1 3 9 7 1 3
// check digit = (10 - weighted sum mod 10) mod 10. A CBU is held at a bank; a CVU is the same format
// held at a payment service provider and always starts with 000 (the entity code of PSPs).

function checkDigit(digits: string, weights: readonly number[]): number {
  const sum = weights.reduce((total, weight, index) => total + weight * Number(digits[index]), 0);
  return (10 - (sum % 10)) % 10;
}

const firstBlockWeights = [7, 1, 3, 9, 7, 1, 3] as const;
const secondBlockWeights = [3, 9, 7, 1, 3, 9, 7, 1, 3, 9, 7, 1, 3] as const;

/** 22 digits with both check digits right (the format shared by CBU and CVU). */
export function hasValidCbuCheckDigits(value: string): boolean {
  if (!/^\d{22}$/.test(value)) return false;
  return (
    checkDigit(value.slice(0, 7), firstBlockWeights) === Number(value[7]) &&
    checkDigit(value.slice(8, 21), secondBlockWeights) === Number(value[21])
  );
}

export type ArgentineAccountKind = 'cbu' | 'cvu';
export type ArgentineAccountCheck = { ok: true } | { ok: false; reason: string };

export function checkArgentineAccount(value: string, kind: ArgentineAccountKind): ArgentineAccountCheck {
  if (!/^\d{22}$/.test(value)) return { ok: false, reason: 'must be 22 digits' };
  if (!hasValidCbuCheckDigits(value)) {
    return { ok: false, reason: `is not a valid ${kind.toUpperCase()}: the check digits do not match` };
  }
  const isCvu = value.startsWith('000');
  if (kind === 'cbu' && isCvu) return { ok: false, reason: 'is a CVU (it starts with 000): send it as cvu' };
  if (kind === 'cvu' && !isCvu) return { ok: false, reason: 'is a CBU (a CVU starts with 000): send it as cbu' };
  return { ok: true };
}
