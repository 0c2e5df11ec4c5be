// External accounts as the API shows them: create, get, list items and event payloads are one shape.
import type { ExternalAccountRow } from '../persistence/external-accounts';
import type { ExternalAccountResource } from '../schemas/external-accounts';

export function toExternalAccount(row: ExternalAccountRow): ExternalAccountResource {
  return {
    id: row.id,
    customer_id: row.customerId,
    account_name: row.accountName,
    payment_rail: row.paymentRail,
    status: row.status,
    is_third_party: row.isThirdParty,
    [row.paymentRail]: row.details,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  } as unknown as ExternalAccountResource;
}
