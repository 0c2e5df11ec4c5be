// Which payment rails carry which currency: local fiat rails, and blockchains for stablecoins.
// Everything that differs between fiat rails is in one definition per rail (railDefinitions), so a new
// rail is one entry here plus its zod schemas and sandbox collection account, which the compiler asks for
// (Record<FiatRail, ...>), and test/rail-completeness.test.ts checks the rest.
import { checkAbaRoutingNumber } from './aba';
import { checkArgentineAccount } from './cbu';
import { checkClabe } from './clabe';
import { checkBic, checkIban } from './iban';
import type { Currency } from './money';

export const fiatRails = ['pix', 'pix_account', 'spei', 'wire', 'ach', 'sepa', 'cvu'] as const;
export const blockchains = ['ethereum', 'solana'] as const;
export type FiatRail = (typeof fiatRails)[number];
export type Blockchain = (typeof blockchains)[number];
export type PaymentRail = FiatRail | Blockchain;
export const allPaymentRails: readonly PaymentRail[] = [...fiatRails, ...blockchains];

export function isPaymentRail(value: unknown): value is PaymentRail {
  return allPaymentRails.some((rail) => rail === value);
}
export function isFiatRail(rail: PaymentRail): rail is FiatRail {
  return fiatRails.some((fiat) => fiat === rail);
}
export function isBlockchain(rail: PaymentRail): rail is Blockchain {
  return blockchains.some((chain) => chain === rail);
}

/**
 * A stored rail narrowed to the kind its place allows (a payout's receiver is a fiat rail, a pay-in's a chain: the
 * transaction's type decides): anything else is corrupt data that must stop the work.
 */
function narrowTo<R extends PaymentRail>(members: readonly R[], kind: string) {
  return (rail: PaymentRail | null): R => {
    const found = members.find((member) => member === rail);
    if (found === undefined) throw new Error(`not a ${kind}: ${rail}`);
    return found;
  };
}
export const fiatRailOf = narrowTo(fiatRails, 'fiat rail');
export const blockchainOf = narrowTo(blockchains, 'blockchain');

/** A rail object as stored and returned (snake_case fields; absent optional fields are undefined). */
export type RailObject = Readonly<Record<string, unknown>>;

export type FieldCheck = (value: string) => { ok: true } | { ok: false; reason: string };

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/** What an external account on the rail is: its fields, their checks, its identity and its masking. */
export interface ExternalAccountDefinition {
  /** Fields of the rail object, request and response (required or not per the schema). */
  fields: readonly string[];
  /** The domain check of each field that has one (the request schema runs it; 400 with its reason). */
  checks: Readonly<Record<string, FieldCheck>>;
  /** The OpenAPI `format` names these checks are documented under (src/http/openapi.ts describes each). */
  formats: readonly string[];
  /**
   * What makes two registrations the same bank account, e.g. `sepa:DE89...`: a customer registers each
   * account once (a unique index on customer and identity); names and flags do not count.
   */
  identity(account: RailObject): string;
  /** Fields that identify the account, first present one wins: its last 4 characters are shown. */
  maskedFields: readonly string[];
  /** ISO alpha-3 country of the account; null when the rail object names it (`country`, SEPA). */
  country: string | null;
  /** A well-formed fictitious account (normalised form) for documentation examples and tests. */
  example: RailObject;
}

export interface RailDefinition {
  currency: Currency;
  /**
   * How long the sender has to deposit on this rail. Instant rails settle in seconds, so half an hour
   * is plenty and keeps the locked rate's risk short; bank transfers take business days (SEPA credit
   * transfers D+1, wires same or next day, ACH up to three days).
   */
  depositWindowMs: number;
  /** Fields of the rail's object in `sender_deposit_instructions` (the provider fills them). */
  instructionFields: readonly string[];
  /** null: the rail only brings money in (no external accounts, e.g. ach). */
  externalAccount: ExternalAccountDefinition | null;
}

const usBankInstructionFields = [
  'bank_account_number',
  'routing_number',
  'bank_name',
  'bank_address',
  'beneficiary_name',
] as const;

const checked = (check: (value: string) => { ok: boolean; reason?: string }): FieldCheck => check as FieldCheck;

