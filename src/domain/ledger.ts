// The ledger's rules, without I/O: double-entry postings whose entries add up to zero per currency, in every
// currency of the money type (money.ts): stablecoin balances of wallets, and the service's own fiat and stablecoin
// accounts that settlement moves money through (ledgerAccounts below); what each step posts (settlementEntries,
// walletTransferEntries, and a transaction's postings from its stored amounts in transaction-postings.ts). Amounts
// are decimal strings or the money type's decimals, never JavaScript numbers (the money type's rule). Posting them
// is src/persistence/ledger.ts.
import {
  AmountValue,
  Currency,
  Decimal,
  decimalsOf,
  currencyOf,
  isCurrency,
  isStablecoin,
  Money,
  numberAmountProblem,
  Stablecoin,
  stablecoins,
} from './money';
import { amountsOf, type TransactionAmountColumns } from './transactions';

/** Wallets hold stablecoins, at their currency's decimal places (money.ts). */
export type LedgerCurrency = Stablecoin;
export const walletCurrencies: readonly LedgerCurrency[] = stablecoins;

export type LedgerAccountRef =
  | { walletId: string; currency: LedgerCurrency }
  /**
   * A system account of the service, in any currency, opened on first use. It may go negative
   * (e.g. `settlement`, the outside world seen from the ledger; never locked, its balance the sum of
   * its entries) unless opened with allowNegative false (a running balance under a lock, as a wallet's).
   */
  | { system: string; currency: Currency; allowNegative?: boolean };

/**
 * The accounts settlement posts to. Money from outside arrives from `settlement` and leaves to it;
 * in between it sits in the fiat clearing account of its currency, is converted through the FX
 * account (one leg per currency, so every conversion balances in both), and the stablecoin waits
 * in the wallet's in-transit account, which is not part of the wallet's spendable balance.
 */
export const ledgerAccounts = {
  /** A wallet's spendable balance (GET /v1/wallets shows it). */
  wallet: (walletId: string, currency: LedgerCurrency): LedgerAccountRef => ({ walletId, currency }),
  /** The outside world: banks and chains money comes from and goes to. */
  settlement: (currency: Currency): LedgerAccountRef => ({ system: 'settlement', currency }),
  /** Fiat received or about to be paid out, per currency; returns to zero when a transaction ends. */
  fiatClearing: (currency: Currency): LedgerAccountRef => ({ system: 'fiat_clearing', currency }),
  /** The conversion desk: it takes one currency and gives the other at the locked rate. */
  fx: (currency: Currency): LedgerAccountRef => ({ system: 'fx', currency }),
  /**
   * What the service gained (positive) or lost (negative) when the exchange's rate of the moment differed from
   * the locked one: a sell-back of a refunded transaction's stablecoin.
   */
  fxGainLoss: (currency: Currency): LedgerAccountRef => ({ system: 'fx_gain_loss', currency }),
  /** The service fee earned. */
  feeRevenue: (currency: Currency): LedgerAccountRef => ({ system: 'fee_revenue', currency }),
  /** Network fees collected to pay for on-chain transfers. */
  networkFees: (currency: Currency): LedgerAccountRef => ({ system: 'network_fees', currency }),
  /** Partner fees collected on a partner's behalf and owed to it. */
  partnerFeesOwed: (partnerId: string, currency: Currency): LedgerAccountRef => ({
    system: `partner_fees:${partnerId}`,
    currency,
  }),
  /**
   * The stablecoin of a transaction between its legs, on the service-managed wallet that carries it;
   * never negative, and back to zero when the transaction ends.
   */
  inTransit: (walletId: string, currency: Currency): LedgerAccountRef => ({
    system: `in_transit:${walletId}`,
    currency,
    allowNegative: false,
  }),
  /**
   * Wallet transfers from a wallet between creation and their end: the amount and fee taken from it
   * wait here; never negative, and each transfer's entries add up to zero once it completes or fails.
   * One per source wallet, not one for the service: a transfer locks only accounts of its own wallets.
   */
  walletTransferHolds: (walletId: string, currency: Currency): LedgerAccountRef => ({
    system: `wallet_transfer_holds:${walletId}`,
    currency,
    allowNegative: false,
  }),
  /** Sandbox only: where POST /v1/sandbox/wallets/{id}/fund takes test money from (may go negative). */
  sandboxFunding: (currency: Currency): LedgerAccountRef => ({ system: 'sandbox_funding', currency }),
};

