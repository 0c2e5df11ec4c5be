// Request and response schemas of customers (SPEC 2.2-2.4). Required fields per type:
// - individual: first_name, last_name, email, phone_number, date_of_birth (18 or older), tin, country, address
// - business: business_legal_name, email, phone_number, date_of_incorporation, tax_id, country, address, and
//   beneficiaries (at least one) unless no_ubos is true; website is optional
// - beneficiary: first_name, last_name, date_of_birth, tin, country, share_size, address; email and phone optional
import { z } from 'zod';
import { sandboxScreeningSimulations } from '../domain/screening-review';
import {
  addressSchema,
  ageInYears,
  countryCodeSchema,
  decimalString,
  emailSchema,
  isCountryCode,
  normalisePhoneNumber,
  pastDate,
  pastDateSchema,
  phoneNumberInputSchema,
  text,
  timestampSchema,
  websiteSchema,
} from './common';
import Decimal from 'decimal.js';
import { allSteps, documentSides, documentTypes, rejectionCodes, sidedDocumentTypes } from '../domain/verification';
import { DomainError } from '../domain/errors';

import { customerStatuses, customerTypes, type CustomerStatus, type CustomerType } from '../domain/customers';

export { customerStatuses, customerTypes, type CustomerStatus, type CustomerType };

export const MINIMUM_AGE = 18;
export const MAX_BENEFICIARIES = 25;

const shareSizeSchema = decimalString(4)
  .refine((value) => new Decimal(value).lte(100), 'must be a percentage between 0 and 100')
  .meta({
    description: 'Percentage of shares held, "0" to "100", up to 4 decimals.',
    example: '25.5',
    pattern: '^(100(\\.0{1,4})?|\\d{1,2}(\\.\\d{1,4})?)$',
  });

/**
 * An enum whose canonical values are lower snake_case (the API's convention) and whose upper-case spelling (the
 * SPEC's) is accepted too; the value inside the service stays the upper-case one.
 */
function caseInsensitiveEnum<const T extends string>(values: readonly T[]) {
  const canonical = values.map((value) => value.toLowerCase());
  return z
    .string()
    .refine((value) => (values as readonly string[]).includes(value.toUpperCase()), {
      message: `must be one of: ${canonical.join(', ')}`,
    })
    .transform((value) => value.toUpperCase() as T)
    .meta({ enum: canonical });
}

type PhoneHolder = { phone_number?: unknown; country?: unknown };

/** Adds an issue when a phone number cannot be read, using the holder's country for national formats. */
function checkPhone(holder: PhoneHolder, ctx: z.RefinementCtx, path: PropertyKey[]): void {
  if (typeof holder.phone_number !== 'string') return;
  const country = typeof holder.country === 'string' && isCountryCode(holder.country) ? holder.country : undefined;
  if (normalisePhoneNumber(holder.phone_number, country) === null) {
    ctx.addIssue({
      code: 'custom',
      path: [...path, 'phone_number'],
      message:
        'must be a valid phone number in E.164 format (e.g. +5511987654321) or the national format of the country',
    });
  }
}

/** Run object-level checks even when some fields failed, so one response lists every problem. */
const always = {
  when: (payload: { value: unknown }) => typeof payload.value === 'object' && payload.value !== null,
} as const;

const screeningSimulateSchema = z
  .enum(sandboxScreeningSimulations)
  .optional()
  .meta({
    description:
      'Sandbox only (refused in production): `screening_review` screens the customer as a potential sanctions-list ' +
      'match whatever the name when it is submitted for verification: it stays `under_review` until an operator clears ' +
      'it (the verification goes on) or confirms the match (rejected).',
  });

const beneficiaryRequestSchema = z
  .object({
    first_name: text(100),
    last_name: text(100),
    email: emailSchema.optional(),
    phone_number: phoneNumberInputSchema.optional(),
    date_of_birth: pastDateSchema,
    tin: text(50),
    country: countryCodeSchema,
    share_size: shareSizeSchema,
    address: addressSchema,
  })
  .strict()
  .meta({ id: 'BeneficiaryRequest' });

