// HTTP operations on virtual accounts (SPEC 4.5, 2.7, 3.2).
import { listSchema } from '../schemas/pagination';
import { defineRoute, idParam } from '../http/route';
import { toVirtualAccount } from '../presenters/virtual-accounts';
import {
  cancelVirtualAccount,
  createVirtualAccount,
  findVirtualAccountOrThrow,
  listVirtualAccounts,
} from '../services/virtual-accounts';
import {
  createVirtualAccountRequestSchema,
  listVirtualAccountsQuerySchema,
  updateVirtualAccountRequestSchema,
  virtualAccountSchema,
} from '../schemas/virtual-accounts';

const tag = 'Virtual accounts';

const createVirtualAccountRoute = defineRoute({
  method: 'post',
  path: '/v1/virtual-accounts',
  operationId: 'createVirtualAccount',
  tag,
  summary: 'Create a virtual account',
  description:
    'Bank details in USD (ACH, wire, SWIFT) or EUR (SEPA) for an approved customer (else 422 `customer_not_approved`); ' +
    'fiat received there is converted to `receiver.currency` and delivered to `receiver.wallet_id`, which must be one ' +
    'of that customer’s wallets (else 422 `customer_mismatch`). The response adds `receiver.payment_rail` (the ' +
    'wallet’s chain) and `receiver.address`. Sandbox: the account is approved at once with `deposit_addresses` filled ' +
    '(events virtual_account.created and virtual_account.approved). Production: `under_review` with `deposit_addresses` ' +
    '`{}` until the review decides (event virtual_account.approved, with the deposit details, or virtual_account.rejected); ' +
    'a review without a decision for 14 days (VIRTUAL_ACCOUNT_REVIEW_TIMEOUT_DAYS) ends rejected. ' +
    '`accepts_third_party_payments` is for EUR only; a second EUR account with it true for the same customer is ' +
    '422 `eur_virtual_account_3pp_exists` (rejected accounts do not count).',
  body: createVirtualAccountRequestSchema,
  response: { status: 201, description: 'The virtual account.', schema: virtualAccountSchema },
  errors: ['not_found', 'customer_not_approved', 'customer_mismatch', 'eur_virtual_account_3pp_exists'],
  async handler({ body, partner, services }) {
    return createVirtualAccount(services, partner.id, body);
  },
});

const listVirtualAccountsRoute = defineRoute({
  method: 'get',
  path: '/v1/virtual-accounts',
  operationId: 'listVirtualAccounts',
  tag,
  summary: 'List virtual accounts',
  description: 'Newest first; `customer_id` keeps one customer’s accounts (404 if the customer is not yours).',
  query: listVirtualAccountsQuerySchema,
  response: {
    status: 200,
    description: 'A page of virtual accounts.',
    schema: listSchema(virtualAccountSchema, 'VirtualAccountList'),
  },
  errors: ['not_found'],
  async handler({ query, partner, services }) {
    const { rows, cursor } = await listVirtualAccounts(services.prisma, partner.id, query, query.customer_id);
    return { items: rows.map(toVirtualAccount), cursor };
  },
});

const getVirtualAccount = defineRoute({
  method: 'get',
  path: '/v1/virtual-accounts/{id}',
  operationId: 'getVirtualAccount',
  tag,
  summary: 'Get a virtual account',
  params: idParam('id', 'Virtual account id.'),
  response: { status: 200, description: 'The virtual account.', schema: virtualAccountSchema },
  errors: ['not_found'],
  async handler({ params, partner, services }) {
    return toVirtualAccount(await findVirtualAccountOrThrow(services.prisma, partner.id, params.id as string));
  },
});

const updateVirtualAccount = defineRoute({
  method: 'put',
  path: '/v1/virtual-accounts/{id}',
  operationId: 'cancelVirtualAccount',
  tag,
  summary: 'Cancel a virtual account',
  description:
    'Body `{"status": "cancelled"}`. An account `under_review` or `approved` can be cancelled; answers 200 with the ' +
    'account in `cancelled` (event virtual_account.cancelled), `deposit_addresses` `{}`. A review still pending ' +
    'stops (no more reminders, no decision). Deposits still arriving on the old details are returned to the ' +
    'sender. `rejected` and `cancelled` accounts are final: 422 `virtual_account_cannot_be_cancelled` naming the ' +
    'status. A cancellation and a review decision arriving together have one outcome: whichever the account’s ' +
    'workflow takes first (an approval first: the approved account is then cancelled; a rejection first: refused). ' +
    'A cancelled EUR account no longer counts as the customer’s one account accepting third-party payments.',
  params: idParam('id', 'Virtual account id.'),
  body: updateVirtualAccountRequestSchema,
  response: { status: 200, description: 'The cancelled virtual account.', schema: virtualAccountSchema },
  errors: ['not_found', 'virtual_account_cannot_be_cancelled', 'service_unavailable'],
  async handler({ params, partner, services }) {
    return cancelVirtualAccount(services, partner.id, params.id as string);
  },
});

export const virtualAccountRoutes = [
  createVirtualAccountRoute,
  listVirtualAccountsRoute,
  getVirtualAccount,
  updateVirtualAccount,
];
