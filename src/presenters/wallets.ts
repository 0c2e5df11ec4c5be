// Wallets as the API shows them; a wallet's balances are its ledger accounts, in the money type's format.
import { Money, stablecoins } from '../domain/money';
import type { WalletRow } from '../persistence/wallets';
import type { WalletResource } from '../schemas/wallets';

export function toWallet(row: WalletRow): WalletResource {
  return {
    id: row.id,
    customer_id: row.customerId,
    name: row.name,
    chain: row.chain,
    address: row.address,
    balances: stablecoins.map((currency) => {
      const account = row.ledgerAccounts.find((candidate) => candidate.currency === currency);
      return { currency, amount: Money.of(currency, (account?.balance ?? '0').toString()).toString() };
    }),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
