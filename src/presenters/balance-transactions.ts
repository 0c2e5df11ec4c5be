// How a ledger entry on a partner's money is shown: a balance transaction, amounts at their currency's decimals.
import { Money, type Currency } from '../domain/money';
import { sourceOfReference } from '../domain/reconciliation';
import type { BalanceTransactionRow } from '../persistence/balance-transactions';
import type { BalanceTransactionResource } from '../schemas/balance-transactions';

const shown = (currency: Currency, value: { toString(): string }) => Money.of(currency, value.toString()).toString();

export function toBalanceTransaction(row: BalanceTransactionRow): BalanceTransactionResource {
  const source = sourceOfReference(row.transaction.reference);
  return {
    id: row.id,
    account: row.account.walletId ? 'wallet' : 'partner_fees',
    wallet_id: row.account.walletId,
    currency: row.currency,
    amount: shown(row.currency, row.amount),
    balance_after: row.balanceAfter === null ? null : shown(row.currency, row.balanceAfter),
    source: {
      type: source?.type === 'wallet_transfer' || source?.type === 'sandbox_funding' ? source.type : 'transaction',
      id: source?.id ?? row.transaction.reference,
      step: source?.type === 'sandbox_funding' ? null : (source?.step ?? null),
    },
    created_at: row.createdAt.toISOString(),
  };
}
