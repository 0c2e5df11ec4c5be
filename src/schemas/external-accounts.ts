// Request and response schemas of external accounts (SPEC 2.5, 4.2). Each rail's numbers are checked
// for real (check digits, country formats) and returned normalised; see the descriptions below.
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { z } from 'zod';
import { sandboxScreeningSimulations } from '../domain/screening-review';
import { parseBrazilianTaxId, pixKeyTypes } from '../domain/brazil';
import { checkClabe } from '../domain/clabe';
import { externalAccountStatuses } from '../domain/external-accounts';
import { alpha2Of, checkIban, sepaCountries } from '../domain/iban';
import { type ExternalAccountRail, externalAccountRails, listInProse, railDefinitions } from '../domain/rails';
import { paginationQuerySchema } from './pagination';
import { DomainError } from '../domain/errors';
import { addressSchema, NON_BLANK_PATTERN, text, timestampSchema } from './common';

type Check = { ok: true } | { ok: false; reason: string };

/** A string field whose value must pass a domain check; the check's reason is the detail message. */
function checkedString(check: (value: string) => Check) {
  return z
    .string()
    .trim()
    .superRefine((value, ctx) => {
      const result = check(value);
      if (!result.ok) ctx.addIssue({ code: 'custom', message: result.reason });
    });
}

/** Run object-level checks even when some fields failed, so one response lists every problem. */
const always = {
  when: (payload: { value: unknown }) => typeof payload.value === 'object' && payload.value !== null,
} as const;

/** A field required by another field's value: reported like any absent field (missing_param). */
function requireField(ctx: z.RefinementCtx, field: string): void {
  ctx.addIssue({ code: 'invalid_type', expected: 'string', input: undefined, path: [field], message: 'is required' });
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value.trim() : undefined);

/** Field examples of the description: each rail definition's sandbox example account. */
const examples = {
  pix: railDefinitions.pix.externalAccount.example,
  pix_account: railDefinitions.pix_account.externalAccount.example,
  spei: railDefinitions.spei.externalAccount.example,
  wire: railDefinitions.wire.externalAccount.example,
  sepa: railDefinitions.sepa.externalAccount.example,
  cvu: railDefinitions.cvu.externalAccount.example,
};

const beneficiaryTypes = ['individual', 'business'] as const;
export const pixAccountTypes = ['checking', 'savings', 'payment', 'salary'] as const;
export const speiProtocols = ['clabe', 'phonenumber'] as const;

const beneficiaryName = text(200).meta({ description: 'Name of the account holder.' });
const bankName = text(200).meta({ description: 'Name of the bank holding the account.' });

// ---- requests, one rail object each ----

const pixRequestSchema = z
  .object({
    key: z
      .string()
      .trim()
      .min(1)
      .meta({
        description:
          'Pix key: a CPF (11 digits) or CNPJ (14 characters), bare or with the official mask; an email (at most 77 ' +
          'characters); a Brazilian phone number with +55 (e.g. +5511987654321); or a random key (UUID). A key that ' +
          'has none of these formats, or that the pix directory does not know, answers 422 `pix_key_invalid`. ' +
          'Returned in the directory form (digits only, lower case, E.164).',
        example: examples.pix.key,
        pattern: NON_BLANK_PATTERN,
      }),
  })
  .strict()
  .meta({ id: 'PixRequest' });

const taxIdSchema = checkedString((value) =>
  parseBrazilianTaxId(value)
    ? { ok: true }
    : { ok: false, reason: 'must be a CPF (11 digits) or CNPJ (14 characters) with valid check digits' },
).transform((value) => parseBrazilianTaxId(value)?.value as string);

