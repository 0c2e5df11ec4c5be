// HTTP operations on external accounts (SPEC 4.2, 2.5).
import { listSchema } from '../schemas/pagination';
import { defineRoute, idParam } from '../http/route';
import { toExternalAccount } from '../presenters/external-accounts';
import { createExternalAccount, findExternalAccountOrThrow, listExternalAccounts } from '../services/external-accounts';
import { SANDBOX_UNKNOWN_EMAIL_DOMAIN, sandboxFixedPixOwners, sandboxUnknownPixKeys } from '../providers/pix-directory';
import { sandboxDeniedBeneficiaries } from '../providers/screening';
import {
  createExternalAccountRequestSchema,
  externalAccountSchema,
  listExternalAccountsQuerySchema,
} from '../schemas/external-accounts';

const tag = 'External accounts';

const createExternalAccountRoute = defineRoute({
  method: 'post',
  path: '/v1/external-accounts',
  operationId: 'createExternalAccount',
  tag,
  summary: 'Register an external account',
  description:
    'Registers a bank account of a customer on one rail. The customer must be yours (404 otherwise) and not rejected ' +
    '(422 `customer_rejected`); it need not be approved yet. Send `payment_rail` and exactly the matching rail object. ' +
    'Account numbers are verified for real: CPF/CNPJ, CLABE, ABA routing number, IBAN and CBU/CVU check digits, IBAN ' +
    'lengths per country, BIC format. Pix keys are looked up in the pix directory, which adds `bank_name` and ' +
    '`beneficiary_name`; a malformed or unknown key answers 422 `pix_key_invalid` (checked once the rest of the body ' +
    'is valid). The account is screened before the response: `status` is `approved`, or `rejected` (stored and ' +
    'returned with 201 all the same; a rejected account cannot be used). Events: `external_account.created`, then ' +
    '`external_account.approved` or `external_account.rejected`. Registering the same bank account again for the ' +
    'same customer (same rail and identifiers, whatever the name, flag or status) answers 422 ' +
    '`external_account_already_exists` naming the existing account. ' +
    `**Sandbox**: screening rejects the beneficiary names ${sandboxDeniedBeneficiaries.map((name) => `"${name}"`).join(', ')} ` +
    '(ignoring case, accents and extra spaces). The simulated pix directory knows every well-formed key except ' +
    `${sandboxUnknownPixKeys.join(', ')} and any email at ${SANDBOX_UNKNOWN_EMAIL_DOMAIN}; it derives a Brazilian bank ` +
    'and an owner name from the key (the same key always gives the same owner), except ' +
    Object.entries(sandboxFixedPixOwners)
      .map(([key, owner]) => `${key}, owned by "${owner.beneficiaryName}"`)
      .join(', ') +
    '. Production has no pix directory connected yet: pix keys answer 503 `pix_directory_unavailable`.',
  body: createExternalAccountRequestSchema,
  response: { status: 201, description: 'The external account, approved or rejected.', schema: externalAccountSchema },
  errors: [
    'not_found',
    'customer_rejected',
    'pix_key_invalid',
    'pix_directory_unavailable',
    'external_account_already_exists',
    'clabe_bank_code_mismatch',
  ],
  async handler({ body, partner, services }) {
    return createExternalAccount(services, partner.id, body);
  },
});

const listExternalAccountsRoute = defineRoute({
  method: 'get',
  path: '/v1/external-accounts',
  operationId: 'listExternalAccounts',
  tag,
  summary: 'List external accounts',
  description:
    'Newest first; items have the same shape as GET /v1/external-accounts/{id}. `customer_id` keeps one customer’s ' +
    'accounts; a customer that is not yours (or a malformed id) answers 404.',
  query: listExternalAccountsQuerySchema,
  response: {
    status: 200,
    description: 'A page of external accounts.',
    schema: listSchema(externalAccountSchema, 'ExternalAccountList'),
  },
  errors: ['not_found'],
  async handler({ query, partner, services }) {
    const { customer_id: customerId, ...page } = query;
    const { rows, cursor } = await listExternalAccounts(services.prisma, partner.id, page, customerId);
    return { items: rows.map(toExternalAccount), cursor };
  },
});

const getExternalAccount = defineRoute({
  method: 'get',
  path: '/v1/external-accounts/{id}',
  operationId: 'getExternalAccount',
  tag,
  summary: 'Get an external account',
  params: idParam('id', 'External account id.'),
  response: { status: 200, description: 'The external account.', schema: externalAccountSchema },
  errors: ['not_found'],
  async handler({ params, partner, services }) {
    return toExternalAccount(await findExternalAccountOrThrow(services.prisma, partner.id, params.id as string));
  },
});

export const externalAccountRoutes = [createExternalAccountRoute, listExternalAccountsRoute, getExternalAccount];
