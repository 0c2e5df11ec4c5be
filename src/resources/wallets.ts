// Wallets as the API shows them, and their creation. A wallet's balances come from the ledger.
import type { Db, Prisma } from '../db';
import type { Chain } from '../domain/chains';
import { isUuid, newId } from '../domain/ids';
import { ApiError } from '../http/errors';
import { formatLedgerAmount, LedgerCurrency, openWalletLedgerAccounts, walletCurrencies } from '../ledger';
import type { CreateWalletRequest, WalletResource } from '../schemas/wallets';
import type { ApiServices } from '../services';
import { requireApprovedCustomer } from './customers';

export const withBalances = { ledgerAccounts: true } as const;
export type WalletRow = Prisma.WalletGetPayload<{ include: typeof withBalances }>;

export function toWallet(row: WalletRow): WalletResource {
  return {
    id: row.id,
    customer_id: row.customerId,
    name: row.name,
    chain: row.chain as Chain,
    address: row.address,
    balances: walletCurrencies.map((currency) => {
      const account = row.ledgerAccounts.find((candidate) => candidate.currency === currency);
      return { currency, amount: formatLedgerAmount(currency as LedgerCurrency, account?.balance ?? 0) };
    }),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** A wallet of this partner, or 404 (also for malformed ids and other partners' wallets). */
export async function findWalletOrThrow(db: Db, partnerId: string, walletId: string): Promise<WalletRow> {
  const row = isUuid(walletId)
    ? await db.wallet.findFirst({ where: { id: walletId, partnerId }, include: withBalances })
    : null;
  if (!row) throw ApiError.notFound('wallet', walletId);
  return row;
}

/**
 * Creates a service-managed wallet for an approved customer: an address can receive funds as soon
 * as it exists, so unverified customers get none. Its USDC and USDT balances open at zero.
 */
export async function createWallet(
  services: ApiServices,
  partnerId: string,
  request: CreateWalletRequest,
): Promise<WalletResource> {
  const customer = await requireApprovedCustomer(services.prisma, partnerId, request.customer_id);
  const id = newId();
  const { address, keyReference } = await services.walletAddressProvider.createAddress({
    walletId: id,
    chain: request.chain,
  });
  return services.prisma.$transaction(async (tx) => {
    await tx.wallet.create({
      data: { id, partnerId, customerId: customer.id, name: request.name, chain: request.chain, address, keyReference },
    });
    await openWalletLedgerAccounts(tx, id);
    return toWallet(await tx.wallet.findUniqueOrThrow({ where: { id }, include: withBalances }));
  });
}