const individualRequestSchema = z
  .object({
    type: z.literal('individual'),
    first_name: text(100),
    last_name: text(100),
    email: emailSchema,
    phone_number: phoneNumberInputSchema,
    // The description states years at least MINIMUM_AGE + 1 back, all of which are old enough on any day.
    date_of_birth: pastDate(MINIMUM_AGE + 1).refine(
      (value) => ageInYears(value) >= MINIMUM_AGE,
      `the customer must be at least ${MINIMUM_AGE} years old`,
    ),
    tin: text(50).meta({ description: 'Taxpayer identification number.' }),
    country: countryCodeSchema,
    address: addressSchema,
    simulate: screeningSimulateSchema,
  })
  .strict()
  .meta({ id: 'IndividualCustomerRequest' });

const businessRequestSchema = z
  .object({
    type: z.literal('business'),
    business_legal_name: text(200),
    email: emailSchema,
    phone_number: phoneNumberInputSchema,
    date_of_incorporation: pastDateSchema,
    tax_id: text(50),
    website: websiteSchema.optional(),
    country: countryCodeSchema,
    address: addressSchema,
    no_ubos: z
      .boolean()
      .default(false)
      .meta({ description: 'True when no person holds more than 25%; then `beneficiaries` must be empty or absent.' }),
    beneficiaries: z.array(beneficiaryRequestSchema).max(MAX_BENEFICIARIES).default([]).meta({
      description: 'Ultimate beneficial owners and shareholders; required (at least one) unless no_ubos is true.',
    }),
    simulate: screeningSimulateSchema,
  })
  .strict()
  .meta({
    id: 'BusinessCustomerRequest',
    oneOf: [
      {
        title: 'No beneficial owners',
        properties: { no_ubos: { const: true }, beneficiaries: { maxItems: 0 } },
        required: ['no_ubos'],
      },
      {
        title: 'With beneficial owners',
        properties: { no_ubos: { const: false }, beneficiaries: { minItems: 1 } },
        required: ['beneficiaries'],
      },
    ],
  });

export const createCustomerRequestSchema = z
  .discriminatedUnion('type', [individualRequestSchema, businessRequestSchema])
  .superRefine((body, ctx) => {
    checkPhone(body, ctx, []);
    if (body?.type !== 'business') return;
    const beneficiaries: unknown = body.beneficiaries;
    if (!Array.isArray(beneficiaries)) return;
    beneficiaries.forEach((beneficiary: PhoneHolder, index) =>
      checkPhone(beneficiary ?? {}, ctx, ['beneficiaries', index]),
    );
    if (body.no_ubos === true && beneficiaries.length > 0) {
      ctx.addIssue({ code: 'custom', path: ['no_ubos'], message: 'cannot be true when beneficiaries are given' });
    }
    if (body.no_ubos !== true && beneficiaries.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['beneficiaries'],
        message: 'at least one beneficiary is required unless no_ubos is true',
      });
    }
  }, always)
  .transform((body) => {
    // A sum is not a rule of the shape (JSON Schema cannot state it): checked once the shape is valid, 422.
    if (body.type === 'business') {
      const total = body.beneficiaries.reduce((sum, beneficiary) => sum.plus(beneficiary.share_size), new Decimal(0));
      if (total.gt(100)) {
        throw new DomainError(
          'beneficiary_shares_exceed_100',
          `The beneficiaries' share_size values add up to ${total.toString()}%, more than 100%.`,
        );
      }
    }
    return body;
  })
  .transform((body) => ({
    ...body,
    phone_number: normalisePhoneNumber(body.phone_number, body.country) as string,
    ...(body.type === 'business'
      ? {
          beneficiaries: body.beneficiaries.map((beneficiary) => ({
            ...beneficiary,
            phone_number:
              beneficiary.phone_number === undefined
                ? undefined
                : (normalisePhoneNumber(beneficiary.phone_number, beneficiary.country) as string),
          })),
        }
      : {}),
  }))
  .meta({ id: 'CreateCustomerRequest' });

