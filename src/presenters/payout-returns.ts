// How a payout returned after completion is shown (the sandbox endpoint's answer). Pure: row in, resource out.
import { Money } from '../domain/money';
import type { PayoutReturnReason } from '../domain/transactions';
import type { PayoutReturnRow } from '../persistence/payout-returns';
import type { PayoutReturnResource } from '../schemas/payout-returns';

export function toPayoutReturn(row: PayoutReturnRow): PayoutReturnResource {
  return {
    id: row.id,
    transaction_id: row.transactionId,
    amount: Money.of(row.currency, row.amount).toString(),
    currency: row.currency,
    reason_code: row.reasonCode as PayoutReturnReason,
    return_reference: row.returnReference,
    returned_at: row.returnedAt.toISOString(),
    resolution: row.resolution,
  };
}
