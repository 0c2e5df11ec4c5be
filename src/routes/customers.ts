// HTTP operations on customers and their verification (SPEC 4.1, 2.3, 2.4, 3.1).
import { z } from 'zod';
import { readSingleFileUpload } from '../http/multipart';
import { listSchema, paginationQuerySchema } from '../schemas/pagination';
import { defineRoute, idParam } from '../http/route';
import { customerLinkOf, toCustomer, toCustomerListItem } from '../presenters/customers';
import {
  createCustomer,
  findCustomerOrThrow,
  listCustomers,
  setSandboxOutcome,
  startVerification,
  uploadDocument,
  verificationDetailsOf,
  withCurrentLink,
} from '../services/customers';
import {
  createCustomerRequestSchema,
  customerStatuses,
  customerListItemSchema,
  customerSchema,
  documentUploadSchema,
  MAX_DOCUMENT_BYTES,
  sandboxVerificationOutcomeSchema,
  verificationDetailsSchema,
} from '../schemas/customers';

const tag = 'Customers';
const customerIdParam = idParam('customerId', 'Customer id.');

const createCustomerRoute = defineRoute({
  method: 'post',
  path: '/v1/customers',
  operationId: 'createCustomer',
  tag,
  summary: 'Create a customer',
  description:
    'Creates an individual or a business customer in status `pending` and starts its verification workflow. ' +
    'Required fields: individuals need first_name, last_name, email, phone_number, date_of_birth (at least 18 years ago), ' +
    'tin, country and address; businesses need business_legal_name, email, phone_number, date_of_incorporation, tax_id, ' +
    'country, address and at least one beneficiary unless `no_ubos` is true (website is optional). Beneficiaries need ' +
    'first_name, last_name, date_of_birth, tin, country, share_size and address; their shares add up to at most 100%. ' +
    'Addresses need street_line_1, city, postal_code and country (street_line_2 and state are optional). ' +
    'Fields of the other customer type are rejected. Phone numbers are returned in E.164. Event: customer.created.',
  body: createCustomerRequestSchema,
  response: { status: 201, description: 'The customer, with its verification link.', schema: customerSchema },
  errors: ['beneficiary_shares_exceed_100'],
  async handler({ body, partner, services }) {
    return createCustomer(services, partner.id, body);
  },
});

const listCustomersRoute = defineRoute({
  method: 'get',
  path: '/v1/customers',
  operationId: 'listCustomers',
  tag,
  summary: 'List customers',
  description:
    'Newest first. List items carry no partner_id or verification object; `verification_link` is present only for ' +
    'customers in pending or partially_rejected.',
  query: paginationQuerySchema
    .extend({
      status: z.enum(customerStatuses).optional().meta({ description: 'Only customers in this status.' }),
    })
    .strict(),
  response: {
    status: 200,
    description: 'A page of customers.',
    schema: listSchema(customerListItemSchema, 'CustomerList'),
  },
  async handler({ query, partner, services }) {
    const { rows, cursor } = await listCustomers(services, partner.id, query, { status: query.status });
    return { items: rows.map((row) => toCustomerListItem(row, customerLinkOf(services.config, row))), cursor };
  },
});

const getCustomer = defineRoute({
  method: 'get',
  path: '/v1/customers/{id}',
  operationId: 'getCustomer',
  tag,
  summary: 'Get a customer',
  description:
    'The same shape as the create response. `verification.verification_link` is null unless the status is pending or partially_rejected.',
  params: idParam('id', 'Customer id.'),
  response: { status: 200, description: 'The customer.', schema: customerSchema },
  errors: ['not_found'],
  async handler({ params, partner, services }) {
    const found = await findCustomerOrThrow(services.prisma, partner.id, params.id as string);
    const row = await withCurrentLink(services, found);
    return toCustomer(row, customerLinkOf(services.config, row));
  },
});