export type CreateCustomerRequest = z.output<typeof createCustomerRequestSchema>;

// ---- responses ----

const beneficiarySchema = z
  .object({
    id: z.uuid(),
    first_name: z.string(),
    last_name: z.string(),
    email: z.string().optional(),
    phone_number: z.string().optional(),
    date_of_birth: z.string(),
    tin: z.string(),
    country: z.string(),
    share_size: z.string(),
    address: addressSchema,
  })
  .meta({ id: 'Beneficiary' });

const commonFields = {
  id: z.uuid(),
  status: z.enum(customerStatuses),
  email: z.string(),
  phone_number: z.string().meta({ description: 'E.164, with the leading +.' }),
  country: z.string(),
  address: addressSchema,
  created_at: timestampSchema,
  updated_at: timestampSchema,
};

const individualFields = {
  type: z.literal('individual'),
  first_name: z.string(),
  last_name: z.string(),
  date_of_birth: z.string(),
  tin: z.string(),
};

const businessFields = {
  type: z.literal('business'),
  business_legal_name: z.string(),
  date_of_incorporation: z.string(),
  tax_id: z.string(),
  website: z.string().optional(),
  no_ubos: z.boolean(),
  beneficiaries: z.array(beneficiarySchema),
};

const verificationSchema = z
  .object({
    verification_link: z
      .string()
      .nullable()
      .meta({ description: 'Hosted verification page; null unless the status is pending or partially_rejected.' }),
    verification_type: z.literal('LIGHT'),
  })
  .meta({ id: 'CustomerVerification' });

const fullFields = { partner_id: z.uuid(), verification: verificationSchema };
const listFields = {
  verification_link: z
    .string()
    .optional()
    .meta({ description: 'Present only while the status is pending or partially_rejected.' }),
};

export const customerSchema = z
  .discriminatedUnion('type', [
    z.object({ ...commonFields, ...individualFields, ...fullFields }).meta({ id: 'IndividualCustomer' }),
    z.object({ ...commonFields, ...businessFields, ...fullFields }).meta({ id: 'BusinessCustomer' }),
  ])
  .meta({ id: 'Customer' });

export const customerListItemSchema = z
  .discriminatedUnion('type', [
    z.object({ ...commonFields, ...individualFields, ...listFields }).meta({ id: 'IndividualCustomerListItem' }),
    z.object({ ...commonFields, ...businessFields, ...listFields }).meta({ id: 'BusinessCustomerListItem' }),
  ])
  .meta({ id: 'CustomerListItem' });

export type CustomerResource = z.input<typeof customerSchema>;
export type CustomerListItem = z.input<typeof customerListItemSchema>;
export type BeneficiaryResource = z.input<typeof beneficiarySchema>;

// ---- documents and verification ----

export const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;

const sidedTypes = sidedDocumentTypes.map((type) => type.toLowerCase());