const pixAccountRequestSchema = z
  .object({
    bank_code: z
      .string()
      .trim()
      .regex(/^(\d{3}|\d{8})$/, 'must be a 3-digit bank code (COMPE) or an 8-digit ISPB')
      .meta({
        description: 'COMPE bank code (3 digits, e.g. 001) or ISPB (8 digits, e.g. 00000000).',
        example: examples.pix_account.bank_code,
      }),
    branch_code: z
      .string()
      .trim()
      .regex(/^\d{4}$/, 'must be the 4-digit branch (agência) number, without its check digit')
      .meta({
        description: 'Branch (agência), 4 digits without check digit.',
        example: examples.pix_account.branch_code,
      }),
    bank_account_number: z
      .string()
      .trim()
      .regex(/^\d{1,19}-?[0-9Xx]$/, 'must be the account number with its check digit, e.g. 123456-7')
      .transform((value) => value.replace('-', '').toUpperCase())
      .meta({
        description:
          'Account number with its check digit last (`123456-7` or `1234567`; Banco do Brasil check digit may be X). Returned without the hyphen.',
        example: '123456-7',
      }),
    account_type: z.enum(pixAccountTypes).meta({
      description:
        '`checking` (conta corrente), `savings` (poupança), `payment` (conta de pagamento) or `salary` (conta salário).',
    }),
    beneficiary_document: taxIdSchema.meta({
      format: 'cpf-cnpj',
      description: "Holder's CPF or CNPJ (check digits verified), bare or with the official mask; returned bare.",
      example: examples.pix_account.beneficiary_document,
    }),
    beneficiary_name: beneficiaryName,
  })
  .strict()
  .meta({ id: 'PixAccountRequest' });

/** Mexican phone number (10 digits, or E.164 with +52) to E.164, or null. */
export function normaliseMexicanPhone(raw: string): string | null {
  const trimmed = raw.trim();
  if (!/^\+?[\d\s().-]{10,20}$/.test(trimmed)) return null;
  const phone = parsePhoneNumberFromString(trimmed, 'MX');
  return phone && phone.country === 'MX' && phone.isValid() ? phone.number : null;
}

const speiRequestSchema = z
  .object({
    beneficiary_name: beneficiaryName,
    protocol: z.enum(speiProtocols).meta({
      description:
        'How the account is identified: `clabe` (the `clabe` field) or `phonenumber` (the `phone_number` field, a ' +
        'mobile number linked to an account at `bank_code`). Debit card numbers are not accepted: storing them would ' +
        'bring cardholder-data (PCI DSS) obligations; use the CLABE of the card account instead.',
    }),
    bank_code: z
      .string()
      .trim()
      .regex(/^\d{3}$/, 'must be the 3-digit bank code (e.g. 002)')
      .meta({
        description: "3-digit bank code; with protocol clabe it must be the CLABE's first three digits.",
        example: examples.spei.bank_code,
      }),
    clabe: checkedString(railDefinitions.spei.externalAccount.checks.clabe).optional().meta({
      format: 'clabe',
      description: '18-digit CLABE with a valid check digit. Required with protocol clabe, not allowed otherwise.',
      example: examples.spei.clabe,
    }),
    phone_number: z.string().optional().meta({
      format: 'mx-phone',
      description:
        'Mexican mobile number, 10 digits or E.164 (+52...). Required with protocol phonenumber, not allowed otherwise. Returned in E.164.',
      example: '+525512345678',
    }),
    bank_name: bankName,
  })
  .strict()
  .superRefine((spei, ctx) => {
    const protocol = spei.protocol as unknown;
    const clabe = str(spei.clabe);
    const phone = spei.phone_number as unknown;
    if (protocol === 'clabe') {
      if (spei.clabe === undefined) requireField(ctx, 'clabe');
      if (phone !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['phone_number'],
          message: 'is only allowed when protocol is phonenumber',
        });
    }
    if (protocol === 'phonenumber') {
      if (phone === undefined) {
        requireField(ctx, 'phone_number');
      } else if (typeof phone !== 'string' || normaliseMexicanPhone(phone) === null) {
        ctx.addIssue({
          code: 'custom',
          path: ['phone_number'],
          message: 'must be a valid Mexican phone number: 10 digits or E.164 with +52 (e.g. +525512345678)',
        });
      }
      if (spei.clabe !== undefined)
        ctx.addIssue({ code: 'custom', path: ['clabe'], message: 'is only allowed when protocol is clabe' });
    }
  }, always)
  .transform((spei) => {
    // Two fields that must agree: not a rule JSON Schema can state, so checked once the shape is valid (422).
    const check = spei.clabe === undefined ? undefined : checkClabe(spei.clabe);
    if (check?.ok && spei.bank_code !== check.bankCode) {
      throw new DomainError(
        'clabe_bank_code_mismatch',
        `spei.bank_code ${spei.bank_code} does not match the CLABE, whose bank code is ${check.bankCode}.`,
      );
    }
    return {
      ...spei,
      phone_number: spei.phone_number === undefined ? undefined : (normaliseMexicanPhone(spei.phone_number) as string),
    };
  })
  .meta({
    id: 'SpeiRequest',
    oneOf: [
      { properties: { protocol: { const: 'clabe' } }, required: ['clabe'], not: { required: ['phone_number'] } },
      { properties: { protocol: { const: 'phonenumber' } }, required: ['phone_number'], not: { required: ['clabe'] } },
    ],
  });

