// Wallet transfers: the commands of their routes. Creating one checks the wallets and the destination
// first, then, in ONE database transaction (writeThenStart), writes the transfer, locks the ledger
// accounts of its hold (the source wallet's among them, in the ledger's one lock order), refuses when
// the wallet cannot cover amount + network fee, holds the money (ledger), records
// walletTransfer.created and the intent to start its workflow. Concurrent transfers from one wallet
// queue on that row lock, so the balance never goes below zero. Reads are plain queries.
import { isWellFormedAddress, toChecksumAddress, type Chain } from '../domain/chains';
import { isUuid, newId } from '../domain/ids';
import { amountTextProblem, Money } from '../domain/money';
import { chargesNetworkFee, walletTransferReference } from '../domain/wallet-transfers';
import type { Database, DatabaseClient } from '../persistence/database';
import { recordEvent } from '../persistence/events';
import { DomainError } from '../domain/errors';
import { ledgerAccounts, walletTransferEntries } from '../domain/ledger';
import { lockLedgerAccounts, postLedgerEntries } from '../persistence/ledger';
import { findWalletAtAddress } from '../persistence/wallets';
import {
  findPartnerWalletTransfer,
  insertWalletTransfer,
  listWalletTransfers as listWalletTransferRows,
  WalletTransferRow,
} from '../persistence/wallet-transfers';
import { paginate, type PageRequest } from '../domain/pages';
import { toWalletTransfer } from '../presenters/wallet-transfers';
import type { CreateWalletTransferRequest, WalletTransferResource } from '../schemas/wallet-transfers';
import type { ApiServices } from '../app-services';
import { workflowIds } from '../temporal/workflow-ids';
import { workflowStart, writeThenStart } from '../temporal/write-then-start';
import { walletTransferWorkflow } from '../../workflows/wallet-transfer';
import { findWalletOrThrow } from './wallets';

/** A wallet transfer of this partner, or 404 (also for malformed ids and other partners' transfers). */
export async function findWalletTransferOrThrow(
  db: DatabaseClient,
  partnerId: string,
  id: string,
): Promise<WalletTransferRow> {
  const row = isUuid(id) ? await findPartnerWalletTransfer(db, partnerId, id) : null;
  if (!row) throw DomainError.notFound('wallet transfer', id);
  return row;
}

/** An address as the chain writes it: EVM addresses in one case are accepted and checksummed. */
function normaliseAddress(chain: Chain, address: string): string | null {
  if (isWellFormedAddress(chain, address)) return address;
  if (chain === 'ethereum' && /^0x([0-9a-f]{40}|[0-9A-F]{40})$/.test(address)) return toChecksumAddress(address);
  return null;
}

interface Destination {
  toWalletId: string | null;
  toAddress: string;
  toOwnWallet: boolean;
}

async function destinationOf(
  services: ApiServices,
  partnerId: string,
  from: { id: string; chain: Chain },
  request: CreateWalletTransferRequest,
): Promise<Destination> {
  const { chain } = from;
  const sameWallet = () =>
    new DomainError(
      'wallet_transfer_same_wallet',
      `Wallet ${from.id} cannot transfer to itself; choose another destination.`,
    );
  if (request.to_wallet_id !== undefined) {
    const to = await findWalletOrThrow(services.prisma, partnerId, request.to_wallet_id);
    if (to.id === from.id) throw sameWallet();
    if (to.chain !== chain) {
      throw new DomainError(
        'wallet_transfer_chain_mismatch',
        `Wallet ${from.id} is on ${chain} and wallet ${to.id} on ${to.chain}; a transfer stays on one chain.`,
      );
    }
    return { toWalletId: to.id, toAddress: to.address, toOwnWallet: true };
  }
  const given = request.to_address as string;
  const address = normaliseAddress(chain, given);
  if (!address) {
    const other = (['ethereum', 'solana'] as const).find((candidate) => candidate !== chain);
    if (other && normaliseAddress(other, given)) {
      throw new DomainError(
        'wallet_transfer_chain_mismatch',
        `to_address is a ${other} address; wallet ${from.id} is on ${chain} and a transfer stays on one chain.`,
      );
    }
    throw DomainError.invalidParam(
      'to_address',
      chain === 'ethereum'
        ? 'must be an ethereum address: 0x and 40 hex digits, in EIP-55 checksum case (or all one case)'
        : 'must be a solana address: base58 of 32 bytes',
    );
  }
  // An address of a service-managed wallet is credited to that wallet (any partner's: the money lands there).
  const wallet = await findWalletAtAddress(services.prisma, chain, address);
  if (wallet?.id === from.id) throw sameWallet();
  return { toWalletId: wallet?.id ?? null, toAddress: address, toOwnWallet: wallet?.partnerId === partnerId };
}