/** An entry of a Money amount: positive credits the account, negative debits it. */
export function entry(account: LedgerAccountRef, amount: Money): LedgerEntryInput {
  return { account, amount: amount.toString() };
}

export interface LedgerEntryInput {
  account: LedgerAccountRef;
  /** Positive credits the account, negative debits it. */
  amount: AmountValue;
}

export interface LedgerPosting {
  /** Unique per posting: posting the same reference again does nothing (safe for activity retries). */
  reference: string;
  description: string;
  entries: LedgerEntryInput[];
}

export type LedgerErrorCode =
  | 'invalid_posting'
  | 'unbalanced'
  | 'unknown_account'
  | 'insufficient_funds'
  /** The reference was posted before with other entries: a replay must repeat the posting exactly. */
  | 'replay_mismatch';

export class LedgerError extends Error {
  override name = 'LedgerError';
  constructor(
    readonly code: LedgerErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export function keyOf(account: LedgerAccountRef): string {
  return 'walletId' in account
    ? `wallet:${account.walletId}:${account.currency}`
    : `system:${account.system}:${account.currency}`;
}

export function checkPosting(posting: LedgerPosting): Array<{ account: LedgerAccountRef; amount: Decimal }> {
  if (!posting.reference.trim()) throw new LedgerError('invalid_posting', 'a posting needs a reference');
  if (posting.entries.length < 2) throw new LedgerError('invalid_posting', 'a posting needs at least two entries');
  const totals = new Map<Currency, Decimal>();
  const entries = posting.entries.map(({ account, amount: raw }) => {
    if (!isCurrency(account.currency)) {
      throw new LedgerError('invalid_posting', `unknown currency ${String(account.currency)}`);
    }
    if ('walletId' in account && !isStablecoin(account.currency)) {
      throw new LedgerError('invalid_posting', `wallets hold stablecoins, not ${account.currency}`);
    }
    const scale = decimalsOf(account.currency);
    const numberProblem = numberAmountProblem(raw);
    if (numberProblem) throw new LedgerError('invalid_posting', numberProblem);
    let amount: Decimal;
    try {
      amount = new Decimal(raw);
    } catch {
      throw new LedgerError('invalid_posting', `${String(raw)} is not a decimal amount`);
    }
    if (!amount.isFinite() || amount.isZero()) {
      throw new LedgerError('invalid_posting', `entry amounts must be non-zero and finite (got ${String(raw)})`);
    }
    if (amount.decimalPlaces() > scale) {
      throw new LedgerError(
        'invalid_posting',
        `${account.currency} has ${scale} decimal places (got ${amount.toString()})`,
      );
    }
    totals.set(account.currency, (totals.get(account.currency) ?? new Decimal(0)).plus(amount));
    return { account, amount };
  });
  for (const [currency, total] of totals) {
    if (!total.isZero()) {
      throw new LedgerError('unbalanced', `the ${currency} entries add up to ${total.toString()}, not 0`);
    }
  }
  return entries;
}

// ---- what each settlement step posts ----

/** Entries of Money amounts, leaving out zero amounts (e.g. no partner fee). */
function entriesOf(...pairs: Array<[LedgerAccountRef, Money]>): LedgerEntryInput[] {
  return pairs.filter(([, amount]) => !amount.isZero()).map(([account, amount]) => entry(account, amount));
}

/** The same entries with the opposite sign: undoes a posting. */
export function reversed(entries: LedgerEntryInput[]): LedgerEntryInput[] {
  return entries.map(({ account, amount }) => ({ account, amount: new Decimal(amount.toString()).neg().toFixed() }));
}

export interface Leg1Amounts {
  partnerId: string;
  walletId: string;
  fees: { service: Money; partner: Money; network: Money };
  /** The sender amount minus the fees, in the sender currency. */
  converted: Money;
  /** What `converted` buys at the locked rate. */
  stablecoin: Money;
}

/**
 * Postings of settlement, one function per step. Each is balanced per currency; a transaction's
 * clearing and in-transit entries add up to zero once it is completed, refunded or cancelled.
 */
export const settlementEntries = {
  /** The sender's deposit arrives from outside into the clearing account of its currency. */
  depositReceived(amount: Money): LedgerEntryInput[] {
    return entriesOf(
      [ledgerAccounts.settlement(amount.currency), amount.negated()],
      [ledgerAccounts.fiatClearing(amount.currency), amount],
    );
  },

  /**
   * Leg 1: the fees go where the quote said (service fee to revenue, partner fee owed to the partner,
   * network fee set aside for the chain) and the rest buys the stablecoin through the FX account,
   * held in transit on the transaction's wallet.
   */
  fiatToStablecoin({ partnerId, walletId, fees, converted, stablecoin }: Leg1Amounts): LedgerEntryInput[] {
    const fiat = converted.currency;
    const total = fees.service.plus(fees.partner).plus(fees.network);
    return entriesOf(
      [ledgerAccounts.fiatClearing(fiat), total.plus(converted).negated()],
      [ledgerAccounts.feeRevenue(fiat), fees.service],
      [ledgerAccounts.partnerFeesOwed(partnerId, fiat), fees.partner],
      [ledgerAccounts.networkFees(fiat), fees.network],
      [ledgerAccounts.fx(fiat), converted],
      [ledgerAccounts.fx(stablecoin.currency), stablecoin.negated()],
      [ledgerAccounts.inTransit(walletId, stablecoin.currency), stablecoin],
    );
  },

  /** Leg 2: the stablecoin in transit is sold through the FX account for the receiver's fiat, then paid out. */
  stablecoinToFiat({ walletId, stablecoin, receiver }: { walletId: string; stablecoin: Money; receiver: Money }) {
    return entriesOf(
      [ledgerAccounts.inTransit(walletId, stablecoin.currency), stablecoin.negated()],
      [ledgerAccounts.fx(stablecoin.currency), stablecoin],
      [ledgerAccounts.fx(receiver.currency), receiver.negated()],
      [ledgerAccounts.fiatClearing(receiver.currency), receiver],
    );
  },

  /** A refund after leg 1: the fees charged in leg 1 go back to clearing, to be returned with the deposit. */
  feesReturned({ partnerId, fees }: Pick<Leg1Amounts, 'partnerId' | 'fees'>): LedgerEntryInput[] {
    const fiat = fees.service.currency;
    const total = fees.service.plus(fees.partner).plus(fees.network);
    return entriesOf(
      [ledgerAccounts.feeRevenue(fiat), fees.service.negated()],
      [ledgerAccounts.partnerFeesOwed(partnerId, fiat), fees.partner.negated()],
      [ledgerAccounts.networkFees(fiat), fees.network.negated()],
      [ledgerAccounts.fiatClearing(fiat), total],
    );
  },

  /**
   * A refund after leg 1: the stablecoin in transit is sold back to the exchange, which pays `proceeds` at its rate
   * of the moment; clearing gets what leg 1 took at the locked rate (`atLockedRate`), so the deposit can go back in
   * full, and the difference is the service's FX gain or loss. The FX account of the fiat keeps what the exchange
   * kept (or gave) beyond the locked rate.
   */
  soldBack({
    walletId,
    stablecoin,
    atLockedRate,
    proceeds,
  }: {
    walletId: string;
    stablecoin: Money;
    atLockedRate: Money;
    proceeds: Money;
  }): LedgerEntryInput[] {
    return entriesOf(
      [ledgerAccounts.inTransit(walletId, stablecoin.currency), stablecoin.negated()],
      [ledgerAccounts.fx(stablecoin.currency), stablecoin],
      [ledgerAccounts.fx(proceeds.currency), proceeds.negated()],
      [ledgerAccounts.fiatClearing(proceeds.currency), atLockedRate],
      [ledgerAccounts.fxGainLoss(proceeds.currency), proceeds.minus(atLockedRate)],
    );
  },

  /** A pay-in's last step: the stablecoin in transit becomes the wallet's spendable balance. */
  delivered({ walletId, stablecoin }: { walletId: string; stablecoin: Money }): LedgerEntryInput[] {
    return entriesOf(
      [ledgerAccounts.inTransit(walletId, stablecoin.currency), stablecoin.negated()],
      [ledgerAccounts.wallet(walletId, stablecoin.currency as LedgerCurrency), stablecoin],
    );
  },

  /**
   * A payout's funding, its leg 1 in place of a conversion: the stablecoin sent leaves its source (the
   * customer's wallet balance, which may not go negative, or the clearing account a deposit on chain
   * arrived in), the fees go where the quote said, and the rest waits in transit for leg 2.
   */
  payoutFunded({
    partnerId,
    source,
    carrier,
    sent,
    fees,
    converted,
  }: {
    partnerId: string;
    source: LedgerAccountRef;
    /** Whose in-transit account holds the stablecoin until leg 2 (ledgerAccounts.inTransit). */
    carrier: string;
    sent: Money;
    fees: { service: Money; partner: Money; network: Money };
    converted: Money;
  }): LedgerEntryInput[] {
    const coin = sent.currency;
    return entriesOf(
      [source, sent.negated()],
      [ledgerAccounts.feeRevenue(coin), fees.service],
      [ledgerAccounts.partnerFeesOwed(partnerId, coin), fees.partner],
      [ledgerAccounts.networkFees(coin), fees.network],
      [ledgerAccounts.inTransit(carrier, coin), converted],
    );
  },

  /** Fiat leaves the clearing account for a bank outside: the payout, or a return to the sender. */
  paidOut(amount: Money): LedgerEntryInput[] {
    return entriesOf(
      [ledgerAccounts.fiatClearing(amount.currency), amount.negated()],
      [ledgerAccounts.settlement(amount.currency), amount],
    );
  },

  /**
   * A completed payout the receiving bank sent back (`transaction:<id>:payout_returned`): the money comes in from
   * outside into the clearing account of the receiver's currency, where it waits for an operator's decision (paid
   * out again with paidOut, or refunded with payoutReturnRefunded). `returned` may be less than was paid out (the
   * banks' charges): the difference stays on `settlement`, the outside world that kept it.
   */
  payoutReturned(returned: Money): LedgerEntryInput[] {
    return entriesOf(
      [ledgerAccounts.settlement(returned.currency), returned.negated()],
      [ledgerAccounts.fiatClearing(returned.currency), returned],
    );
  },

  /**
   * A returned payout refunded to the wallet it was paid from: the exchange converts the returned fiat back into
   * the stablecoin at its rate of the moment (one leg per currency through `fx`, like every conversion), and the
   * stablecoin becomes the wallet's spendable balance again. Clearing is back to zero.
   */
  payoutReturnRefunded({
    walletId,
    returned,
    stablecoin,
  }: {
    walletId: string;
    returned: Money;
    stablecoin: Money;
  }): LedgerEntryInput[] {
    return entriesOf(
      [ledgerAccounts.fiatClearing(returned.currency), returned.negated()],
      [ledgerAccounts.fx(returned.currency), returned],
      [ledgerAccounts.fx(stablecoin.currency), stablecoin.negated()],
      [ledgerAccounts.wallet(walletId, stablecoin.currency as LedgerCurrency), stablecoin],
    );
  },
};

// ---- what each wallet-transfer step posts ----

export interface WalletTransferAmounts {
  fromWalletId: string;
  /** Null for an outside address. */
  toWalletId: string | null;
  amount: Money;
  networkFee: Money;
}

/**
 * Postings of a wallet transfer: the hold at creation (the source wallet's balance cannot go below
 * zero, checked under its row lock), then either its delivery or its return. Balanced per currency;
 * the hold account's entries of one transfer add up to zero when it ends.
 */
export const walletTransferEntries = {
  /** Creation: amount and network fee leave the source wallet's spendable balance. */
  hold({ fromWalletId, amount, networkFee }: WalletTransferAmounts): LedgerEntryInput[] {
    const total = amount.plus(networkFee);
    return entriesOf(
      [ledgerAccounts.wallet(fromWalletId, amount.currency as LedgerCurrency), total.negated()],
      [ledgerAccounts.walletTransferHolds(fromWalletId, amount.currency), total],
    );
  },

  /**
   * Completion: to a service-managed wallet, credited to it; to an outside address, out to the chain
   * (`settlement`), the network fee to the network-fee account that pays the chain.
   */
  delivered({ fromWalletId, toWalletId, amount, networkFee }: WalletTransferAmounts): LedgerEntryInput[] {
    return entriesOf(
      [ledgerAccounts.walletTransferHolds(fromWalletId, amount.currency), amount.plus(networkFee).negated()],
      [
        toWalletId
          ? ledgerAccounts.wallet(toWalletId, amount.currency as LedgerCurrency)
          : ledgerAccounts.settlement(amount.currency),
        amount,
      ],
      [ledgerAccounts.networkFees(amount.currency), networkFee],
    );
  },

  /** Failure: the hold goes back to the source wallet in full, fee included. */
  returned(amounts: WalletTransferAmounts): LedgerEntryInput[] {
    return reversed(walletTransferEntries.hold(amounts));
  },
};

// ---- a transaction's postings, from its stored amounts ----
// Those that more than one step makes (the write of a payout from a wallet, a deposit, a leg, a refund that undoes
// them), and the reference each posting carries (`transaction:<id>:<step>`: posting a step twice is a replay).

/** What a transaction's postings are computed from: its amounts, partner and wallet. */
export type TransactionPostingColumns = TransactionAmountColumns & { partnerId: string; walletId: string | null };

export const ledgerReference = (transactionId: string, step: string) => `transaction:${transactionId}:${step}`;

/**
 * Whose in-transit account carries the stablecoin until it is delivered or sold: the transaction's
 * wallet, or for a payout whose stablecoin was sent in on chain, the service's collection.
 */
export const carrierOf = (row: { walletId: string | null }) => row.walletId ?? 'collection';

/** Leg 1's entries: fees where the quote said, the rest converted and held in transit. */
export function leg1Entries(row: TransactionPostingColumns): LedgerEntryInput[] {
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
export function leg1FeesReturnedEntries(row: TransactionPostingColumns): LedgerEntryInput[] {
  return settlementEntries.feesReturned({ partnerId: row.partnerId, fees: amountsOf(row).fees });
}

/** A refund's sell-back of leg 1's stablecoin, for `proceeds` from the exchange (settlementEntries.soldBack). */
export function sellBackEntries(row: TransactionPostingColumns, proceeds: Money): LedgerEntryInput[] {
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
export function payoutFundingEntries(row: TransactionPostingColumns): LedgerEntryInput[] {
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

/** A deposit as the ledger needs it: which one, for which transaction, how much. */
export interface DepositOnLedger {
  id: string;
  transactionId: string;
  currency: Currency;
  amount: { toString(): string };
}

const depositMoney = (deposit: DepositOnLedger) => Money.of(deposit.currency, deposit.amount.toString());

/**
 * A deposit its transaction did not take (it came late): held in clearing from the moment it arrived, under its own
 * reference, until its own return pays it out (lateDepositReturned).
 */
export function lateDepositReceived(deposit: DepositOnLedger): LedgerPosting {
  return {
    reference: `deposit:${deposit.id}:received`,
    description: `Deposit ${deposit.id} for transaction ${deposit.transactionId}, not expected`,
    entries: settlementEntries.depositReceived(depositMoney(deposit)),
  };
}

/** The late deposit sent back: out of clearing to the sender. */
export function lateDepositReturned(deposit: DepositOnLedger): LedgerPosting {
  return {
    reference: `deposit:${deposit.id}:returned`,
    description: `Return of deposit ${deposit.id}`,
    entries: settlementEntries.paidOut(depositMoney(deposit)),
  };
}