const wireRequestSchema = z
  .object({
    beneficiary_name: beneficiaryName,
    beneficiary_type: z.enum(beneficiaryTypes),
    bank_name: bankName,
    bank_account_number: z
      .string()
      .trim()
      .regex(/^\d{4,17}$/, 'must be a US bank account number of 4 to 17 digits')
      .meta({ description: 'US account number, 4 to 17 digits.', example: examples.wire.bank_account_number }),
    routing_number: checkedString(railDefinitions.wire.externalAccount.checks.routing_number).meta({
      format: 'aba-routing-number',
      description:
        'ABA routing number: 9 digits with a valid checksum, starting with 01-12, 21-32 or 61-72 (a bank or thrift).',
      example: examples.wire.routing_number,
    }),
    beneficiary_address: addressSchema,
  })
  .strict()
  .meta({ id: 'WireRequest' });

const sepaRequestSchema = z
  .object({
    beneficiary_type: z.enum(beneficiaryTypes),
    beneficiary_name: beneficiaryName,
    bank_name: bankName,
    iban: checkedString(railDefinitions.sepa.externalAccount.checks.iban)
      .transform((value) => {
        const check = checkIban(value);
        return check.ok ? check.iban : value;
      })
      .meta({
        format: 'iban',
        description:
          "IBAN, with or without spaces, any case: the country's length and format, the mod-97 check digits and the " +
          'national check digits where a country has them are verified. Swiss QR-IBANs are refused. Returned without ' +
          'spaces, upper case. Its country must be `country`.',
        example: examples.sepa.iban,
      }),
    bic: checkedString(railDefinitions.sepa.externalAccount.checks.bic)
      .transform((value) => value.toUpperCase())
      .meta({
        format: 'bic',
        description: 'BIC (SWIFT code) of the bank, 8 or 11 characters; returned upper case.',
        example: examples.sepa.bic,
      }),
    country: z.enum(sepaCountries).meta({
      description: "Country of the account (ISO alpha-3, a SEPA country); the IBAN's country code must match.",
    }),
    beneficiary_address: addressSchema,
  })
  .strict()
  .superRefine((sepa, ctx) => {
    const iban = str(sepa.iban);
    const check = iban === undefined ? undefined : checkIban(iban);
    const country = sepa.country as unknown;
    if (check?.ok && typeof country === 'string' && (sepaCountries as readonly string[]).includes(country)) {
      if (alpha2Of(country) !== check.countryAlpha2) {
        ctx.addIssue({
          code: 'custom',
          path: ['iban'],
          message: `is an IBAN of ${check.countryAlpha2}, not of ${country} (country)`,
        });
      }
    }
  }, always)
  .meta({
    id: 'SepaRequest',
    // The IBAN's first two letters (any case) are the country's alpha-2 code.
    oneOf: sepaCountries.map((country) => {
      const alpha2 = alpha2Of(country) as string;
      const letter = (char: string) => `[${char}${char.toLowerCase()}]`;
      return {
        properties: {
          country: { const: country },
          iban: { pattern: `^\\s*${letter(alpha2[0] as string)}${letter(alpha2[1] as string)}` },
        },
      };
    }),
  });

