// Rules of wallet transfers, without I/O: statuses and the moves between them, failure reasons and
// the network-fee rule.
//   pending (created; amount + fee held from the source wallet) -> processing (being sent on chain)
//   processing -> completed (sent: tx_hash set; the amount reaches its destination)
//   pending | processing -> failed (the network refused, or stayed unavailable: the hold returns)
export const walletTransferStatuses = ['pending', 'processing', 'completed', 'failed'] as const;
export type WalletTransferStatus = (typeof walletTransferStatuses)[number];

/** network_rejected: the chain refused the transfer; network_unavailable: it could not be sent (retries ran out). */
export const walletTransferFailureReasons = ['network_rejected', 'network_unavailable'] as const;
export type WalletTransferFailureReason = (typeof walletTransferFailureReasons)[number];

const moves: Record<WalletTransferStatus, readonly WalletTransferStatus[]> = {
  pending: ['processing', 'failed'],
  processing: ['completed', 'failed'],
  completed: [],
  failed: [],
};

export function canMoveWalletTransfer(from: WalletTransferStatus, to: WalletTransferStatus): boolean {
  return moves[from].includes(to);
}

/**
 * Sandbox controls (POST /v1/wallet-transfer `simulate`): the failure a transfer should meet.
 * send_timeout_after_broadcast: broadcast, every answer lost; the chain, asked by the idempotency key, reports it
 * sent, so the transfer completes. send_outcome_unknown: broadcast, and the chain cannot say until an operator's
 * recheck: the transfer stays `processing` with its hold (never released while the send may exist).
 */
export const walletTransferSimulations = [
  'network_rejected',
  'network_unavailable',
  'send_timeout_after_broadcast',
  'send_outcome_unknown',
] as const;
export type WalletTransferSimulation = (typeof walletTransferSimulations)[number];

/**
 * The network-fee rule: a transfer between two wallets of the same partner is free (the service
 * carries the chain's cost); any other destination pays the chain's fee for one transfer of the
 * stablecoin (the fee quotes use; sandbox: ethereum 1, solana 0.01), on top of the amount.
 */
export function chargesNetworkFee(destination: { toOwnWallet: boolean }): boolean {
  return !destination.toOwnWallet;
}

/** Ledger reference of one step of a transfer: posting a step twice is a replay that writes nothing. */
export function walletTransferReference(transferId: string, step: 'hold' | 'delivered' | 'returned'): string {
  return `wallet-transfer:${transferId}:${step}`;
}
