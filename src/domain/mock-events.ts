// Sandbox mocked resources for POST /webhooks/mock. Pay-ins, payouts and wallet transfers have no API of their
// own yet (SPEC 2.10: fields not shown), so these resources are illustrative and fixed: a new random id each time
// (it names no real resource), amounts that never change, and the status the event type implies.
import { newId } from './ids';

const transactionStatuses: Record<string, string> = {
  created: 'awaiting_deposit',
  processing: 'processing',
  completed: 'completed',
  cancelled: 'cancelled',
  failed: 'failed',
  error: 'error',
  refunded: 'refunded',
};
const walletTransferStatuses: Record<string, string> = { created: 'pending', completed: 'completed', failed: 'failed' };

export interface MockResource extends Record<string, unknown> {
  id: string;
  status: string;
}

export function mockResourceFor(eventType: string, now: Date): MockResource {
  const [resource, action] = eventType.split('.') as [string, string];
  const timestamps = { created_at: now.toISOString(), updated_at: now.toISOString() };
  const id = newId();
  switch (resource) {
    case 'payin':
      return {
        id,
        customer_id: newId(),
        status: transactionStatuses[action] ?? action,
        sender: { currency: 'USD', amount: '100.00', payment_rail: 'ach' },
        receiver: { currency: 'USDC', amount: '99.50', payment_rail: 'ethereum', wallet_id: newId() },
        ...timestamps,
      };
    case 'payout':
      return {
        id,
        customer_id: newId(),
        status: transactionStatuses[action] ?? action,
        sender: { currency: 'USDC', amount: '100.00', payment_rail: 'ethereum', wallet_id: newId() },
        receiver: { currency: 'BRL', amount: '530.00', payment_rail: 'pix', external_account_id: newId() },
        ...timestamps,
      };
    default: {
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
  }
}