const cvuRequestSchema = z
  .object({
    beneficiary_name: beneficiaryName,
    cvu: checkedString(railDefinitions.cvu.externalAccount.checks.cvu).optional().meta({
      format: 'cvu',
      description:
        'CVU (22 digits, valid check digits, starts with 000), an account at a payment provider. Exactly one of cvu and cbu.',
      example: examples.cvu.cvu,
    }),
    cbu: checkedString(railDefinitions.cvu.externalAccount.checks.cbu).optional().meta({
      format: 'cbu',
      description: 'CBU (22 digits, valid check digits), a bank account. Exactly one of cvu and cbu.',
      example: '2850590940090418135201',
    }),
  })
  .strict()
  .superRefine((cvu, ctx) => {
    if (cvu.cvu !== undefined && cvu.cbu !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['cbu'],
        message: 'cannot be given together with cvu: send exactly one of them',
      });
    }
    if (cvu.cvu === undefined && cvu.cbu === undefined) {
      ctx.addIssue({ code: 'custom', path: ['cvu'], message: 'send exactly one of cvu and cbu' });
    }
  }, always)
  .meta({ id: 'CvuRequest', oneOf: [{ required: ['cvu'] }, { required: ['cbu'] }] });

const commonRequestFields = {
  customer_id: z.string().meta({ description: 'The customer who owns the account (404 if it is not one of yours).' }),
  account_name: text(100).meta({ description: 'Your label for the account.', example: 'Main account' }),
  is_third_party: z
    .boolean()
    .default(false)
    .meta({ description: 'True when the account belongs to someone other than the customer. Default false.' }),
  simulate: z
    .enum(sandboxScreeningSimulations)
    .optional()
    .meta({
      description:
        'Sandbox only (refused in production): `screening_review` screens the holder as a potential sanctions-list ' +
        'match whatever the name: the account is created `under_review` (events external_account.created, ' +
        'external_account.under_review) until an operator clears it (approved) or confirms the match (rejected).',
    }),
};

/** Each external account rail's request and response objects (a rail without them does not compile). */
const railObjectSchemas = {
  pix: { request: pixRequestSchema, response: () => pixSchema },
  pix_account: { request: pixAccountRequestSchema, response: () => pixAccountSchema },
  spei: { request: speiRequestSchema, response: () => speiSchema },
  wire: { request: wireRequestSchema, response: () => wireSchema },
  sepa: { request: sepaRequestSchema, response: () => sepaSchema },
  cvu: { request: cvuRequestSchema, response: () => cvuSchema },
} satisfies Record<ExternalAccountRail, { request: z.ZodType; response: () => z.ZodType }>;

type RailObjectSchemas = typeof railObjectSchemas;

/** `pix_account` -> `PixAccount`: the rail's part of schema ids. */
const pascalCase = (rail: string) =>
  rail
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');

function createRequestMember<R extends ExternalAccountRail>(rail: R) {
  const shape = { ...commonRequestFields, payment_rail: z.literal(rail), [rail]: railObjectSchemas[rail].request };
  return z
    .object(
      shape as typeof commonRequestFields & { payment_rail: z.ZodLiteral<R> } & Record<
          R,
          RailObjectSchemas[R]['request']
        >,
    )
    .strict()
    .meta({ id: `Create${pascalCase(rail)}ExternalAccount` });
}

type CreateRequestMember = {
  [R in ExternalAccountRail]: ReturnType<typeof createRequestMember<R>>;
}[ExternalAccountRail];

export const createExternalAccountRequestSchema = z
  .discriminatedUnion(
    'payment_rail',
    externalAccountRails.map((rail) => createRequestMember(rail)) as unknown as [
      CreateRequestMember,
      ...CreateRequestMember[],
    ],
  )
  .meta({
    id: 'CreateExternalAccountRequest',
    description:
      `Exactly the rail object named by \`payment_rail\` (${listInProse(externalAccountRails, 'or')}): a missing one is ` +
      '`missing_param`, another rail object is `invalid_param`.',
  });

