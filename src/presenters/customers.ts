// Customers as the API shows them: the full resource (create, get and event payloads), the list
// item and the verification details. Pure: rows in, API shapes out.
import type { Prisma } from '../db';
import { RejectionCode, stepsFor, VerificationStep } from '../domain/verification';
import type { Address } from '../schemas/common';
import type {
  BeneficiaryResource,
  CustomerListItem,
  CustomerResource,
  CustomerStatus,
  CustomerType,
  VerificationDetails,
} from '../schemas/customers';

export type CustomerRow = Prisma.CustomerGetPayload<{ include: { beneficiaries: true } }>;
export const withBeneficiaries = { beneficiaries: { orderBy: { position: 'asc' } } } as const;
export type VerificationStepRow = Prisma.VerificationStepGetPayload<object>;

const dateOnly = (date: Date): string => date.toISOString().slice(0, 10);

/** The hosted verification page is only offered while the customer has something to submit. */
export function verificationLinkOf(row: CustomerRow, publicBaseUrl: string): string | null {
  return row.status === 'pending' || row.status === 'partially_rejected'
    ? `${publicBaseUrl}/verify/${row.verificationToken}`
    : null;
}

function beneficiaryOf(row: CustomerRow['beneficiaries'][number]): BeneficiaryResource {
  return {
    id: row.id,
    first_name: row.firstName,
    last_name: row.lastName,
    ...(row.email !== null ? { email: row.email } : {}),
    ...(row.phoneNumber !== null ? { phone_number: row.phoneNumber } : {}),
    date_of_birth: dateOnly(row.dateOfBirth),
    tin: row.tin,
    country: row.country,
    share_size: row.shareSize.toString(),
    address: row.address as unknown as Address,
  };
}

function baseOf(row: CustomerRow) {
  const common = {
    id: row.id,
    type: row.type as CustomerType,
    status: row.status as CustomerStatus,
    email: row.email,
    phone_number: row.phoneNumber,
    country: row.country,
    address: row.address as unknown as Address,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
  if ((row.type as CustomerType) === 'individual') {
    return {
      ...common,
      type: 'individual' as const,
      first_name: row.firstName ?? '',
      last_name: row.lastName ?? '',
      date_of_birth: row.dateOfBirth ? dateOnly(row.dateOfBirth) : '',
      tin: row.tin ?? '',
    };
  }
  return {
    ...common,
    type: 'business' as const,
    business_legal_name: row.businessLegalName ?? '',
    date_of_incorporation: row.dateOfIncorporation ? dateOnly(row.dateOfIncorporation) : '',
    tax_id: row.taxId ?? '',
    ...(row.website !== null ? { website: row.website } : {}),
    no_ubos: row.noUbos ?? false,
    beneficiaries: row.beneficiaries.map(beneficiaryOf),
  };
}

export function toCustomer(row: CustomerRow, publicBaseUrl: string): CustomerResource {
  return {
    ...baseOf(row),
    partner_id: row.partnerId,
    verification: { verification_link: verificationLinkOf(row, publicBaseUrl), verification_type: 'LIGHT' },
  };
}

export function toCustomerListItem(row: CustomerRow, publicBaseUrl: string): CustomerListItem {
  const link = verificationLinkOf(row, publicBaseUrl);
  return { ...baseOf(row), ...(link !== null ? { verification_link: link } : {}) };
}

/** The customer's verification steps grouped by state, in the order of the customer type's steps. */
export function toVerificationDetails(customer: CustomerRow, stepRows: VerificationStepRow[]): VerificationDetails {
  const order = stepsFor(customer.type as CustomerType);
  const steps = [...stepRows].sort(
    (a, b) => order.indexOf(a.name as VerificationStep) - order.indexOf(b.name as VerificationStep),
  );
  const named = (state: string) =>
    steps.filter((step) => step.state === state).map((step) => step.name as VerificationStep);
  const rejected = (state: string) =>
    steps
      .filter((step) => step.state === state)
      .map((step) => ({
        name: step.name as VerificationStep,
        rejection_code: step.rejectionCodes as RejectionCode[],
        rejection_description: step.rejectionDescription ?? '',
      }));
  return {
    customer_id: customer.id,
    customer_status: customer.status as CustomerStatus,
    verification_steps: {
      pending: named('pending'),
      under_review: named('under_review'),
      approved: named('approved'),
      partially_rejected: rejected('partially_rejected'),
      rejected: rejected('rejected'),
    },
  };
}
