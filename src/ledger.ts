// The ledger: double-entry postings whose entries add up to zero per currency, in every currency of
// the money type (src/domain/money.ts): stablecoin balances of wallets, and the service's own fiat
// and stablecoin accounts that settlement moves money through (ledgerAccounts below). Each
// account's balance is maintained in the same transaction as its entries, under a row lock; wallet
// balances (and accounts opened as non-negative) can never go below zero (checked here, and by a
// CHECK constraint for wallets). Amounts are decimal strings or the money type's decimals, never
// JavaScript numbers (the money type's rule); balances are shown through the money type
// (src/presenters/wallets.ts).
import type { Db, SqlTransaction } from './persistence/database';
import { newId } from './domain/ids';
import {
  AmountValue,
  Currency,
  Decimal,
  decimalsOf,
  isCurrency,
  isStablecoin,
  Money,
  numberAmountProblem,
  Stablecoin,
  stablecoins,
} from './domain/money';

/** Wallets hold stablecoins, at their currency's decimal places (money.ts). */
export type LedgerCurrency = Stablecoin;
export const walletCurrencies: LedgerCurrency[] = stablecoins;

export type LedgerAccountRef =
  | { walletId: string; currency: LedgerCurrency }
  /**
   * A system account of the service, in any currency, opened on first use. It may go negative
   * (e.g. `settlement`, the outside world seen from the ledger) unless opened with allowNegative false.
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
   * Wallet transfers between creation and their end: the amount and fee taken from the source wallet
   * wait here; never negative, and each transfer's entries add up to zero once it completes or fails.
   */
  walletTransferHolds: (currency: Currency): LedgerAccountRef => ({
    system: 'wallet_transfer_holds',
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

export interface PostingResult {
  transactionId: string;
  /** True when the reference had been posted before and nothing was written now. */
  replayed: boolean;
}

/** Opens a wallet's balance in every ledger currency, at zero. */
export async function openWalletLedgerAccounts(db: Db, walletId: string): Promise<void> {
  await db.ledgerAccount.createMany({
    data: walletCurrencies.map((currency) => ({ id: newId(), walletId, currency })),
    skipDuplicates: true,
  });
}

function keyOf(account: LedgerAccountRef): string {
  return 'walletId' in account
    ? `wallet:${account.walletId}:${account.currency}`
    : `system:${account.system}:${account.currency}`;
}

function checkPosting(posting: LedgerPosting): Array<{ account: LedgerAccountRef; amount: Decimal }> {
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

/**
 * Posts a balanced set of entries inside the caller's transaction (so the posting commits or rolls
 * back with the state change it belongs to). Refuses unbalanced postings and overdrafts of accounts
 * that may not go negative; locks the accounts in id order so concurrent postings cannot deadlock or
 * lose updates. The reference is claimed first (INSERT ... ON CONFLICT DO NOTHING): a posting of a
 * reference already posted, also by a concurrent transaction that commits meanwhile, is a replay
 * that writes nothing, provided it has exactly the same entries (otherwise `replay_mismatch`).
 */
export async function postLedgerEntries(tx: SqlTransaction, posting: LedgerPosting): Promise<PostingResult> {
  const entries = checkPosting(posting);
  const transactionId = newId();
  const claimed = await tx.$queryRaw<Array<{ id: string }>>`
    INSERT INTO ledger_transactions (id, reference, description)
    VALUES (${transactionId}::uuid, ${posting.reference}, ${posting.description})
    ON CONFLICT (reference) DO NOTHING
    RETURNING id::text`;
  if (claimed.length === 0) return replayOf(tx, posting.reference, entries);

  const accounts = await lockAccounts(
    tx,
    entries.map(({ account }) => account),
  );
  const deltas = new Map<string, Decimal>();
  for (const { account, amount } of entries) {
    const { id } = accounts.get(keyOf(account))!;
    deltas.set(id, (deltas.get(id) ?? new Decimal(0)).plus(amount));
  }
  for (const [key, row] of accounts) {
    const after = row.balance.plus(deltas.get(row.id) ?? 0);
    if (!row.allowNegative && after.isNegative()) {
      throw new LedgerError(
        'insufficient_funds',
        `${key} holds ${row.balance.toString()}, less than the ${deltas.get(row.id)?.neg().toString()} debited`,
      );
    }
  }

  // Entries and balances in one statement each (through Prisma's model API, one compiled query per entry and per
  // account cost most of a settlement step's CPU: `npm run bench`).
  await tx.$executeRaw`
    INSERT INTO ledger_entries (id, transaction_id, account_id, currency, amount)
    SELECT e.id, ${transactionId}::uuid, e.account_id, e.currency, e.amount
    FROM unnest(
      ${entries.map(() => newId())}::uuid[],
      ${entries.map(({ account }) => accounts.get(keyOf(account))!.id)}::uuid[],
      ${entries.map(({ account }) => account.currency)}::text[],
      ${entries.map(({ amount }) => amount.toFixed())}::numeric[]
    ) AS e(id, account_id, currency, amount)`;
  const changed = [...deltas].filter(([, delta]) => !delta.isZero());
  if (changed.length > 0) {
    await tx.$executeRaw`
      UPDATE ledger_accounts a SET balance = a.balance + d.delta, updated_at = now()
      FROM unnest(
        ${changed.map(([id]) => id)}::uuid[],
        ${changed.map(([, delta]) => delta.toFixed())}::numeric[]
      ) AS d(id, delta)
      WHERE a.id = d.id`;
  }
  return { transactionId, replayed: false };
}

/** The earlier posting of a reference, when it has exactly these entries; otherwise replay_mismatch. */
async function replayOf(
  tx: SqlTransaction,
  reference: string,
  entries: Array<{ account: LedgerAccountRef; amount: Decimal }>,
): Promise<PostingResult> {
  const previous = await tx.$queryRaw<
    Array<{ id: string; wallet_id: string | null; system_code: string | null; currency: string; amount: unknown }>
  >`
    SELECT t.id::text AS id, a.wallet_id::text AS wallet_id, a.system_code, e.currency, e.amount
    FROM ledger_transactions t
    JOIN ledger_entries e ON e.transaction_id = t.id
    JOIN ledger_accounts a ON a.id = e.account_id
    WHERE t.reference = ${reference}`;
  if (previous.length === 0) throw new Error(`ledger posting ${reference} has no entries`);
  const describe = (key: string, currency: string, amount: AmountValue) =>
    `${key}:${currency}:${new Decimal(amount.toString()).toFixed()}`;
  const stored = previous
    .map(({ wallet_id, system_code, currency, amount }) =>
      describe(wallet_id ? `wallet:${wallet_id}` : `system:${system_code ?? ''}`, currency, String(amount)),
    )
    .sort();
  const requested = entries
    .map(({ account, amount }) =>
      describe(
        'walletId' in account ? `wallet:${account.walletId}` : `system:${account.system}`,
        account.currency,
        amount,
      ),
    )
    .sort();
  if (stored.length !== requested.length || stored.some((line, index) => line !== requested[index])) {
    throw new LedgerError(
      'replay_mismatch',
      `reference ${reference} was posted before with other entries (${stored.join(', ')}); refusing ${requested.join(', ')}`,
    );
  }
  return { transactionId: previous[0]!.id, replayed: true };
}

interface LockedAccount {
  id: string;
  balance: Decimal;
  allowNegative: boolean;
}

/**
 * The accounts of a posting under their row locks, by keyOf: wallet accounts must exist (opened with the wallet);
 * system accounts appear on first use (ON CONFLICT makes concurrent first uses agree on one row). Locked in id
 * order, so concurrent postings cannot deadlock or lose updates.
 */
async function lockAccounts(tx: SqlTransaction, refs: LedgerAccountRef[]): Promise<Map<string, LockedAccount>> {
  const byKey = new Map(refs.map((ref) => [keyOf(ref), ref]));
  const keys = [...byKey.keys()].sort();
  const systems = keys.map((key) => byKey.get(key)!).filter((ref) => !('walletId' in ref));
  const wallets = keys.map((key) => byKey.get(key)!).filter((ref) => 'walletId' in ref);
  const systemCodes = systems.map((ref) => ('system' in ref ? ref.system : ''));
  const systemCurrencies = systems.map((ref) => ref.currency as string);
  if (systems.length > 0) {
    await tx.$executeRaw`
      INSERT INTO ledger_accounts (id, system_code, currency, allow_negative, updated_at)
      SELECT s.id, s.system_code, s.currency, s.allow_negative, now()
      FROM unnest(
        ${systems.map(() => newId())}::uuid[],
        ${systemCodes}::text[],
        ${systemCurrencies}::text[],
        ${systems.map((ref) => ('system' in ref ? (ref.allowNegative ?? true) : true))}::boolean[]
      ) AS s(id, system_code, currency, allow_negative)
      ON CONFLICT (system_code, currency) DO NOTHING`;
  }
  const rows = await tx.$queryRaw<
    Array<{
      id: string;
      wallet_id: string | null;
      system_code: string | null;
      currency: string;
      balance: unknown;
      allow_negative: boolean;
    }>
  >`
    SELECT id::text, wallet_id::text, system_code, currency, balance, allow_negative FROM ledger_accounts
    WHERE id IN (
      SELECT a.id FROM ledger_accounts a
      JOIN unnest(${systemCodes}::text[], ${systemCurrencies}::text[]) AS s(code, currency)
        ON a.system_code = s.code AND a.currency = s.currency
      UNION ALL
      SELECT a.id FROM ledger_accounts a
      JOIN unnest(
        ${wallets.map((ref) => ('walletId' in ref ? ref.walletId : ''))}::uuid[],
        ${wallets.map((ref) => ref.currency as string)}::text[]
      ) AS w(wallet_id, currency)
        ON a.wallet_id = w.wallet_id AND a.currency = w.currency
    )
    ORDER BY id FOR UPDATE`;
  const locked = new Map<string, LockedAccount>();
  for (const row of rows) {
    const key = row.wallet_id
      ? keyOf({ walletId: row.wallet_id, currency: row.currency as LedgerCurrency })
      : keyOf({ system: row.system_code ?? '', currency: row.currency as Currency });
    locked.set(key, {
      id: row.id,
      balance: new Decimal(String(row.balance)),
      allowNegative: row.allow_negative,
    });
  }
  for (const [key, ref] of byKey) {
    if (!locked.has(key)) {
      throw new LedgerError(
        'unknown_account',
        'walletId' in ref ? `no ${ref.currency} account for wallet ${ref.walletId}` : `no account ${key}`,
      );
    }
  }
  return locked;
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
      [ledgerAccounts.walletTransferHolds(amount.currency), total],
    );
  },

  /**
   * Completion: to a service-managed wallet, credited to it; to an outside address, out to the chain
   * (`settlement`), the network fee to the network-fee account that pays the chain.
   */
  delivered({ toWalletId, amount, networkFee }: WalletTransferAmounts): LedgerEntryInput[] {
    return entriesOf(
      [ledgerAccounts.walletTransferHolds(amount.currency), amount.plus(networkFee).negated()],
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