const str = (account: RailObject, field: string): string => {
  const value = account[field];
  return typeof value === 'string' ? value : '';
};

export const railDefinitions = {
  pix: {
    currency: 'BRL',
    depositWindowMs: 30 * MINUTE,
    instructionFields: ['key', 'key_type', 'bank_name', 'copy_paste_code', 'beneficiary_name'],
    externalAccount: {
      fields: ['key', 'key_type', 'bank_name', 'beneficiary_name'],
      // No 400 check: the service checks the key's format, then asks the pix directory (422 pix_key_invalid).
      checks: {},
      formats: [],
      identity: (account) => `pix:${str(account, 'key')}`,
      maskedFields: ['key'],
      country: 'BRA',
      example: { key: '+5511987654321' },
    },
  },
  pix_account: {
    currency: 'BRL',
    depositWindowMs: 30 * MINUTE,
    instructionFields: [
      'bank_code',
      'branch_code',
      'bank_account_number',
      'account_type',
      'beneficiary_document',
      'bank_name',
      'beneficiary_name',
    ],
    externalAccount: {
      fields: [
        'bank_code',
        'branch_code',
        'bank_account_number',
        'account_type',
        'beneficiary_document',
        'beneficiary_name',
      ],
      checks: {},
      formats: ['cpf-cnpj'],
      identity: (account) =>
        `pix_account:${str(account, 'bank_code')}:${str(account, 'branch_code')}:${str(account, 'bank_account_number')}`,
      maskedFields: ['bank_account_number'],
      country: 'BRA',
      example: {
        bank_code: '001',
        branch_code: '1234',
        bank_account_number: '1234567',
        account_type: 'checking',
        beneficiary_document: '52998224725',
        beneficiary_name: 'Ana Souza',
      },
    },
  },
  spei: {
    currency: 'MXN',
    depositWindowMs: 30 * MINUTE,
    instructionFields: ['clabe', 'bank_name', 'beneficiary_name'],
    externalAccount: {
      fields: ['beneficiary_name', 'protocol', 'bank_code', 'clabe', 'phone_number', 'bank_name'],
      checks: { clabe: checked(checkClabe) },
      formats: ['clabe', 'mx-phone'],
      identity: (account) =>
        account.protocol === 'clabe'
          ? `spei:clabe:${str(account, 'clabe')}`
          : `spei:phonenumber:${str(account, 'bank_code')}:${str(account, 'phone_number')}`,
      maskedFields: ['clabe', 'phone_number'],
      country: 'MEX',
      example: {
        beneficiary_name: 'Juan Pérez',
        protocol: 'clabe',
        bank_code: '002',
        clabe: '002010077777777771',
        bank_name: 'Banamex',
      },
    },
  },
  wire: {
    currency: 'USD',
    depositWindowMs: 2 * DAY,
    instructionFields: usBankInstructionFields,
    externalAccount: {
      fields: [
        'beneficiary_name',
        'beneficiary_type',
        'bank_name',
        'bank_account_number',
        'routing_number',
        'beneficiary_address',
      ],
      checks: { routing_number: checked(checkAbaRoutingNumber) },
      formats: ['aba-routing-number'],
      identity: (account) => `wire:${str(account, 'routing_number')}:${str(account, 'bank_account_number')}`,
      maskedFields: ['bank_account_number'],
      country: 'USA',
      example: {
        beneficiary_name: 'John Smith',
        beneficiary_type: 'individual',
        bank_name: 'JPMorgan Chase',
        bank_account_number: '000123456789',
        routing_number: '021000021',
        beneficiary_address: {
          street_line_1: '270 Park Avenue',
          city: 'New York',
          state: 'NY',
          postal_code: '10017',
          country: 'USA',
        },
      },
    },
  },
  ach: {
    currency: 'USD',
    depositWindowMs: 3 * DAY,
    instructionFields: usBankInstructionFields,
    // Deposits only: payouts in USD go by wire.
    externalAccount: null,
  },
  sepa: {
    currency: 'EUR',
    depositWindowMs: 2 * DAY,
    instructionFields: ['iban', 'bic', 'bank_name', 'beneficiary_name'],
    externalAccount: {
      fields: ['beneficiary_type', 'beneficiary_name', 'bank_name', 'iban', 'bic', 'country', 'beneficiary_address'],
      checks: { iban: checked(checkIban), bic: checked(checkBic) },
      formats: ['iban', 'bic'],
      identity: (account) => `sepa:${str(account, 'iban')}`,
      maskedFields: ['iban'],
      country: null,
      example: {
        beneficiary_type: 'individual',
        beneficiary_name: 'Erika Mustermann',
        bank_name: 'Deutsche Bank',
        iban: 'DE89370400440532013000',
        bic: 'DEUTDEFF',
        country: 'DEU',
        beneficiary_address: {
          street_line_1: 'Unter den Linden 1',
          city: 'Berlin',
          postal_code: '10117',
          country: 'DEU',
        },
      },
    },
  },
  cvu: {
    currency: 'ARS',
    depositWindowMs: 30 * MINUTE,
    instructionFields: ['cvu', 'bank_name', 'beneficiary_name'],
    externalAccount: {
      fields: ['beneficiary_name', 'cvu', 'cbu'],
      checks: {
        cvu: (value) => checkArgentineAccount(value, 'cvu'),
        cbu: (value) => checkArgentineAccount(value, 'cbu'),
      },
      formats: ['cvu', 'cbu'],
      identity: (account) =>
        account.cvu !== undefined ? `cvu:cvu:${str(account, 'cvu')}` : `cvu:cbu:${str(account, 'cbu')}`,
      maskedFields: ['cvu', 'cbu'],
      country: 'ARG',
      example: { beneficiary_name: 'María González', cvu: '0000003110001234567898' },
    },
  },
} as const satisfies Record<FiatRail, RailDefinition>;

