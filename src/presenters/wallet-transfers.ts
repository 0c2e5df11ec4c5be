// Wallet transfers as the API shows them: the response of every wallet-transfer operation and the
// `event_resource` of every walletTransfer.* event. Pure: rows in, resources out.
import type { WalletTransferRow } from '../persistence/wallet-transfers';
import { Money, stablecoinOf } from '../domain/money';
import type { WalletTransferFailureReason } from '../domain/wallet-transfers';
import type { WalletTransferResource } from '../schemas/wallet-transfers';

export function toWalletTransfer(row: WalletTransferRow): WalletTransferResource {
  const money = (value: { toString(): string }) => Money.of(row.currency, value.toString()).toString();
  // Another partner's wallet is an outside address to this partner.
  const ownDestination = row.toWallet && row.toWallet.partnerId === row.partnerId ? row.toWallet.id : null;
  return {
    id: row.id,
    customer_id: row.customerId,
    status: row.status,
    from: { wallet_id: row.fromWalletId, address: row.fromWallet.address },
    to: { wallet_id: ownDestination, address: row.toAddress },
    chain: row.chain,
    currency: stablecoinOf(row.currency),
    amount: money(row.amount),
    network_fee: money(row.networkFee),
    tx_hash: row.txHash,
    failure_reason: row.failureReason as WalletTransferFailureReason | null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
