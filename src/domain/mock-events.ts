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
  const [resource, action] = eventType.split('.') as [string, string];
  const timestamps = { created_at: now.toISOString(), updated_at: now.toISOString() };
  const id = newId();
  switch (resource) {
    default:
      return {
        id,
        customer_id: newId(),
        status: walletTransferStatuses[action] ?? action,
        currency: 'USDC',
        amount: '100.00',
        source_wallet_id: newId(),
        destination_wallet_id: newId(),
        ...timestamps,
      };
  }
}
