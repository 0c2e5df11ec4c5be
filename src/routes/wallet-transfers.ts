// HTTP operations on wallet transfers (SPEC 1: stablecoin between wallets, no quote). The create path
// `POST /v1/wallet-transfer` is fixed by the issue (like /v1/payin, /v1/payout); the resource reads
// under the plural `/v1/wallet-transfers`.
import { listSchema } from '../schemas/pagination';
import { defineRoute, idParam } from '../http/route';
import { toWalletTransfer } from '../presenters/wallet-transfers';
import { createWalletTransfer, findWalletTransferOrThrow, listWalletTransfers } from '../services/wallet-transfers';
import {
  createWalletTransferRequestSchema,
  listWalletTransfersQuerySchema,
  walletTransferSchema,
} from '../schemas/wallet-transfers';

const tag = 'Wallet transfers';

export const walletTransferLifecycle = `
**Lifecycle**: \`pending\` (created: \`amount\` + \`network_fee\` are taken from the source wallet's balance at once, so
they can no longer be spent twice) -> \`processing\` (being sent on chain) -> \`completed\` (\`tx_hash\` set; the amount
is credited to the destination wallet, or has left to the outside address). Or \`failed\` (\`failure_reason\`
\`network_rejected\` or \`network_unavailable\`): amount and fee are returned to the source wallet in full.

**Network fee**: 0 between two of your wallets; to any other address (including another partner's wallet) the chain's
fee for one transfer (sandbox: ethereum 1, solana 0.01 in the transferred stablecoin), charged on top of \`amount\`.

**Events** (the full transfer as \`event_resource\`): walletTransfer.created (status \`pending\`),
walletTransfer.completed, walletTransfer.failed. \`processing\` has no event (SPEC 6 defines none); GET shows it.`.trim();

const createWalletTransferRoute = defineRoute({
  method: 'post',
  path: '/v1/wallet-transfer',
  operationId: 'createWalletTransfer',
  tag,
  summary: 'Transfer stablecoin from a wallet',
  description:
    'Moves `amount` of `currency` from `from_wallet_id` to another of your wallets (`to_wallet_id`) or to an address ' +
    '(`to_address`) on the same chain. No quote: nothing is converted. Answers 201 with the transfer in `pending`; ' +
    'event walletTransfer.created.\n\n' +
    '**Checks**, each refusing with nothing created: the wallets are yours (404); exactly one destination (400); ' +
    'the destination is not the source (`wallet_transfer_same_wallet`) and is on the source’s chain ' +
    '(`wallet_transfer_chain_mismatch`: another chain’s wallet, or another chain’s address format); `to_address` is ' +
    'well formed for the chain (400); `amount` has at most 6 decimals (400); the source wallet’s `currency` balance ' +
    'covers `amount` + `network_fee` (`insufficient_funds`). Concurrent transfers from one wallet are decided one at ' +
    'a time on its balance: a balance never goes below zero.\n\n' +
    walletTransferLifecycle,
  body: createWalletTransferRequestSchema,
  response: { status: 201, description: 'The transfer, pending.', schema: walletTransferSchema },
  errors: [
    'not_found',
    'wallet_transfer_same_wallet',
    'wallet_transfer_chain_mismatch',
    'insufficient_funds',
    'service_unavailable',
  ],
  async handler({ body, partner, services }) {
    return createWalletTransfer(services, partner.id, body);
  },
});

const getWalletTransfer = defineRoute({
  method: 'get',
  path: '/v1/wallet-transfers/{id}',
  operationId: 'getWalletTransfer',
  tag,
  summary: 'Get a wallet transfer',
  description: walletTransferLifecycle,
  params: idParam('id', 'Wallet transfer id.'),
  response: { status: 200, description: 'The transfer.', schema: walletTransferSchema },
  errors: ['not_found'],
  async handler({ params, partner, services }) {
    return toWalletTransfer(await findWalletTransferOrThrow(services.prisma, partner.id, params.id as string));
  },
});

const listWalletTransfersRoute = defineRoute({
  method: 'get',
  path: '/v1/wallet-transfers',
  operationId: 'listWalletTransfers',
  tag,
  summary: 'List wallet transfers',
  description:
    'Newest first; `wallet_id` keeps transfers from or to that wallet (404 if it is not yours), `status` one status.',
  query: listWalletTransfersQuerySchema,
  response: {
    status: 200,
    description: 'A page of wallet transfers.',
    schema: listSchema(walletTransferSchema, 'WalletTransferList'),
  },
  errors: ['not_found'],
  async handler({ query, partner, services }) {
    const { rows, cursor } = await listWalletTransfers(services.prisma, partner.id, query, {
      walletId: query.wallet_id,
      status: query.status,
    });
    return { items: rows.map(toWalletTransfer), cursor };
  },
});

export const walletTransferRoutes = [createWalletTransferRoute, listWalletTransfersRoute, getWalletTransfer];
