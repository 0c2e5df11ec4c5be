// HTTP operations on wallets. The SPEC lists wallet operations as not shown; these are ours.
import { listSchema } from '../schemas/pagination';
import { defineRoute, idParam } from '../http/route';
import { toWallet } from '../presenters/wallets';
import { createWallet, findWalletOrThrow, fundSandboxWallet, listWallets } from '../services/wallets';
import { createWalletRequestSchema, listWalletsQuerySchema, walletSchema } from '../schemas/wallets';
import { sandboxFundWalletRequestSchema } from '../schemas/wallet-transfers';

const tag = 'Wallets';

const createWalletRoute = defineRoute({
  method: 'post',
  path: '/v1/wallets',
  operationId: 'createWallet',
  tag,
  summary: 'Create a wallet',
  description:
    'Creates a service-managed wallet on `ethereum` or `solana` for an approved customer (an address can receive ' +
    'funds as soon as it exists, so a customer that is not approved gets 422 `customer_not_approved`). The service ' +
    'generates the address and keeps the keys; no key material is ever returned. Balances of USDC and USDT start at ' +
    '"0.000000". No webhook event exists for wallets.',
  body: createWalletRequestSchema,
  response: { status: 201, description: 'The wallet.', schema: walletSchema },
  errors: ['not_found', 'customer_not_approved'],
  async handler({ body, partner, services }) {
    return createWallet(services, partner.id, body);
  },
});

const listWalletsRoute = defineRoute({
  method: 'get',
  path: '/v1/wallets',
  operationId: 'listWallets',
  tag,
  summary: 'List wallets',
  description: 'Newest first; `customer_id` keeps one customer’s wallets (404 if the customer is not yours).',
  query: listWalletsQuerySchema,
  response: { status: 200, description: 'A page of wallets.', schema: listSchema(walletSchema, 'WalletList') },
  errors: ['not_found'],
  async handler({ query, partner, services }) {
    const { rows, cursor } = await listWallets(services.prisma, partner.id, query, query.customer_id);
    return { items: rows.map(toWallet), cursor };
  },
});

const getWallet = defineRoute({
  method: 'get',
  path: '/v1/wallets/{id}',
  operationId: 'getWallet',
  tag,
  summary: 'Get a wallet',
  description:
    'The wallet with its current balances: per stablecoin, what the wallet can spend, from the ledger (decimal strings, ' +
    '6 places). Money on its way out (a pending or processing wallet transfer) is already deducted; a failed transfer ' +
    'puts it back. A balance is never negative.',
  params: idParam('id', 'Wallet id.'),
  response: { status: 200, description: 'The wallet.', schema: walletSchema },
  errors: ['not_found'],
  async handler({ params, partner, services }) {
    return toWallet(await findWalletOrThrow(services.prisma, partner.id, params.id as string));
  },
});

const fundWallet = defineRoute({
  method: 'post',
  path: '/v1/sandbox/wallets/{id}/fund',
  operationId: 'fundSandboxWallet',
  tag,
  environments: ['sandbox'],
  summary: 'Add test stablecoin to a wallet (sandbox)',
  description:
    'Sandbox only (404 in production): credits `amount` of `currency` to the wallet, posted in the ledger from the ' +
    'sandbox funding account, so the wallet can make transfers. Answers 200 with the wallet and its new balances. ' +
    'Production wallets are funded by pay-ins and deposits to their address.',
  params: idParam('id', 'Wallet id.'),
  body: sandboxFundWalletRequestSchema,
  response: { status: 200, description: 'The wallet with its balances.', schema: walletSchema },
  errors: ['not_found'],
  async handler({ params, body, partner, services }) {
    return fundSandboxWallet(services, partner.id, params.id as string, body);
  },
});

export const walletRoutes = [createWalletRoute, listWalletsRoute, getWallet, fundWallet];
