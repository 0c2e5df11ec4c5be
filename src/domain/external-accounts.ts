// Rules of external accounts that need no I/O: the rails, the statuses, and what makes two
// registrations the same bank account.

export const paymentRails = ['pix', 'pix_account', 'spei', 'wire', 'sepa', 'cvu'] as const;
export type PaymentRail = (typeof paymentRails)[number];

/** Decided by screening within the create request; no other transitions exist (SPEC 3.3). */
export const externalAccountStatuses = ['approved', 'rejected'] as const;
export type ExternalAccountStatus = (typeof externalAccountStatuses)[number];

/** What identifies the bank account on each rail, already normalised by the request schema. */
export type AccountIdentifiers =
  | { rail: 'pix'; key: string }
  | { rail: 'pix_account'; bankCode: string; branchCode: string; accountNumber: string }
  | { rail: 'spei'; protocol: 'clabe'; clabe: string }
  | { rail: 'spei'; protocol: 'phonenumber'; bankCode: string; phoneNumber: string }
  | { rail: 'wire'; routingNumber: string; accountNumber: string }
  | { rail: 'sepa'; iban: string }
  | { rail: 'cvu'; cvu?: string; cbu?: string };

/**
 * The identity of a bank account, e.g. `sepa:DE89370400440532013000`. A customer registers each
 * account once (a unique index on customer and identity enforces it); names and flags do not count.
 */
export function accountIdentityOf(identifiers: AccountIdentifiers): string {
  switch (identifiers.rail) {
    case 'pix':
      return `pix:${identifiers.key}`;
    case 'pix_account':
      return `pix_account:${identifiers.bankCode}:${identifiers.branchCode}:${identifiers.accountNumber}`;
    case 'spei':
      return identifiers.protocol === 'clabe'
        ? `spei:clabe:${identifiers.clabe}`
        : `spei:phonenumber:${identifiers.bankCode}:${identifiers.phoneNumber}`;
    case 'wire':
      return `wire:${identifiers.routingNumber}:${identifiers.accountNumber}`;
    case 'sepa':
      return `sepa:${identifiers.iban}`;
    case 'cvu':
      return identifiers.cvu !== undefined ? `cvu:cvu:${identifiers.cvu}` : `cvu:cbu:${identifiers.cbu ?? ''}`;
  }
}

/** ISO alpha-3 country where an account of the rail is held (SEPA: the account's country). */
export function countryOfRail(rail: Exclude<PaymentRail, 'sepa'>): string {
  const countries = { pix: 'BRA', pix_account: 'BRA', spei: 'MEX', wire: 'USA', cvu: 'ARG' } as const;
  return countries[rail];
}