export const documentMetadataSchema = z
  .object({
    document_type: caseInsensitiveEnum(documentTypes).meta({
      description: 'Lower snake_case (canonical); the upper-case spelling of the SPEC (`PASSPORT`) is accepted too.',
    }),
    document_side: caseInsensitiveEnum(documentSides).optional().meta({
      description:
        'Required for national_id, passport and driver_license; not allowed for other types. `FRONT`/`BACK` are accepted too.',
    }),
    country: countryCodeSchema.optional().meta({ description: 'Issuing country of the document.' }),
    beneficiary_id: z.string().optional().meta({
      description: "Business customers only: one of the customer's beneficiaries, for that person's documents.",
    }),
  })
  .strict()
  .superRefine((metadata, ctx) => {
    const sided = (sidedDocumentTypes as readonly string[]).includes(metadata.document_type);
    if (sided && metadata.document_side === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['document_side'],
        message: `is required for ${metadata.document_type.toLowerCase()}`,
      });
    }
    if (!sided && metadata.document_side !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['document_side'],
        message: `only applies to ${sidedTypes.join(', ')}`,
      });
    }
  })
  .meta({
    id: 'DocumentMetadata',
    oneOf: [
      { properties: { document_type: { enum: sidedTypes } }, required: ['document_side'] },
      {
        properties: { document_type: { not: { enum: sidedTypes } } },
        not: { required: ['document_side'] },
      },
    ],
  });

export type DocumentMetadata = z.output<typeof documentMetadataSchema>;

export const documentUploadSchema = z
  .object({
    file: z.string().meta({
      format: 'binary',
      contentMediaType: 'application/pdf, image/jpeg, image/png, image/webp, image/heic',
      description: `The document: PDF, JPEG, PNG, WEBP or HEIC (recognised by content), not empty, at most ${MAX_DOCUMENT_BYTES / (1024 * 1024)} MB.`,
    }),
    metadata: z.string().meta({
      description: 'JSON string of DocumentMetadata, e.g. {"document_type":"passport","document_side":"front"}.',
      contentMediaType: 'application/json',
      contentSchema: { $ref: '#/components/schemas/DocumentMetadata' },
    }),
  })
  .meta({ id: 'DocumentUpload' });

const rejectedStepSchema = z
  .object({
    name: z.enum(allSteps),
    rejection_code: z.array(z.enum(rejectionCodes)),
    rejection_description: z.string(),
  })
  .meta({ id: 'RejectedVerificationStep' });

export const verificationDetailsSchema = z
  .object({
    customer_id: z.uuid(),
    customer_status: z.enum(customerStatuses),
    verification_steps: z.object({
      pending: z.array(z.enum(allSteps)),
      under_review: z.array(z.enum(allSteps)),
      approved: z.array(z.enum(allSteps)),
      partially_rejected: z.array(rejectedStepSchema),
      rejected: z.array(rejectedStepSchema),
    }),
  })
  .meta({ id: 'VerificationDetails' });

export type VerificationDetails = z.input<typeof verificationDetailsSchema>;

export const sandboxVerificationOutcomeSchema = z
  .object({
    outcome: z.enum(['approved', 'partially_rejected', 'rejected']),
    rejected_steps: z
      .array(
        z
          .object({
            name: z.enum(allSteps),
            rejection_code: z.array(z.enum(rejectionCodes)).min(1),
            rejection_description: text(500),
          })
          .strict(),
      )
      .default([])
      .meta({ description: 'Steps that fail; at least one for partially_rejected and rejected, none for approved.' }),
  })
  .strict()
  .meta({
    oneOf: [
      { properties: { outcome: { const: 'approved' }, rejected_steps: { maxItems: 0 } } },
      {
        properties: { outcome: { enum: ['partially_rejected', 'rejected'] }, rejected_steps: { minItems: 1 } },
        required: ['rejected_steps'],
      },
    ],
  })
  .superRefine((body, ctx) => {
    const steps = Array.isArray(body.rejected_steps) ? body.rejected_steps : [];
    if (!['approved', 'partially_rejected', 'rejected'].includes(body.outcome)) return;
    if (body.outcome === 'approved' && steps.length > 0) {
      ctx.addIssue({ code: 'custom', path: ['rejected_steps'], message: 'must be empty when the outcome is approved' });
    }
    if (body.outcome !== 'approved' && steps.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['rejected_steps'],
        message: `needs at least one step when the outcome is ${body.outcome}`,
      });
    }
  }, always)
  .meta({ id: 'SandboxVerificationOutcome' });
