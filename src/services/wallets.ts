// Wallet commands: the 404 lookup and creation (address, then the row and its zero ledger balances).
import { ownedOrNotFound } from './owned';
import { withDatabaseTransaction, type Database, type DatabaseClient } from '../persistence/database';
import { newId } from '../domain/ids';
import { DomainError } from '../domain/errors';
import { ledgerAccounts } from '../domain/ledger';
import { openWalletLedgerAccounts, postLedgerEntries } from '../persistence/ledger';
import { amountTextProblem, Money, Stablecoin } from '../domain/money';
import {
  findWallet,
  findWalletColumns,
  insertWallet,
  listWallets as listWalletRows,
  readWallet,
  WalletColumns,
  WalletRow,
} from '../persistence/wallets';
import { toWallet } from '../presenters/wallets';
import type { CreateWalletRequest, WalletResource } from '../schemas/wallets';
import type { ApiServices } from '../app-services';
import { ownedCustomerFilter, requireApprovedCustomer } from './customers';
import { paginate, type PageRequest } from '../domain/pages';
import { writeRequest } from '../temporal/write-then-start';

/** A wallet of this partner, or 404 (also for malformed ids and other partners' wallets). */
export function findWalletOrThrow(db: DatabaseClient, partnerId: string, walletId: string): Promise<WalletRow> {
  return ownedOrNotFound('wallet', findWallet, db, partnerId, walletId);
}

/** The same without the balances (one statement less), for checks. */
export function findWalletColumnsOrThrow(
  db: DatabaseClient,
  partnerId: string,
  walletId: string,
): Promise<WalletColumns> {
  return ownedOrNotFound('wallet', findWalletColumns, db, partnerId, walletId);
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
  return writeRequest(services.prisma, async (tx) => {
    await insertWallet(tx, {
      id,
      partnerId,
      customerId: customer.id,
      name: request.name,
      chain: request.chain,
      address,
      keyReference,
    });
    await openWalletLedgerAccounts(tx, id);
    return toWallet(await readWallet(tx, id));
  });
}

/**
 * Sandbox: credits test money to a wallet as one balanced posting from the `sandbox_funding` account
 * (so the ledger stays balanced and the wallet's balance is what it can spend). No event: wallets have none.
 */
export async function fundSandboxWallet(
  services: ApiServices,
  partnerId: string,
  walletId: string,
  request: { currency: Stablecoin; amount: string },
): Promise<WalletResource> {
  const currency = request.currency;
  const problem = amountTextProblem(request.amount, currency);
  if (problem) throw DomainError.invalidParam('amount', problem);
  const amount = Money.parse(currency, request.amount);
  const wallet = await findWalletOrThrow(services.prisma, partnerId, walletId);
  return withDatabaseTransaction(services.prisma, async (tx) => {
    await postLedgerEntries(tx, {
      reference: `sandbox-funding:${newId()}`,
      description: `sandbox funding of wallet ${wallet.id}`,
      entries: [
        { account: ledgerAccounts.sandboxFunding(currency), amount: amount.negated().toString() },
        { account: ledgerAccounts.wallet(wallet.id, currency), amount: amount.toString() },
      ],
    });
    return toWallet(await readWallet(tx, wallet.id));
  });
}

/** A page of the partner's wallets, of one of its customers when `customerId` is given (404 if not its). */
export async function listWallets(
  db: DatabaseClient,
  partnerId: string,
  page: PageRequest,
  customerId: string | undefined,
) {
  const byCustomer = await ownedCustomerFilter(db, partnerId, customerId);
  return paginate(page, (keyset) => listWalletRows(db, { partnerId, ...byCustomer }, keyset));
}
