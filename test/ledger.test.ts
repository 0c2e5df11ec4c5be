// The ledger under concurrency, on real PostgreSQL. Steps that post to one wallet at once never deadlock: each
// database transaction locks its resource row, then every running-balance account of all its postings in one
// statement in id order. Accounts that may go negative are no hot row: never locked, no running balance, their
// balance the sum of their entries (ledgerBalances).
import type { Transaction } from '../src/persistence/generated/prisma/client';
import { createActivities } from '../activities';
import { Client } from 'pg';
import { connectionName, DatabaseClient, withDatabaseTransaction } from '../src/persistence/database';
import { createPrismaClient, sqlPoolOf, prismaOf } from '../src/persistence/internal/database';
import { newId } from '../src/domain/ids';
import { Decimal, Money } from '../src/domain/money';
import { ledgerAccounts, LedgerAccountRef, settlementEntries } from '../src/domain/ledger';
import { ledgerBalances, lockLedgerAccounts, postLedgerEntries } from '../src/persistence/ledger';
import { insertTransaction, openTransactionLeg } from '../src/persistence/transactions';
import { createProviders } from '../src/providers';
import { createWallet, WalletBody } from './support/accounts';
import { Harness, startHarness } from './support/harness';
import { postedByOthers, whileUnposted } from './support/shared-accounts';
import { fundWallet, payoutBody, payoutQuoteBody, quote } from './support/payments';
import { Parties, setUpParties, settlementHandle } from './support/transactions';

let harness: Harness;
let parties: Parties;
/** Activities on a pool of their own: the steps waiting on a lock hold connections the API needs meanwhile. */
let racingPrisma: DatabaseClient;
let racing: ReturnType<typeof createActivities>;

beforeAll(async () => {
  harness = await startHarness();
  parties = await setUpParties(harness);
  racingPrisma = createPrismaClient(harness.config.databaseUrl, { role: 'test', poolSize: 4 });
  racing = createActivities({
    config: harness.config,
    prisma: racingPrisma,
    logger: harness.services.logger,
    ...createProviders(harness.config, racingPrisma),
  });
});
afterAll(async () => {
  if (racingPrisma) {
    // Its pool served only SQL transactions: Prisma, never connected, may leave it open.
    const pool = sqlPoolOf(racingPrisma);
    await prismaOf(racingPrisma).$disconnect();
    if (!pool.ending && !pool.ended) await pool.end();
  }
  await harness?.teardown();
});

/** What a call ended with: `ok`, or the SQLSTATE, HTTP status or message of its failure. */
const outcomeOf = (error: unknown) => {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return typeof code === 'string' ? code : String(message);
};

/** Per account, its stored running balance and the sum of its entries (both as text, fixed). */
async function storedAndSummed(accounts: LedgerAccountRef[]) {
  const rows = await harness.prisma.$queryRaw<Array<{ name: string; stored: string | null; summed: string }>>`
    SELECT COALESCE(a.system_code, 'wallet:' || a.wallet_id::text) || ':' || a.currency AS name,
      a.balance::text AS stored, COALESCE(sum(e.amount), 0)::text AS summed
    FROM ledger_accounts a LEFT JOIN ledger_entries e ON e.account_id = a.id
    WHERE (a.wallet_id, a.currency) IN (
        SELECT * FROM unnest(${accounts.map((ref) => ('walletId' in ref ? ref.walletId : null))}::uuid[],
          ${accounts.map((ref) => ref.currency)}::currency[]))
      OR (a.system_code, a.currency) IN (
        SELECT * FROM unnest(${accounts.map((ref) => ('system' in ref ? ref.system : null))}::text[],
          ${accounts.map((ref) => ref.currency)}::currency[]))
    GROUP BY a.id ORDER BY name`;
  return rows.map(({ name, stored, summed }) => ({
    name,
    stored: stored === null ? null : new Decimal(stored).toFixed(),
    summed: new Decimal(summed).toFixed(),
  }));
}

