// The ledger's postings and balances in the database (its rules, accounts and what each step posts:
// src/domain/ledger.ts): double-entry postings whose entries add up to zero per currency, in every currency of
// the money type (src/domain/money.ts): stablecoin balances of wallets, and the service's own fiat
// and stablecoin accounts that settlement moves money through (ledgerAccounts below). Amounts are
// decimal strings or the money type's decimals, never JavaScript numbers (the money type's rule);
// balances are shown through the money type (src/presenters/wallets.ts).
//
// Two kinds of account, by whether it may go negative (allow_negative, fixed when it is opened):
// - Those that may not (wallets, in_transit:<wallet>, wallet_transfer_holds:<wallet>) keep a running
//   balance in their row, changed in the same transaction as their entries under the row's lock, and
//   never below zero (checked here, and by a CHECK constraint).
// - Those that may (settlement, fiat_clearing, fx, fee_revenue, network_fees, partner_fees:<partner>,
//   sandbox_funding) are never locked and keep no running balance (the column is null): their balance
//   is the sum of their entries (ledgerBalances). Every settlement of a currency posts to them; a
//   running balance would be a row that all of them wait on in turn.
//
// No deadlock, by construction: every database transaction takes its locks in one order. First the
// row of the resource its step changes (the transaction, deposit or wallet transfer), then ALL the
// running-balance accounts of all its postings, at once and in id order (postLedgerEntries takes
// every posting of the transaction in one call; a step that reads a balance first locks the same
// accounts with lockLedgerAccounts), then the posting references (a reference belongs to one step, and
// runs of one step queue on its resource row first). A second lock in the same database transaction
// that names another account is refused, as it could wait after taking locks.
import { type DatabaseTransaction, isDatabaseTransaction, sqlOf, type Database } from './internal/database';
import { type RawBuilder, sql } from 'kysely';
import { newId } from '../domain/ids';
import { AmountValue, Decimal, type Currency } from '../domain/money';
import {
  checkPosting,
  keyOf,
  LedgerAccountRef,
  LedgerCurrency,
  LedgerError,
  LedgerPosting,
  walletCurrencies,
} from '../domain/ledger';

export interface PostingResult {
  transactionId: string;
  /** True when the reference had been posted before and nothing was written now. */
  replayed: boolean;
}

/** Opens a wallet's balance in every ledger currency, at zero. */
export async function openWalletLedgerAccounts(db: Database, walletId: string): Promise<void> {
  await sqlOf(db)
    .insertInto('ledgerAccounts')
    .values(walletCurrencies.map((currency) => ({ id: newId(), walletId, currency, updatedAt: new Date() })))
    .onConflict((conflict) => conflict.doNothing())
    .execute();
}

/**
 * Posts balanced sets of entries inside the caller's transaction (so the postings commit or roll back with the
 * state change they belong to): every posting that database transaction makes, in ONE call. Refuses unbalanced
 * postings and overdrafts of accounts that may not go negative (on their balance after all the postings). Locks
 * the accounts of all the postings at once (lockLedgerAccounts) before anything else, then claims the references
 * (INSERT ... ON CONFLICT DO NOTHING): a posting of a reference already posted, also by a concurrent transaction
 * that commits meanwhile, is a replay that writes nothing, provided it has exactly the same entries (otherwise
 * `replay_mismatch`). Answers one result per posting, in their order.
 */
