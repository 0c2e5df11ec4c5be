// Sandbox mocked resources for POST /webhooks/mock of wallet-transfer events: illustrative and fixed, a new random
// id each time (it names no real resource), amounts that never change, and the status the event type implies.
// Pay-in and payout mocks are transactions, built by mockTransactionFor (src/presenters/transactions.ts).
import { newId } from './ids';

const walletTransferStatuses: Record<string, string> = { created: 'pending', completed: 'completed', failed: 'failed' };

export interface MockResource extends Record<string, unknown> {
  id: string;
  status: string;
}

export function mockResourceFor(eventType: string, now: Date): MockResource {
  const action = eventType.split('.')[1] as string;
  const timestamps = { created_at: now.toISOString(), updated_at: now.toISOString() };
  const id = newId();
  // Exactly the shape of a real transfer (src/presenters/wallet-transfers.ts), an internal one on solana.
  const failed = action === 'failed';
  return {
    id,
    customer_id: newId(),
    status: walletTransferStatuses[action] ?? action,
    from: { wallet_id: newId(), address: 'CKtaVzpV4VTtaNk8FcqkaYKXUbJLdtRRR2cB3aAwe3yV' },
    to: { wallet_id: newId(), address: '4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T' },
    chain: 'solana',
    currency: 'USDC',
    amount: '100.000000',
    network_fee: '0.000000',
    tx_hash: action === 'completed' ? '5f0c6a2e1d9b8c7a6f5e4d3c2b1a09f8e7d6c5b4a392817065f4e3d2c1b0a998' : null,
    failure_reason: failed ? 'network_rejected' : null,
    ...timestamps,
  };
}