describe('a pay-in completing into a wallet while payouts debit the same wallet', () => {
  const rounds = 3;
  /** At least two pay-ins: the second takes the in-transit account as the first commits. */
  const perRound = 2;

  /**
   * A wallet whose in-transit account is opened now with an id on the given side of the wallet account's id:
   * row locks are taken in id order, and each order is a different interleaving.
   */
  async function walletWithTransit(side: 'after' | 'before'): Promise<WalletBody> {
    const wallet = await createWallet(parties.partner.api, parties.customer.id, 'solana', `Ledger ${side}`);
    const suffix = newId().slice(-12);
    const id = side === 'after' ? `ffffffff-ffff-4fff-bfff-${suffix}` : `00000000-0000-4000-8000-${suffix}`;
    await harness.prisma.$executeRaw`
      INSERT INTO ledger_accounts (id, system_code, currency, allow_negative, balance, updated_at)
      VALUES (${id}::uuid, ${`in_transit:${wallet.id}`}, 'USDC', false, 0, now())`;
    return wallet;
  }

  /** A copy of a completed pay-in, processing, its leg 1 open: completeFiatToStablecoin completes it. */
  async function payinAtLeg1(template: Transaction): Promise<string> {
    const id = newId();
    const { updatedAt: _updatedAt, ...columns } = template;
    await withDatabaseTransaction(harness.prisma, async (tx) => {
      await insertTransaction(tx, {
        ...columns,
        id,
        status: 'processing',
        quoteId: null,
        depositReference: null,
        depositInstructions: columns.depositInstructions as object | null,
        receiverDetails: columns.receiverDetails as object | null,
      });
      await openTransactionLeg(tx, id, 'fiat_to_stablecoin');
    });
    return id;
  }

  /** Until `count` of this file's database sessions wait on a lock (or a while has passed: the race runs anyway). */
  async function untilWaiting(watcher: Client, count: number): Promise<void> {
    for (let attempt = 0; attempt < 200; attempt += 1) {
      const { rows } = await watcher.query<{ waiting: string }>(
        `SELECT count(*) AS waiting FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
        [connectionName('test')],
      );
      if (Number(rows[0]!.waiting) >= count) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it.each(['after', 'before'] as const)(
    'never deadlocks and the balances add up (in-transit account sorting %s the wallet account)',
    async (side) => {
      const wallet = await walletWithTransit(side);
      const owner: Parties = { ...parties, wallet };
      const funded = await parties.partner.api
        .post(`/v1/sandbox/wallets/${wallet.id}/fund`)
        .send({ currency: 'USDC', amount: '100' });
      expect(funded.status).toBe(200);
      const credited = await fundWallet(harness, owner, '100.00');
      const template = await harness.prisma.transaction.findFirstOrThrow({
        where: { walletId: wallet.id, type: 'payin', status: 'completed' },
      });
      const sent = '10.000000';
      const payoutQuote = payoutQuoteBody({ sender: { currency: 'USDC', payment_rail: 'solana', amount: sent } });
      const payinIds: string[] = [];
      const payoutIds: string[] = [];
      const outcomes: string[] = [];
      // Another session holds the wallet's account while the steps queue behind it, pay-ins first, as a busy wallet
      // makes them queue; then lets them all go at once.
      const blocker = new Client({ connectionString: harness.config.databaseUrl, application_name: 'ledger-blocker' });
      const watcher = new Client({ connectionString: harness.config.databaseUrl, application_name: 'ledger-watcher' });
      await Promise.all([blocker.connect(), watcher.connect()]);
      try {
        for (let round = 0; round < rounds; round += 1) {
          const payins = await Promise.all(Array.from({ length: perRound }, () => payinAtLeg1(template)));
          const quotes = await Promise.all(
            Array.from({ length: perRound }, () => quote(owner.partner.api, payoutQuote)),
          );
          payinIds.push(...payins);
          await blocker.query('BEGIN');
          await blocker.query(
            `SELECT id FROM ledger_accounts WHERE wallet_id = $1::uuid AND currency = 'USDC' FOR UPDATE`,
            [wallet.id],
          );
          const completions = payins.map((id) =>
            racing.completeFiatToStablecoin(id, `conversion-${id}`, true).then(() => 'ok', outcomeOf),
          );
          await untilWaiting(watcher, perRound);
          const payouts = quotes.map(async (q) => {
            const response = await owner.partner.api.post('/v1/payout').send(payoutBody(owner, q.id));
            if (response.status !== 201) return `${response.status} ${String(response.body?.error?.code)}`;
            payoutIds.push(response.body.id as string);
            return 'ok';
          });
          await untilWaiting(watcher, 2 * perRound);
          await blocker.query('COMMIT');
          outcomes.push(...(await Promise.all([...completions, ...payouts])));
          // The payouts' own steps (leg 2 takes the in-transit account) end before the next round.
          for (const id of payoutIds) expect(await settlementHandle(harness, id).result()).toBe('completed');
        }
      } finally {
        await Promise.all([blocker.end(), watcher.end()]);
      }
      // A deadlock aborts one side: the activity with 40P01, the payout with 503 service_unavailable.
      expect(outcomes.filter((outcome) => outcome !== 'ok')).toEqual([]);

      const walletAccount = ledgerAccounts.wallet(wallet.id, 'USDC');
      const transit = ledgerAccounts.inTransit(wallet.id, 'USDC');
      const expected = new Decimal('100')
        .plus(new Decimal(credited).times(payinIds.length + 1))
        .minus(new Decimal(sent).times(payoutIds.length));
      const [balance, inTransit] = await ledgerBalances(harness.prisma, [walletAccount, transit]);
      expect(balance!.toFixed()).toBe(expected.toFixed());
      expect(inTransit!.toFixed()).toBe('0');
      for (const account of await storedAndSummed([walletAccount, transit])) {
        expect(account.stored).toBe(account.summed);
      }
      const unbalanced = await harness.prisma.$queryRaw<Array<{ reference: string }>>`
        SELECT t.reference FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
        WHERE t.reference LIKE ANY(${[...payinIds, ...payoutIds].map((id) => `transaction:${id}:%`)}::text[])
        GROUP BY t.reference, e.currency HAVING sum(e.amount) <> 0`;
      expect(unbalanced).toEqual([]);
      const postings = await harness.prisma.ledgerTransaction.count({
        where: {
          reference: {
            in: payinIds.flatMap((id) => [`transaction:${id}:fiat_to_stablecoin`, `transaction:${id}:delivered`]),
          },
        },
      });
      expect(postings).toBe(payinIds.length * 2);
    },
  );
});

describe('accounts that may go negative', () => {
  it('keep no running balance: their balance is the sum of their entries', async () => {
    await fundWallet(harness, parties, '50.00');
    const accounts = [
      ledgerAccounts.settlement('USD'),
      ledgerAccounts.fiatClearing('USD'),
      ledgerAccounts.fx('USD'),
      ledgerAccounts.fx('USDC'),
      ledgerAccounts.feeRevenue('USD'),
      ledgerAccounts.networkFees('USD'),
    ];
    const {
      value: [rows, balances],
    } = await whileUnposted(harness, accounts, async () =>
      Promise.all([storedAndSummed(accounts), ledgerBalances(harness.prisma, accounts)]),
    );
    expect(rows).toHaveLength(accounts.length);
    for (const row of rows) expect(row.stored).toBeNull();
    const names = accounts.map((ref) => `${'system' in ref ? ref.system : ''}:${ref.currency}`);
    expect(Object.fromEntries(names.map((name, index) => [name, balances[index]!.toFixed()]))).toEqual(
      Object.fromEntries(rows.map((row) => [row.name, row.summed])),
    );
    // One that was never posted to is at zero.
    const unused = { system: `never-posted-${newId()}`, currency: 'EUR' } as const;
    expect((await ledgerBalances(harness.prisma, [unused]))[0]!.toFixed()).toBe('0');
    // No account that may go negative has a running balance, and each that may not has one.
    const mixed = await harness.prisma.$queryRaw<Array<{ count: bigint }>>`
      SELECT count(*) AS count FROM ledger_accounts WHERE (balance IS NULL) <> allow_negative`;
    expect(Number(mixed[0]!.count)).toBe(0);
  });

  it('are never locked: two postings to the same ones do not wait for each other', async () => {
    const accounts = [ledgerAccounts.settlement('BRL'), ledgerAccounts.fiatClearing('BRL')];
    const deposit = (reference: string, amount: string) => ({
      reference: `${reference}:${newId()}`,
      description: `test: ${reference}`,
      entries: settlementEntries.depositReceived(Money.parse('BRL', amount)),
    });
    // Opened first: the first use of an account inserts its row, which a concurrent first use waits for.
    await withDatabaseTransaction(harness.prisma, (tx) => postLedgerEntries(tx, deposit('hot-row-opened', '1.00')));
    const before = await whileUnposted(harness, accounts, () => ledgerBalances(harness.prisma, accounts));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let posted!: () => void;
    const firstPosted = new Promise<void>((resolve) => (posted = resolve));
    const first = withDatabaseTransaction(harness.prisma, async (tx) => {
      await postLedgerEntries(tx, deposit('hot-row-held-open', '10.00'));
      posted();
      await held;
    });
    await firstPosted;
    const second = withDatabaseTransaction(harness.prisma, (tx) =>
      postLedgerEntries(tx, deposit('hot-row-meanwhile', '5.00')),
    );
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      second.then(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), 5_000))),
    ]);
    clearTimeout(timer);
    release();
    await Promise.all([first, second]);
    expect(waited).toBe(false);
    const after = await whileUnposted(harness, accounts, () => ledgerBalances(harness.prisma, accounts));
    // Other test files post to these accounts too: what these two added is the change less the others' new entries.
    const others = postedByOthers(before, after, /^hot-row-(held-open|meanwhile):/);
    expect(
      after.value.map((balance, index) =>
        balance.minus(before.value[index]!).minus(others(accounts[index]!)).toFixed(),
      ),
    ).toEqual(['-15', '15']);
  });
});

describe('one lock per database transaction', () => {
  it('refuses a second lock that names another account, and a posting outside a transaction; takes one naming the same accounts', async () => {
    const wallet = await createWallet(parties.partner.api, parties.customer.id, 'solana', 'One lock');
    const entries = [
      { account: ledgerAccounts.sandboxFunding('USDC'), amount: '-1' },
      { account: ledgerAccounts.wallet(wallet.id, 'USDC'), amount: '1' },
    ];
    const posted = await withDatabaseTransaction(harness.prisma, async (tx) => {
      const locked = await lockLedgerAccounts(
        tx,
        entries.map(({ account }) => account),
      );
      expect(locked.of(ledgerAccounts.wallet(wallet.id, 'USDC')).toFixed()).toBe('0');
      return postLedgerEntries(tx, { reference: `one-lock:${newId()}`, description: 'test', entries });
    });
    expect(posted).toHaveLength(1);
    const refused = withDatabaseTransaction(harness.prisma, async (tx) => {
      await lockLedgerAccounts(tx, [ledgerAccounts.wallet(wallet.id, 'USDC')]);
      await postLedgerEntries(tx, { reference: `two-locks:${newId()}`, description: 'test', entries });
    });
    await expect(refused).rejects.toThrow(/locked after others in one database transaction/);
    await expect(
      postLedgerEntries(harness.prisma as never, {
        reference: `no-transaction:${newId()}`,
        description: 'test',
        entries,
      }),
    ).rejects.toThrow(/inside a database transaction only/);
    expect((await ledgerBalances(harness.prisma, [ledgerAccounts.wallet(wallet.id, 'USDC')]))[0]!.toFixed()).toBe('1');
  });
});