export async function postLedgerEntries(
  tx: DatabaseTransaction,
  ...postings: LedgerPosting[]
): Promise<PostingResult[]> {
  const checked = postings.map((posting) => ({ posting, entries: checkPosting(posting) }));
  const references = new Set(postings.map(({ reference }) => reference));
  if (references.size < postings.length) throw new LedgerError('invalid_posting', 'a reference posted twice at once');
  const accounts = await lockAccounts(
    tx,
    checked.flatMap(({ entries }) => entries.map(({ account }) => account)),
  );
  // One posting the balances allow (most steps): its reference claimed and its entries written in one statement; a
  // reference posted before writes nothing there and is checked as a replay.
  const [single] = checked;
  if (checked.length === 1 && single) {
    const transactionId = newId();
    const plan = writePlan(
      accounts,
      single.entries.map((entry) => ({ transactionId, ...entry })),
    );
    if (!plan.overdrawn) {
      const { posting } = single;
      const { rows } = await sql`
        WITH claimed AS (
          INSERT INTO ledger_transactions (id, reference, description)
          VALUES (${transactionId}::uuid, ${posting.reference}, ${posting.description})
          ON CONFLICT (reference) DO NOTHING
          RETURNING id
        ), ${writes(plan, sql`EXISTS (SELECT 1 FROM claimed)`)}
        SELECT count(*)::int AS claimed FROM claimed`.execute(sqlOf(tx));
      if ((rows[0] as { claimed: number }).claimed === 1) return [{ transactionId, replayed: false }];
      return [await replayOf(tx, posting.reference, single.entries)];
    }
  }
  const claimed = await claimReferences(tx, postings);
  const results: PostingResult[] = [];
  const written: WrittenEntry[] = [];
  for (const { posting, entries } of checked) {
    const transactionId = claimed.get(posting.reference);
    if (transactionId === undefined) {
      results.push(await replayOf(tx, posting.reference, entries));
      continue;
    }
    written.push(...entries.map((entry) => ({ transactionId, ...entry })));
    results.push({ transactionId, replayed: false });
  }
  if (written.length === 0) return results;
  const plan = writePlan(accounts, written);
  if (plan.overdrawn) throw plan.overdrawn;
  await sql`WITH ${writes(plan, sql`true`)} SELECT 1`.execute(sqlOf(tx));
  return results;
}

type WrittenEntry = { transactionId: string; account: LedgerAccountRef; amount: Decimal };

interface WritePlan {
  written: WrittenEntry[];
  accounts: Map<string, AccountRow>;
  /** The balance after each entry of a running-balance account, in the order written; null for the others. */
  balancesAfter: Array<string | null>;
  /** Running-balance accounts whose balance changes, with the change. */
  changed: Array<[string, Decimal]>;
  /** Set when an account that may not go negative would. */
  overdrawn: LedgerError | null;
}

/** What writing `written` does to the locked accounts: running balances, and whether any would go negative. */
function writePlan(accounts: Map<string, AccountRow>, written: WrittenEntry[]): WritePlan {
  const deltas = new Map<string, Decimal>();
  for (const { account, amount } of written) {
    const key = keyOf(account);
    if (accounts.get(key)!.balance !== null) deltas.set(key, (deltas.get(key) ?? new Decimal(0)).plus(amount));
  }
  let overdrawn: LedgerError | null = null;
  for (const [key, delta] of deltas) {
    const before = accounts.get(key)!.balance!;
    if (before.plus(delta).isNegative()) {
      overdrawn = new LedgerError(
        'insufficient_funds',
        `${key} holds ${before.toString()}, less than the ${delta.neg().toString()} debited`,
      );
      break;
    }
  }
  const running = new Map<string, Decimal>();
  const balancesAfter = written.map(({ account, amount }) => {
    const key = keyOf(account);
    const before = running.get(key) ?? accounts.get(key)!.balance;
    if (before === null) return null;
    running.set(key, before.plus(amount));
    return before.plus(amount).toFixed();
  });
  const changed = [...deltas].filter(([, delta]) => !delta.isZero());
  return { written, accounts, balancesAfter, changed, overdrawn };
}

/**
 * The entries and the running balances of a plan as two data-modifying parts of one statement, written when `when`
 * holds. (Through Prisma's model API, one compiled query per entry and per account cost most of a settlement step's
 * CPU; each statement more is a round trip: `npm run bench`.) The partner of an entry is its wallet's or its fee
 * account's (balance transactions); clock_timestamp, as the entries are written after their accounts' locks.
 */