const uploadCustomerDocument = defineRoute({
  method: 'post',
  path: '/v1/customers/{customerId}/documents',
  operationId: 'uploadCustomerDocument',
  tag,
  summary: 'Upload one verification document',
  description:
    'multipart/form-data with a `file` part and a `metadata` part (JSON string). One document per call; ' +
    'national_id, passport and driver_license need document_side (front, back), one call per side. Individuals ' +
    'upload passport, national_id, driver_license, proof_of_address and selfie. Businesses upload ' +
    'incorporation_articles, incorporation_certificate, incumbency_certificate, shareholder_registry and ' +
    "state_company_registry, and the personal documents of their beneficiaries with that beneficiary's " +
    "`beneficiary_id` (422 `document_not_applicable` otherwise). Values are lower case; the SPEC's upper case " +
    '(`PASSPORT`, `FRONT`) is accepted too. Files are recognised by ' +
    `content: PDF, JPEG, PNG, WEBP or HEIC, not empty, at most ${MAX_DOCUMENT_BYTES / (1024 * 1024)} MB (larger: 413). ` +
    'Accepted while the customer is pending or partially_rejected.',
  params: customerIdParam,
  body: {
    contentType: 'multipart/form-data',
    schema: documentUploadSchema,
    async read(ctx, services) {
      // Known customer first: an upload for nothing is refused before its body is read.
      await findCustomerOrThrow(services.prisma, ctx.state.partner.id, String(ctx.params.customerId));
      return readSingleFileUpload(ctx, {
        fileField: 'file',
        textFields: ['metadata'],
        maxFileBytes: MAX_DOCUMENT_BYTES,
        stagingDir: services.documentStore.stagingDir,
      });
    },
  },
  response: { status: 204, description: 'The document was stored.' },
  errors: [
    'not_found',
    'unsupported_media_type',
    'payload_too_large',
    'document_not_applicable',
    'customer_rejected',
    'customer_already_approved',
    'customer_verification_in_progress',
  ],
  async handler({ params, body, partner, services }) {
    const customer = await findCustomerOrThrow(services.prisma, partner.id, params.customerId as string);
    await uploadDocument(services, customer, body);
  },
});

const checkCustomer = defineRoute({
  method: 'post',
  path: '/v1/customers/{customerId}/check',
  operationId: 'checkCustomer',
  tag,
  summary: 'Start verification',
  description:
    'Moves a pending (or partially_rejected, after new documents) customer to under_review. Minimum documents: ' +
    'individuals a complete identity document (PASSPORT FRONT, or NATIONAL_ID / DRIVER_LICENSE FRONT and BACK) and ' +
    'PROOF_OF_ADDRESS; businesses INCORPORATION_CERTIFICATE, INCORPORATION_ARTICLES, SHAREHOLDER_REGISTRY and a complete ' +
    'identity document for each beneficiary holding more than 25%. After a partial rejection, every rejected step except ' +
    'CUSTOMER_DATA needs a new document. The result arrives by webhook or by polling verification-details. No body.',
  params: customerIdParam,
  response: { status: 204, description: 'Verification started.' },
  errors: [
    'not_found',
    'verification_documents_missing',
    'customer_rejected',
    'customer_already_approved',
    'customer_verification_in_progress',
  ],
  async handler({ params, partner, services }) {
    const customer = await findCustomerOrThrow(services.prisma, partner.id, params.customerId as string);
    await startVerification(services, customer);
  },
});

const getVerificationDetails = defineRoute({
  method: 'get',
  path: '/v1/customers/{customerId}/verification-details',
  operationId: 'getVerificationDetails',
  tag,
  summary: 'Verification status by step',
  description:
    'Steps of individuals: CUSTOMER_DATA, IDENTITY_DOCUMENT, PROOF_OF_ADDRESS. Steps of businesses: CUSTOMER_DATA, ' +
    'INCORPORATION_CERT, INCORPORATION_ARTICLES, SHAREHOLDER_REGISTRY, CUSTOMER_BENEFICIARIES. Every step is in exactly one list.',
  params: customerIdParam,
  response: { status: 200, description: 'Verification details.', schema: verificationDetailsSchema },
  errors: ['not_found'],
  async handler({ params, partner, services }) {
    const customer = await findCustomerOrThrow(services.prisma, partner.id, params.customerId as string);
    return verificationDetailsOf(services.prisma, customer);
  },
});

const setSandboxVerificationOutcome = defineRoute({
  method: 'post',
  path: '/v1/sandbox/customers/{customerId}/verification-outcome',
  operationId: 'setSandboxVerificationOutcome',
  tag: 'Sandbox',
  environments: ['sandbox'],
  summary: 'Sandbox: force a verification outcome',
  description:
    'Sandbox only (absent in production). Decides the review of a customer under review at once; for a pending or ' +
    'partially_rejected customer it sets the outcome of the next review (applied as soon as check is called). ' +
    'Without it, the sandbox approves every review after SANDBOX_VERIFICATION_DELAY_SECONDS.',
  params: customerIdParam,
  body: sandboxVerificationOutcomeSchema,
  response: { status: 200, description: 'Verification details after the call.', schema: verificationDetailsSchema },
  errors: ['not_found', 'customer_rejected', 'customer_already_approved', 'invalid_verification_outcome'],
  async handler({ params, body, partner, services }) {
    const customer = await findCustomerOrThrow(services.prisma, partner.id, params.customerId as string);
    await setSandboxOutcome(services, customer, body);
    const current = await findCustomerOrThrow(services.prisma, partner.id, customer.id);
    return verificationDetailsOf(services.prisma, current);
  },
});

export const customerRoutes = [
  createCustomerRoute,
  listCustomersRoute,
  getCustomer,
  uploadCustomerDocument,
  checkCustomer,
  getVerificationDetails,
  setSandboxVerificationOutcome,
];
