// The ledger of stablecoin balances: double-entry postings whose entries add up to zero per
// currency. Each account's balance is maintained in the same transaction as its entries, under a
// row lock, and a wallet's balance can never go below zero (checked here, and by a CHECK constraint).
// Amounts are decimal strings or the money type's decimals (src/domain/money.ts), never JavaScript
// numbers (the money type's rule); balances are shown through the money type (src/presenters/wallets.ts).
import type { Db, Prisma } from './db';
import { newId } from './domain/ids';
import {
  AmountValue,
  Decimal,
  decimalsOf,
  isCurrency,
  isStablecoin,
  numberAmountProblem,
  Stablecoin,
  stablecoins,
} from './domain/money';

/** The ledger keeps stablecoin balances, at their currency's decimal places (money.ts). */
export type LedgerCurrency = Stablecoin;
export const walletCurrencies: LedgerCurrency[] = stablecoins;

export type LedgerAccountRef =
  | { walletId: string; currency: LedgerCurrency }
  /** A system account (e.g. `settlement`): the outside world seen from the ledger; may go negative. */
  | { system: string; currency: LedgerCurrency };

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

export type LedgerErrorCode = 'invalid_posting' | 'unbalanced' | 'unknown_account' | 'insufficient_funds';

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
  const totals = new Map<LedgerCurrency, Decimal>();
  const entries = posting.entries.map(({ account, amount: raw }) => {
    if (!isCurrency(account.currency) || !isStablecoin(account.currency)) {
      throw new LedgerError('invalid_posting', `unknown currency ${String(account.currency)}`);
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
 * back with the state change it belongs to). Refuses unbalanced postings and overdrafts of wallet
 * accounts; locks the accounts in id order so concurrent postings cannot deadlock or lose updates.
 */
export async function postLedgerEntries(tx: Prisma.TransactionClient, posting: LedgerPosting): Promise<PostingResult> {
  const entries = checkPosting(posting);
  const previous = await tx.ledgerTransaction.findUnique({ where: { reference: posting.reference } });
  if (previous) return { transactionId: previous.id, replayed: true };

  const accountIds = new Map<string, string>();
  for (const { account } of entries) {
    const key = keyOf(account);
    if (accountIds.has(key)) continue;
    accountIds.set(key, await resolveAccount(tx, account));
  }
  const ids = [...new Set(accountIds.values())].sort();
  const locked = await tx.$queryRaw<Array<{ id: string; balance: Prisma.Decimal; allow_negative: boolean }>>`
    SELECT id::text, balance, allow_negative FROM ledger_accounts WHERE id = ANY(${ids}::uuid[]) ORDER BY id FOR UPDATE`;

  const deltas = new Map<string, Decimal>();
  for (const { account, amount } of entries) {
    const id = accountIds.get(keyOf(account)) as string;
    deltas.set(id, (deltas.get(id) ?? new Decimal(0)).plus(amount));
  }
  for (const row of locked) {
    const after = new Decimal(row.balance.toString()).plus(deltas.get(row.id) ?? 0);
    if (!row.allow_negative && after.isNegative()) {
      const entry = entries.find(({ account }) => accountIds.get(keyOf(account)) === row.id);
      throw new LedgerError(
        'insufficient_funds',
        `${keyOf(entry?.account as LedgerAccountRef)} holds ${new Decimal(row.balance.toString()).toString()}, ` +
          `less than the ${deltas.get(row.id)?.neg().toString()} debited`,
      );
    }
  }

  const transactionId = newId();
  await tx.ledgerTransaction.create({
    data: { id: transactionId, reference: posting.reference, description: posting.description },
  });
  await tx.ledgerEntry.createMany({
    data: entries.map(({ account, amount }) => ({
      id: newId(),
      transactionId,
      accountId: accountIds.get(keyOf(account)) as string,
      currency: account.currency,
      amount: amount.toFixed(),
    })),
  });
  for (const [id, delta] of deltas) {
    if (delta.isZero()) continue;
    await tx.ledgerAccount.update({ where: { id }, data: { balance: { increment: delta.toFixed() } } });
  }
  return { transactionId, replayed: false };
}

async function resolveAccount(tx: Prisma.TransactionClient, account: LedgerAccountRef): Promise<string> {
  if ('walletId' in account) {
    const found = await tx.ledgerAccount.findUnique({
      where: { walletId_currency: { walletId: account.walletId, currency: account.currency } },
    });
    if (!found)
      throw new LedgerError('unknown_account', `no ${account.currency} account for wallet ${account.walletId}`);
    return found.id;
  }
  // System accounts appear on first use; ON CONFLICT makes concurrent first uses agree on one row.
  await tx.$executeRaw`
    INSERT INTO ledger_accounts (id, system_code, currency, allow_negative, updated_at)
    VALUES (${newId()}::uuid, ${account.system}, ${account.currency}, true, now())
    ON CONFLICT (system_code, currency) DO NOTHING`;
  const found = await tx.ledgerAccount.findUniqueOrThrow({
    where: { systemCode_currency: { systemCode: account.system, currency: account.currency } },
  });
  return found.id;
}