function writes({ written, accounts, balancesAfter, changed }: WritePlan, when: RawBuilder<unknown>) {
  return sql`entries AS (
      INSERT INTO ledger_entries (id, transaction_id, account_id, currency, amount, balance_after, partner_id, created_at)
      SELECT e.id, e.transaction_id, e.account_id, e.currency, e.amount, e.balance_after,
        COALESCE(w.partner_id, CASE WHEN a.system_code ~ '^partner_fees:[0-9a-f-]{36}$'
          THEN substr(a.system_code, 14)::uuid END),
        clock_timestamp()
      FROM unnest(
        ${written.map(() => newId())}::uuid[],
        ${written.map(({ transactionId }) => transactionId)}::uuid[],
        ${written.map(({ account }) => accounts.get(keyOf(account))!.id)}::uuid[],
        ${written.map(({ account }) => account.currency)}::currency[],
        ${written.map(({ amount }) => amount.toFixed())}::numeric[],
        ${balancesAfter}::numeric[]
      ) WITH ORDINALITY AS e(id, transaction_id, account_id, currency, amount, balance_after, position)
      JOIN ledger_accounts a ON a.id = e.account_id
      LEFT JOIN wallets w ON w.id = a.wallet_id
      WHERE ${when}
      ORDER BY e.position
    ), balances AS (
      UPDATE ledger_accounts a SET balance = a.balance + d.delta, updated_at = now()
      FROM unnest(
        ${changed.map(([key]) => accounts.get(key)!.id)}::uuid[],
        ${changed.map(([, delta]) => delta.toFixed())}::numeric[]
      ) AS d(id, delta)
      WHERE a.id = d.id AND ${when}
    )`;
}

/**
 * Claims the references of postings, in their order (the order they are read back in): the id of each posting
 * claimed now; a reference posted before is not in the answer.
 */