/** The fiat rails external accounts (payout destinations) can be registered on. */
export type ExternalAccountRail = {
  [R in FiatRail]: (typeof railDefinitions)[R]['externalAccount'] extends null ? never : R;
}[FiatRail];

export const externalAccountRails = fiatRails.filter(
  (rail): rail is ExternalAccountRail => railDefinitions[rail].externalAccount !== null,
);

export const externalAccountRailOf = narrowTo(externalAccountRails, 'rail of external accounts');

export function externalAccountDefinitionOf(rail: ExternalAccountRail): ExternalAccountDefinition {
  return railDefinitions[rail].externalAccount as ExternalAccountDefinition;
}

/** A chain's window: a payout's stablecoin sent on chain (confirmed in minutes). */
const chainDepositWindowMs = 60 * MINUTE;

export const depositWindowMs: Record<PaymentRail, number> = {
  ...Object.fromEntries(blockchains.map((chain) => [chain, chainDepositWindowMs])),
  ...Object.fromEntries(fiatRails.map((rail) => [rail, railDefinitions[rail].depositWindowMs])),
} as Record<PaymentRail, number>;

export function fiatRailsOf(currency: Currency): FiatRail[] {
  return fiatRails.filter((rail) => railDefinitions[rail].currency === currency);
}

/** Rails of each currency: the fiat rails their definitions name, the blockchains for stablecoins. */
export const railsByCurrency: Record<Currency, readonly PaymentRail[]> = {
  BRL: fiatRailsOf('BRL'),
  MXN: fiatRailsOf('MXN'),
  USD: fiatRailsOf('USD'),
  EUR: fiatRailsOf('EUR'),
  ARS: fiatRailsOf('ARS'),
  USDC: blockchains,
  USDT: blockchains,
};

/** `a, b and c` for descriptions. */
export function listInProse(items: readonly string[], conjunction = 'and'): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} ${conjunction} ${items.at(-1)}`;
}

/** `30 minutes`, `2 days`. */
export function durationInProse(ms: number): string {
  return ms >= DAY ? `${ms / DAY} days` : `${ms / MINUTE} minutes`;
}

/** `BRL on pix or pix_account, MXN on spei, ...`: each fiat currency with its rails, for descriptions. */
export function fiatRailsInProse(
  joiner = ' on ',
  currencies: readonly Currency[] = [...new Set(fiatRails.map((rail) => railDefinitions[rail].currency))],
): string {
  return currencies.map((currency) => `${currency}${joiner}${listInProse(fiatRailsOf(currency), 'or')}`).join(', ');
}
