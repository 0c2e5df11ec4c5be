// The ledger postings of a transaction that more than one step makes (the write of a payout from a
// wallet, a deposit, a leg, a refund that undoes them), from its stored amounts, and the reference
// each posting carries (`transaction:<id>:<step>`: posting a step twice is a replay).
import { type LedgerEntryInput, ledgerAccounts, settlementEntries } from '../ledger';
import type { Money } from '../domain/money';
import { amountsOf, type TransactionRow } from '../presenters/transactions';

export const ledgerReference = (transactionId: string, step: string) => `transaction:${transactionId}:${step}`;

/**
 * Whose in-transit account carries the stablecoin until it is delivered or sold: the transaction's
 * wallet, or for a payout whose stablecoin was sent in on chain, the service's collection.
 */
export const carrierOf = (row: Pick<TransactionRow, 'walletId'>) => row.walletId ?? 'collection';

/** Leg 1's entries: fees where the quote said, the rest converted and held in transit. */
export function leg1Entries(row: TransactionRow): LedgerEntryInput[] {
  const amounts = amountsOf(row);
  return settlementEntries.fiatToStablecoin({
    partnerId: row.partnerId,
    walletId: row.walletId as string,
    fees: amounts.fees,
    converted: amounts.converted,
    stablecoin: amounts.stablecoin,
  });
}

/** The fees leg 1 charged, given back by a refund (with the deposit, in full). */
export function leg1FeesReturnedEntries(row: TransactionRow): LedgerEntryInput[] {
  return settlementEntries.feesReturned({ partnerId: row.partnerId, fees: amountsOf(row).fees });
}

/** A refund's sell-back of leg 1's stablecoin, for `proceeds` from the exchange (settlementEntries.soldBack). */
export function sellBackEntries(row: TransactionRow, proceeds: Money): LedgerEntryInput[] {
  const amounts = amountsOf(row);
  return settlementEntries.soldBack({
    walletId: carrierOf(row),
    stablecoin: amounts.stablecoin,
    atLockedRate: amounts.converted,
    proceeds,
  });
}

/**
 * A payout's funding entries (its leg 1): from the customer's wallet balance, or from the clearing
 * account its deposit on chain arrived in. The same entries, reversed, give it back on a refund.
 */
export function payoutFundingEntries(row: TransactionRow): LedgerEntryInput[] {
  const amounts = amountsOf(row);
  const coin = amounts.sender.currency as 'USDC' | 'USDT';
  return settlementEntries.payoutFunded({
    partnerId: row.partnerId,
    source: row.walletId ? ledgerAccounts.wallet(row.walletId, coin) : ledgerAccounts.fiatClearing(coin),
    carrier: carrierOf(row),
    sent: amounts.sender,
    fees: amounts.fees,
    converted: amounts.converted,
  });
}