async function claimReferences(tx: DatabaseTransaction, postings: LedgerPosting[]): Promise<Map<string, string>> {
  const rows = (
    await sql`
    INSERT INTO ledger_transactions (id, reference, description)
    SELECT t.id, t.reference, t.description
    FROM unnest(
      ${postings.map(() => newId())}::uuid[],
      ${postings.map(({ reference }) => reference)}::text[],
      ${postings.map(({ description }) => description)}::text[]
    ) WITH ORDINALITY AS t(id, reference, description, position)
    ORDER BY t.position
    ON CONFLICT (reference) DO NOTHING
    RETURNING id::text, reference`.execute(sqlOf(tx))
  ).rows as Array<{ id: string; reference: string }>;
  return new Map(rows.map(({ id, reference }) => [reference, id]));
}
/** The earlier posting of a reference, when it has exactly these entries; otherwise replay_mismatch. */
async function replayOf(
  tx: DatabaseTransaction,
  reference: string,
  entries: Array<{ account: LedgerAccountRef; amount: Decimal }>,
): Promise<PostingResult> {
  const previous = (
    await sql`
    SELECT t.id::text AS id, a.wallet_id::text AS wallet_id, a.system_code, e.currency, e.amount
    FROM ledger_transactions t
    JOIN ledger_entries e ON e.transaction_id = t.id
    JOIN ledger_accounts a ON a.id = e.account_id
    WHERE t.reference = ${reference}`.execute(sqlOf(tx))
  ).rows as Array<{
    id: string;
    walletId: string | null;
    systemCode: string | null;
    currency: string;
    amount: unknown;
  }>;
  if (previous.length === 0) throw new Error(`ledger posting ${reference} has no entries`);
  const describe = (key: string, currency: string, amount: AmountValue) =>
    `${key}:${currency}:${new Decimal(amount.toString()).toFixed()}`;
  const stored = previous
    .map(({ walletId, systemCode, currency, amount }) =>
      describe(walletId ? `wallet:${walletId}` : `system:${systemCode ?? ''}`, currency, String(amount)),
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

interface AccountRow {
  id: string;
  /** The running balance, as it is under the row's lock; null for an account that may go negative. */
  balance: Decimal | null;
}

/** The accounts each open database transaction named in its lock: a later lock in it may name only these. */
const lockedIn = new WeakMap<DatabaseTransaction, Set<string>>();

/**
 * The accounts of a database transaction's postings, by keyOf, the ones with a running balance under their row
 * locks. Wallet accounts must exist (opened with the wallet); system accounts appear on first use (ON CONFLICT makes
 * concurrent first uses agree on one row, inserted in key order). The accounts are found, and the running-balance
 * ones locked, in one statement, in id order; FOR NO KEY UPDATE, as only the balance changes, so the key-share locks
 * that new entries take on their accounts (the foreign key) never wait on it. The first lock of a database
 * transaction must name every account it will post to: a later one naming another could wait on a lock after taking
 * others.
 */
async function lockAccounts(tx: DatabaseTransaction, refs: LedgerAccountRef[]): Promise<Map<string, AccountRow>> {
  // A client, not a transaction: its postings would not commit with their state change.
  if (!isDatabaseTransaction(tx)) throw new Error('the ledger posts and locks inside a database transaction only');
  const byKey = new Map(refs.map((ref) => [keyOf(ref), ref]));
  const keys = [...byKey.keys()].sort();
  const earlier = lockedIn.get(tx);
  if (earlier) {
    const added = keys.filter((key) => !earlier.has(key));
    if (added.length > 0) {
      throw new Error(
        `ledger accounts ${added.join(', ')} locked after others in one database transaction: ` +
          'post all its postings in one postLedgerEntries call, after one lockLedgerAccounts of all their accounts',
      );
    }
  } else {
    lockedIn.set(tx, new Set(keys));
  }
  const systems = keys.map((key) => byKey.get(key)!).filter((ref) => !('walletId' in ref));
  const wallets = keys.map((key) => byKey.get(key)!).filter((ref) => 'walletId' in ref);
  const systemCodes = systems.map((ref) => ('system' in ref ? ref.system : ''));
  const systemCurrencies = systems.map((ref) => ref.currency);
  // Found and locked in one statement; when a system account is missing (its first use) nothing is locked, the
  // missing ones are opened, and the statement runs again: the locks are still all taken at once.
  const findAndLock = async () =>
    (
      await sql`
      WITH found AS MATERIALIZED (
        SELECT a.id, a.wallet_id, a.system_code, a.currency, NOT a.allow_negative AS locks
        FROM ledger_accounts a
        JOIN unnest(${systemCodes}::text[], ${systemCurrencies}::currency[]) AS s(code, currency)
          ON a.system_code = s.code AND a.currency = s.currency
        UNION ALL
        SELECT a.id, a.wallet_id, a.system_code, a.currency, NOT a.allow_negative
        FROM ledger_accounts a
        JOIN unnest(
          ${wallets.map((ref) => ('walletId' in ref ? ref.walletId : ''))}::uuid[],
          ${wallets.map((ref) => ref.currency)}::currency[]
        ) AS w(wallet_id, currency)
          ON a.wallet_id = w.wallet_id AND a.currency = w.currency
      ), locked AS MATERIALIZED (
        SELECT a.id, a.balance FROM ledger_accounts a
        WHERE a.id IN (SELECT id FROM found WHERE locks) AND (SELECT count(*) FROM found) = ${keys.length}
        ORDER BY a.id FOR NO KEY UPDATE
      )
      SELECT f.id::text, f.wallet_id::text, f.system_code, f.currency, f.locks, l.balance::text
      FROM found f LEFT JOIN locked l ON l.id = f.id`.execute(sqlOf(tx))
    ).rows as Array<{
      id: string;
      walletId: string | null;
      systemCode: string | null;
      currency: Currency;
      locks: boolean;
      balance: string | null;
    }>;
  let rows = await findAndLock();
  const missingSystems = systems.length - rows.filter((row) => row.walletId === null).length;
  if (missingSystems > 0 && !earlier) {
    await sql`
      INSERT INTO ledger_accounts (id, system_code, currency, allow_negative, balance, updated_at)
      SELECT s.id, s.system_code, s.currency, s.allow_negative, CASE WHEN s.allow_negative THEN NULL ELSE 0 END, now()
      FROM unnest(
        ${systems.map(() => newId())}::uuid[],
        ${systemCodes}::text[],
        ${systemCurrencies}::currency[],
        ${systems.map((ref) => ('system' in ref ? (ref.allowNegative ?? true) : true))}::boolean[]
      ) AS s(id, system_code, currency, allow_negative)
      ON CONFLICT (system_code, currency) DO NOTHING`.execute(sqlOf(tx));
    rows = await findAndLock();
  }
  const found = new Map<string, AccountRow>();
  for (const row of rows) {
    const key = row.walletId
      ? keyOf({ walletId: row.walletId, currency: row.currency as LedgerCurrency })
      : keyOf({ system: row.systemCode ?? '', currency: row.currency });
    found.set(key, { id: row.id, balance: row.locks && row.balance !== null ? new Decimal(row.balance) : null });
  }
  for (const [key, ref] of byKey) {
    if (!found.has(key)) {
      throw new LedgerError(
        'unknown_account',
        'walletId' in ref ? `no ${ref.currency} account for wallet ${ref.walletId}` : `no account ${key}`,
      );
    }
  }
  return found;
}

/** Running balances of locked accounts (lockLedgerAccounts). */
export interface LockedBalances {
  /** The balance of one of the locked accounts that keep a running balance, as it is under its lock. */
  of(account: LedgerAccountRef): Decimal;
}

/**
 * Locks the accounts a database transaction is about to post to, ALL of them (every account of every posting it
 * will make), and answers their running balances: for a step that checks a balance before it posts (a wallet
 * transfer's hold). The postings then find their accounts locked already. Call it after locking the resource row.
 */
export async function lockLedgerAccounts(
  tx: DatabaseTransaction,
  accounts: LedgerAccountRef[],
): Promise<LockedBalances> {
  const rows = await lockAccounts(tx, accounts);
  return {
    of(account) {
      const balance = rows.get(keyOf(account))?.balance;
      if (balance === null || balance === undefined) {
        throw new Error(`${keyOf(account)} is not a locked account with a running balance`);
      }
      return balance;
    },
  };
}

/**
 * Balances of accounts, in their order, as committed (no lock): the running balance of an account that keeps one,
 * otherwise the sum of its entries; zero for an account never posted to. The one way to read a system account's
 * balance (those that may go negative have no running balance).
 */
export async function ledgerBalances(db: Database, accounts: LedgerAccountRef[]): Promise<Decimal[]> {
  const rows = (
    await sql`
    SELECT COALESCE(a.balance, (SELECT sum(e.amount) FROM ledger_entries e WHERE e.account_id = a.id), 0)::text
      AS balance
    FROM unnest(
      ${accounts.map((ref) => ('walletId' in ref ? ref.walletId : null))}::uuid[],
      ${accounts.map((ref) => ('system' in ref ? ref.system : null))}::text[],
      ${accounts.map((ref) => ref.currency)}::currency[]
    ) WITH ORDINALITY AS r(wallet_id, system_code, currency, position)
    LEFT JOIN ledger_accounts a
      ON a.currency = r.currency AND (a.wallet_id = r.wallet_id OR a.system_code = r.system_code)
    ORDER BY r.position`.execute(sqlOf(db))
  ).rows as Array<{ balance: string }>;
  return rows.map(({ balance }) => new Decimal(balance));
}

/** True when a posting with this reference exists (a step posted already). */
export async function isPosted(db: Database, reference: string): Promise<boolean> {
  const rows = (
    await sql`
    SELECT 1 AS found FROM ledger_transactions WHERE reference = ${reference}`.execute(sqlOf(db))
  ).rows as Array<{ found: number }>;
  return rows.length > 0;
}
