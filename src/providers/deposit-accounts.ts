// Bank details of virtual accounts. The service holds a master account at a partner bank per sender
// currency and issues each virtual account its own account number under it (a virtual IBAN for EUR,
// a sub-account number for USD), so a bank credit names the virtual account it is for.
import { createHash } from 'node:crypto';
import { composeIBAN, countrySpecs, electronicFormatIBAN, isValidBIC, isValidIBAN } from 'ibantools';
import { z } from 'zod';
import { addressSchema, type Address } from '../schemas/common';
import { checkAbaRoutingNumber } from '../domain/aba';

export const senderCurrencies = ['USD', 'EUR'] as const;
export type SenderCurrency = (typeof senderCurrencies)[number];
export const depositRails = ['sepa', 'ach', 'wire', 'swift'] as const;
export type DepositRail = (typeof depositRails)[number];

interface BankFields {
  bank_name: string;
  bank_address: Address;
  beneficiary_name: string;
}
export type SepaDepositAddress = BankFields & { iban: string; bic: string };
export type UsDomesticDepositAddress = BankFields & { bank_account_number: string; routing_number: string };
export type SwiftDepositAddress = BankFields & { bank_account_number: string; bic: string };
export type DepositAddresses =
  | Record<string, never>
  | { sepa: SepaDepositAddress }
  | { ach: UsDomesticDepositAddress; wire: UsDomesticDepositAddress; swift: SwiftDepositAddress };

/** How an incoming credit names its account on one rail: the IBAN or account number and the bank's code. */
export interface DepositReference {
  rail: DepositRail;
  identifier: string;
  bankCode: string;
}

export interface IssuedDepositDetails {
  depositAddresses: DepositAddresses;
  references: DepositReference[];
}

export interface DepositAccountRequest {
  virtualAccountId: string;
  senderCurrency: SenderCurrency;
  beneficiaryName: string;
  /** 0 first; a higher attempt gives another number when the previous one is already taken. */
  attempt: number;
}

export interface DepositAccountIssuer {
  issue(request: DepositAccountRequest): IssuedDepositDetails;
}

// ---- bank identifiers ----

/** The one ABA rule of the project (src/domain/aba.ts): checksum and a bank prefix. */
export function isValidAbaRoutingNumber(value: string): boolean {
  return checkAbaRoutingNumber(value).ok;
}

const abaSchema = z.string().refine(isValidAbaRoutingNumber, 'must be a valid ABA routing number');
const bicSchema = z.string().refine((value) => isValidBIC(value), 'must be a BIC of 8 or 11 characters');

/** The master accounts virtual accounts are issued under (VIRTUAL_ACCOUNT_BANKS in production). */
export const bankProfilesSchema = z
  .object({
    usd: z
      .object({
        bank_name: z.string().min(1),
        bank_address: addressSchema,
        ach_routing_number: abaSchema,
        wire_routing_number: abaSchema,
        bic: bicSchema,
        /** Leading digits of every issued account number; the rest (up to 12 digits) is per account. */
        account_number_prefix: z.string().regex(/^\d{2,4}$/, 'must be 2-4 digits'),
      })
      .strict(),
    eur: z
      .object({
        bank_name: z.string().min(1),
        bank_address: addressSchema,
        bic: bicSchema,
        /** ISO alpha-2 country of the IBANs, e.g. DE. */
        iban_country: z.string().regex(/^[A-Z]{2}$/),
        /** Start of the BBAN (bank code, branch); the rest of the BBAN is digits per account. */
        bban_prefix: z.string().regex(/^[A-Z0-9]{1,20}$/),
      })
      .strict(),
  })
  .strict()
  .superRefine((profiles, ctx) => {
    // Issued IBANs must be valid: the country must use IBANs and accept an all-digit account part
    // without a national check digit (e.g. DE, AT); checked by issuing a sample.
    const sample = ibanFor(profiles.eur, 0n);
    if (!sample || !isValidIBAN(sample)) {
      ctx.addIssue({
        code: 'custom',
        path: ['eur', 'bban_prefix'],
        message: `cannot issue valid IBANs for ${profiles.eur.iban_country} with this prefix`,
      });
    }
  });