/** POST /v1/wallet-transfer. Every refusal leaves nothing behind. */
export async function createWalletTransfer(
  services: ApiServices,
  partnerId: string,
  request: CreateWalletTransferRequest,
): Promise<WalletTransferResource> {
  if (request.simulate !== undefined && services.config.appEnv !== 'sandbox') {
    throw DomainError.invalidParam('simulate', 'exists in the sandbox only');
  }
  const { currency } = request;
  const problem = amountTextProblem(request.amount, currency);
  if (problem) throw DomainError.invalidParam('amount', problem);
  const amount = Money.parse(currency, request.amount);
  const from = await findWalletOrThrow(services.prisma, partnerId, request.from_wallet_id);
  const { chain } = from;
  const destination = await destinationOf(services, partnerId, from, request);
  const networkFee = chargesNetworkFee(destination)
    ? await services.rateProvider.networkFee(currency, chain)
    : Money.zero(currency);
  const total = amount.plus(networkFee);

  const id = newId();
  const hold = walletTransferEntries.hold({
    fromWalletId: from.id,
    toWalletId: destination.toWalletId,
    amount,
    networkFee,
  });
  return writeThenStart(services, async (tx, start) => {
    const row = await insertWalletTransfer(tx, {
      id,
      partnerId,
      customerId: from.customerId,
      fromWalletId: from.id,
      toWalletId: destination.toWalletId,
      toAddress: destination.toAddress,
      chain,
      currency,
      amount: amount.toString(),
      networkFee: networkFee.toString(),
      status: 'pending',
      sandboxSimulation: request.simulate ?? null,
    });
    // Transfers from one wallet queue on its row lock, taken with every account the hold posts to.
    const locked = await lockLedgerAccounts(
      tx,
      hold.map(({ account }) => account),
    );
    const balance = Money.of(currency, locked.of(ledgerAccounts.wallet(from.id, currency)).toFixed());
    if (balance.lt(total)) {
      throw new DomainError(
        'insufficient_funds',
        `Wallet ${from.id} holds ${balance.toString()} ${currency}; this transfer needs ${total.toString()} ` +
          `(amount ${amount.toString()} + network fee ${networkFee.toString()}).`,
      );
    }
    await postLedgerEntries(tx, {
      reference: walletTransferReference(id, 'hold'),
      description: `wallet transfer ${id}: hold on the source wallet`,
      entries: hold,
    });
    const resource = toWalletTransfer(row);
    await recordEvent(tx, {
      partnerId,
      type: 'walletTransfer.created',
      resourceId: id,
      resourceStatus: row.status,
      resource,
    });
    await start(
      workflowStart(walletTransferWorkflow, {
        workflowId: workflowIds.walletTransfer(id),
        args: [{ transferId: id, partnerId, customerId: from.customerId }],
        searchAttributes: {
          PartnerId: partnerId,
          CustomerId: from.customerId,
          ResourceId: id,
          ResourceStatus: row.status,
        },
      }),
    );
    return resource;
  });
}

/** A page of the partner's wallet transfers, of one of its wallets when `walletId` is given (404 if not its). */
export async function listWalletTransfers(
  db: DatabaseClient,
  partnerId: string,
  page: PageRequest,
  filter: { walletId?: string; status?: Parameters<typeof listWalletTransferRows>[1]['status'] },
) {
  const walletId = filter.walletId ? (await findWalletOrThrow(db, partnerId, filter.walletId)).id : undefined;
  return paginate(page, (keyset) => listWalletTransferRows(db, { partnerId, walletId, status: filter.status }, keyset));
}
