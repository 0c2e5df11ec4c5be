// Virtual accounts as the API shows them (get, list items and event payloads are one shape), and the
// name deposits are addressed to. Pure.
import type { VirtualAccountRow } from '../persistence/virtual-accounts';
import type { DepositAddresses, SenderCurrency } from '../providers/deposit-accounts';
import type { VirtualAccountResource, VirtualAccountStatus } from '../schemas/virtual-accounts';
import type { CustomerRow } from '../persistence/customers';

export function toVirtualAccount(row: VirtualAccountRow): VirtualAccountResource {
  return {
    id: row.id,
    customer_id: row.customerId,
    name: row.name,
    status: row.status,
    sender: { currency: row.senderCurrency as SenderCurrency },
    receiver: {
      currency: row.receiverCurrency as 'USDC' | 'USDT',
      wallet_id: row.walletId,
      payment_rail: row.wallet.chain,
      address: row.wallet.address,
    },
    deposit_addresses: row.status === 'approved' ? (row.depositAddresses as DepositAddresses) : {},
    ...(row.senderCurrency === 'EUR' ? { accepts_third_party_payments: row.acceptsThirdPartyPayments ?? false } : {}),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** Name deposits are addressed to: the customer's full name, or a business's legal name. */
export function beneficiaryNameOf(
  customer: Pick<CustomerRow, 'type' | 'firstName' | 'lastName' | 'businessLegalName'>,
): string {
  return customer.type === 'business'
    ? (customer.businessLegalName ?? '')
    : [customer.firstName, customer.lastName].filter(Boolean).join(' ');
}