export type BankProfiles = z.infer<typeof bankProfilesSchema>;

/** Fictitious banks of the sandbox. Their details are well-formed but name no real account. */
export const sandboxBankProfiles: BankProfiles = {
  usd: {
    bank_name: 'Sandbox Bank, N.A.',
    bank_address: {
      street_line_1: '1 Sandbox Plaza',
      city: 'New York',
      state: 'NY',
      postal_code: '10004',
      country: 'USA',
    },
    ach_routing_number: '123456780',
    wire_routing_number: '321076548',
    bic: 'SBOXUS33XXX',
    account_number_prefix: '84',
  },
  eur: {
    bank_name: 'Sandbox Bank Europe AG',
    bank_address: { street_line_1: 'Sandboxstraße 1', city: 'Berlin', postal_code: '10117', country: 'DEU' },
    bic: 'SBOXDEBBXXX',
    iban_country: 'DE',
    bban_prefix: '87654321',
  },
};

const US_ACCOUNT_NUMBER_LENGTH = 12;

/** A number of `digits` digits derived from the virtual account id and attempt. */
function derivedDigits(request: Pick<DepositAccountRequest, 'virtualAccountId' | 'attempt'>, digits: number): string {
  const hash = createHash('sha256').update(`${request.virtualAccountId}:${request.attempt}`).digest('hex');
  return (BigInt(`0x${hash}`) % 10n ** BigInt(digits)).toString().padStart(digits, '0');
}

function ibanFor(profile: BankProfiles['eur'], accountDigits: bigint | string): string | null {
  const length = countrySpecs[profile.iban_country]?.chars;
  if (!length) return null;
  const free = length - 4 - profile.bban_prefix.length;
  if (free < 6) return null;
  const account = typeof accountDigits === 'string' ? accountDigits : accountDigits.toString().padStart(free, '0');
  return composeIBAN({ countryCode: profile.iban_country, bban: `${profile.bban_prefix}${account}` }) ?? null;
}

/** Issues details under the configured master accounts; deterministic in (virtual account, attempt). */
export class SubAccountIssuer implements DepositAccountIssuer {
  constructor(private readonly banks: BankProfiles) {}

  issue(request: DepositAccountRequest): IssuedDepositDetails {
    return request.senderCurrency === 'EUR' ? this.issueEur(request) : this.issueUsd(request);
  }

  private issueEur(request: DepositAccountRequest): IssuedDepositDetails {
    const bank = this.banks.eur;
    const length = countrySpecs[bank.iban_country]?.chars as number;
    const iban = electronicFormatIBAN(
      ibanFor(bank, derivedDigits(request, length - 4 - bank.bban_prefix.length)) ?? '',
    ) as string;
    return {
      depositAddresses: {
        sepa: {
          iban,
          bic: bank.bic,
          bank_name: bank.bank_name,
          bank_address: bank.bank_address,
          beneficiary_name: request.beneficiaryName,
        },
      },
      references: [{ rail: 'sepa', identifier: iban, bankCode: bank.bic }],
    };
  }

  private issueUsd(request: DepositAccountRequest): IssuedDepositDetails {
    const bank = this.banks.usd;
    const accountNumber = `${bank.account_number_prefix}${derivedDigits(
      request,
      US_ACCOUNT_NUMBER_LENGTH - bank.account_number_prefix.length,
    )}`;
    const common = {
      bank_name: bank.bank_name,
      bank_address: bank.bank_address,
      beneficiary_name: request.beneficiaryName,
    };
    return {
      depositAddresses: {
        ach: { bank_account_number: accountNumber, routing_number: bank.ach_routing_number, ...common },
        wire: { bank_account_number: accountNumber, routing_number: bank.wire_routing_number, ...common },
        swift: { bank_account_number: accountNumber, bic: bank.bic, ...common },
      },
      references: [
        { rail: 'ach', identifier: accountNumber, bankCode: bank.ach_routing_number },
        { rail: 'wire', identifier: accountNumber, bankCode: bank.wire_routing_number },
        { rail: 'swift', identifier: accountNumber, bankCode: bank.bic },
      ],
    };
  }
}