export type CreateExternalAccountRequest = z.output<typeof createExternalAccountRequestSchema>;

// ---- responses ----

const pixSchema = z
  .object({
    key: z.string().meta({ description: 'The key in directory form.' }),
    key_type: z.enum(pixKeyTypes).meta({ description: 'What the key is: cpf, cnpj, email, phone or random.' }),
    bank_name: z.string().meta({ description: 'Institution of the account, from the pix directory.' }),
    beneficiary_name: z.string().meta({ description: "Account holder's name, from the pix directory." }),
  })
  .meta({ id: 'Pix' });

const pixAccountSchema = z
  .object({
    bank_code: z.string(),
    branch_code: z.string(),
    bank_account_number: z.string(),
    account_type: z.enum(pixAccountTypes),
    beneficiary_document: z.string(),
    beneficiary_name: z.string(),
  })
  .meta({ id: 'PixAccount' });

const speiSchema = z
  .object({
    beneficiary_name: z.string(),
    protocol: z.enum(speiProtocols),
    bank_code: z.string(),
    clabe: z.string().optional().meta({ description: 'Present with protocol clabe.' }),
    phone_number: z.string().optional().meta({ description: 'Present with protocol phonenumber (E.164).' }),
    bank_name: z.string(),
  })
  .meta({ id: 'Spei' });

const wireSchema = z
  .object({
    beneficiary_name: z.string(),
    beneficiary_type: z.enum(beneficiaryTypes),
    bank_name: z.string(),
    bank_account_number: z.string(),
    routing_number: z.string(),
    beneficiary_address: addressSchema,
  })
  .meta({ id: 'Wire' });

const sepaSchema = z
  .object({
    beneficiary_type: z.enum(beneficiaryTypes),
    beneficiary_name: z.string(),
    bank_name: z.string(),
    iban: z.string(),
    bic: z.string(),
    country: z.enum(sepaCountries),
    beneficiary_address: addressSchema,
  })
  .meta({ id: 'Sepa' });

const cvuSchema = z
  .object({
    beneficiary_name: z.string(),
    cvu: z.string().optional().meta({ description: 'Present when the account was registered by CVU.' }),
    cbu: z.string().optional().meta({ description: 'Present when the account was registered by CBU.' }),
  })
  .meta({ id: 'Cvu' });

const commonResponseFields = {
  id: z.uuid(),
  customer_id: z.uuid(),
  account_name: z.string(),
  status: z.enum(externalAccountStatuses).meta({
    description:
      'Decided by screening when the account is created: approved, or rejected (the account cannot be used).',
  }),
  is_third_party: z.boolean(),
  created_at: timestampSchema,
  updated_at: timestampSchema,
};

function responseMember<R extends ExternalAccountRail>(rail: R) {
  const shape = { ...commonResponseFields, payment_rail: z.literal(rail), [rail]: railObjectSchemas[rail].response() };
  return z
    .object(
      shape as typeof commonResponseFields & { payment_rail: z.ZodLiteral<R> } & Record<
          R,
          ReturnType<RailObjectSchemas[R]['response']>
        >,
    )
    .meta({ id: `${pascalCase(rail)}ExternalAccount` });
}

type ResponseMember = { [R in ExternalAccountRail]: ReturnType<typeof responseMember<R>> }[ExternalAccountRail];

export const externalAccountSchema = z
  .discriminatedUnion(
    'payment_rail',
    externalAccountRails.map((rail) => responseMember(rail)) as unknown as [ResponseMember, ...ResponseMember[]],
  )
  .meta({ id: 'ExternalAccount' });

export type ExternalAccountResource = z.input<typeof externalAccountSchema>;
export type PixDetails = z.input<typeof pixSchema>;

export const listExternalAccountsQuerySchema = paginationQuerySchema
  .extend({
    customer_id: z
      .string()
      .optional()
      .meta({ description: "Only this customer's accounts; a customer that is not yours answers 404." }),
  })
  .strict();
