// Reconciliation (issue 27): a partner's balance transactions and fee balance, the settlement report of a day (CSV and
// JSON, its sums equal to the ledger's), and the daily reconciliation: clean after every sandbox flow, and each kind
// of discrepancy, injected on purpose, found and named.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { base58 } from '@scure/base';
import { reconciliationCommand } from '../scripts/reconciliation';
import { type Currency, Decimal, isStablecoin } from '../src/domain/money';
import { newId } from '../src/domain/ids';
import { registry } from '../src/observability/metrics';
import { registerReconciliationGauges } from '../src/observability/observe';
import { UnconnectedProviderStatements } from '../src/providers/provider-statements';
import { reconciliationWorkflow } from '../workflows/reconciliation';
import { createWallet } from './support/accounts';
import { Harness, startHarness, workerOnTaskQueue } from './support/harness';
import { projectRoot } from './support/paths';
import { createPayin, createPayout, payoutQuoteBody } from './support/payments';
import {
  createTransaction,
  deposit,
  Parties,
  setUpParties,
  settlementHandle,
  TransactionBody,
  waitForStatus,
} from './support/transactions';

let harness: Harness;
let parties: Parties;
/** Every flow's transactions and transfers, by name. */
const flows: Record<string, string> = {};

beforeAll(async () => {
  // No chain node: the on-chain balance check needs the chain watcher, tested with its own in chain-watcher.test.ts.
  harness = await startHarness({}, { chain: false });
  parties = await setUpParties(harness);
  const { api } = parties.partner;
  const settled = async (transaction: TransactionBody, expected: string) => {
    expect(await settlementHandle(harness, transaction.id).result()).toBe(expected);
    return transaction.id;
  };

  // Pay-ins fund the wallet for the payouts below.
  const payin = await createPayin(parties);
  await deposit(parties, payin);
  flows.payin = await settled(payin, 'completed');
  const f2f = await createTransaction(parties);
  await deposit(parties, f2f);
  flows.fiatToFiat = await settled(f2f, 'completed');
  const rejected = await createTransaction(parties);
  await deposit(parties, rejected, { simulate: 'payout_rejected' });
  flows.refundedAfterLeg1 = await settled(rejected, 'refunded');
  const mismatch = await createTransaction(parties);
  await deposit(parties, mismatch, { amount: '999.00' });
  flows.wrongAmount = await settled(mismatch, 'refunded');
  const cancelled = await createTransaction(parties);
  expect((await api.put(`/v1/transactions/${cancelled.id}`).send({ status: 'cancelled' })).status).toBe(200);
  flows.cancelled = await settled(cancelled, 'cancelled');
  // A second deposit for a funded transaction goes back on its own.
  const twice = await createTransaction(parties);
  await deposit(parties, twice);
  const second = await deposit(parties, twice);
  flows.depositedTwice = await settled(twice, 'completed');
  await harness.env.client.workflow.getHandle(`deposit-return-${second.id}`).result();
  const payout = await createPayout(parties);
  flows.payout = await settled(payout, 'completed');
  const payoutRejected = await createPayout(parties, { simulate: 'payout_rejected' });
  flows.payoutRefunded = await settled(payoutRejected, 'refunded');
  const sentIn = await createPayout(parties, { wallet_id: undefined });
  const confirmed = await api.post('/v1/payout/confirm').send({ transaction_id: sentIn.id, tx_hash: '5'.repeat(88) });
  expect(confirmed.status).toBe(200);
  flows.payoutSentIn = await settled(sentIn, 'completed');

  const other = await createWallet(api, parties.customer.id, 'solana', 'Other');
  expect((await api.post(`/v1/sandbox/wallets/${other.id}/fund`).send({ currency: 'USDC', amount: '50' })).status).toBe(
    200,
  );
  const outside = base58.encode(randomBytes(32));
  for (const [name, body] of [
    ['internalTransfer', { to_wallet_id: other.id, amount: '10' }],
    ['outsideTransfer', { to_address: outside, amount: '5' }],
    ['rejectedTransfer', { to_address: outside, amount: '5', simulate: 'network_rejected' }],
  ] as const) {
    const response = await api
      .post('/v1/wallet-transfer')
      .send({ currency: 'USDC', from_wallet_id: parties.wallet.id, ...body });
    expect([response.status, response.body.error]).toEqual([201, undefined]);
    flows[name] = response.body.id as string;
    await harness.env.client.workflow.getHandle(`wallet-transfer-${response.body.id}`).result();
  }
});
afterAll(() => harness?.teardown());

/** A run limited to the partners (test files share the database), and its search attributes once it ended. */
async function reconcile(partnerIds: string[], batchSize = 3, taskQueue = harness.config.temporal.taskQueue) {
  const handle = await harness.env.client.workflow.start(reconciliationWorkflow, {
    workflowId: `reconciliation-test-${crypto.randomUUID()}`,
    taskQueue,
    args: [{ partnerIds, batchSize }],
  });
  const summary = await handle.result();
  return { ...summary, searchAttributes: (await handle.describe()).searchAttributes };
}

async function discrepanciesOf(reportId: string): Promise<string[]> {
  const rows = await harness.prisma.reconciliationDiscrepancy.findMany({ where: { reportId } });
  return rows.map((row) => `${row.kind} ${row.subjectId}`).sort();
}

/** What an operator runs: `npm run reconciliation -- <args>` (no Temporal needed for these commands). */
async function operator(...args: string[]): Promise<Array<Record<string, any>>> {
  const lines = await reconciliationCommand(args, harness.prisma, () => {
    throw new Error('not needed');
  });
  return lines.map((line) => JSON.parse(line) as Record<string, any>);
}

/**
 * The worker's scrape of the reconciliation metrics, `name{labels} value` lines (labels as written), while the given
 * run is the latest finished: test files share the database, and another file's run limited to its partners may
 * finish after this one, so the run's finish is moved past any other for the scrape and put back after it.
 */
async function reconciliationMetrics(reportId: string): Promise<Map<string, number>> {
  const [moved] = await harness.prisma.$queryRaw<Array<{ finishedAt: Date }>>`
    UPDATE reconciliation_reports r SET finished_at = now() + interval '1 hour'
    FROM reconciliation_reports old WHERE r.id = ${reportId}::uuid AND old.id = r.id
    RETURNING old.finished_at AS "finishedAt"`;
  if (!moved) throw new Error(`reconciliation report ${reportId} does not exist`);
  try {
    registerReconciliationGauges(harness.prisma);
    const text = [
      await registry.getSingleMetricAsString('payments_reconciliation_findings'),
      await registry.getSingleMetricAsString('payments_reconciliation_check_skipped'),
      await registry.getSingleMetricAsString('payments_reconciliation_last_finished_timestamp_seconds'),
    ].join('\n');
    return new Map(
      text
        .split('\n')
        .filter((line) => line && !line.startsWith('#'))
        .map((line) => {
          const at = line.lastIndexOf(' ');
          return [line.slice(0, at), Number(line.slice(at + 1))] as const;
        }),
    );
  } finally {
    await harness.prisma.$executeRaw`
      UPDATE reconciliation_reports SET finished_at = ${moved.finishedAt} WHERE id = ${reportId}::uuid`;
  }
}

/** Makes rows older than they are, as hours passing would (the database's clock is not Temporal's). */
async function age(table: 'transactions' | 'transaction_deposits', id: string, hours: number) {
  const interval = `${hours} hours`;
  if (table === 'transactions') {
    await harness.prisma.$executeRaw`
      UPDATE transactions SET updated_at = now() - ${interval}::interval WHERE id = ${id}::uuid`;
  } else {
    await harness.prisma.$executeRaw`
      UPDATE transaction_deposits SET updated_at = now() - ${interval}::interval WHERE id = ${id}::uuid`;
  }
}

describe('reconciliation', () => {
  it('is clean after every sandbox flow, having checked each kind of thing in batches; the run shows it', async () => {
    const summary = await reconcile([parties.partner.partnerId]);
    expect(await discrepanciesOf(summary.reportId)).toEqual([]);
    expect(summary.status).toBe('clean');
    expect(summary.searchAttributes).toMatchObject({ ResourceId: [summary.reportId], ResourceStatus: ['clean'] });
    // 9 transactions, 3 transfers, and what they posted and asked providers for.
    expect(summary.checks.transactions).toEqual({ checked: 9, found: 0 });
    expect(summary.checks.wallet_transfers).toEqual({ checked: 3, found: 0 });
    const checked = (check: keyof typeof summary.checks) => {
      const outcome = summary.checks[check];
      return outcome && 'checked' in outcome ? outcome.checked : -1;
    };
    expect(checked('postings')).toBeGreaterThan(30);
    expect(checked('accounts')).toBeGreaterThan(4);
    // Every conversion, payout, sell-back, return and send on chain is on the sandbox's statement and posted.
    expect(checked('provider_statement')).toBeGreaterThan(10);
    expect(checked('statement_postings')).toBeGreaterThan(10);
    // Nothing is left moving.
    for (const check of ['stuck_transactions', 'stuck_deposits', 'stuck_legs'] as const) {
      expect(summary.checks[check]).toEqual({ checked: 0, found: 0 });
    }
    const report = await harness.prisma.reconciliationReport.findUniqueOrThrow({ where: { id: summary.reportId } });
    expect(report).toMatchObject({ status: 'clean', discrepancyCount: 0, partnerIds: [parties.partner.partnerId] });
    expect(report.finishedAt).not.toBeNull();
    // What `npm run reconciliation -- show` prints: the report with every check's count.
    const [shown] = await operator('show', summary.reportId);
    expect(shown).toMatchObject({ id: summary.reportId, status: 'clean', checks: summary.checks });
    expect(Object.keys(shown!.checks).sort()).toEqual(
      [
        'accounts',
        // No chain node in this file: nothing held on a chain, checked as such.
        'chain_balances',
        'postings',
        'provider_statement',
        'statement_postings',
        'stuck_deposits',
        'stuck_legs',
        'stuck_transactions',
        'transactions',
        'wallet_transfers',
      ].sort(),
    );
  });

  it('finds and names a missing posting, an extra provider operation, a tampered balance, money left in transit', async () => {
    // Isolated from the clean run: the same flows on a partner of their own.
    const own = await setUpParties(harness);
    const payin = await createPayin(own);
    await deposit(own, payin);
    expect(await settlementHandle(harness, payin.id).result()).toBe('completed');
    const f2f = await createTransaction(own);
    await deposit(own, f2f);
    expect(await settlementHandle(harness, f2f.id).result()).toBe('completed');
    const stuck = await createTransaction(own);
    await deposit(own, stuck, { simulate: 'payout_error' });
    await waitForStatus(harness, stuck.id, 'error');
    const account = await harness.prisma.ledgerAccount.findFirstOrThrow({
      where: { walletId: own.wallet.id, currency: 'USDC' },
    });

    // A missing posting: the payout of a completed transaction, gone.
    await harness.prisma.$executeRaw`
      DELETE FROM ledger_entries WHERE transaction_id = (SELECT id FROM ledger_transactions
        WHERE reference = ${`transaction:${f2f.id}:payout`})`;
    await harness.prisma
      .$executeRaw`DELETE FROM ledger_transactions WHERE reference = ${`transaction:${f2f.id}:payout`}`;
    // An extra provider operation: a return nobody asked for, of a completed pay-in.
    await harness.prisma.sandboxRailOperation.create({
      data: {
        idempotencyKey: `${payin.id}:refund`,
        kind: 'return',
        currency: 'USD',
        amount: '1000',
        outcome: 'completed',
      },
    });
    // Money in transit on a transaction marked completed (its payout never happened).
    await harness.prisma.$executeRaw`UPDATE transactions SET status = 'completed' WHERE id = ${stuck.id}::uuid`;
    // A tampered wallet balance: restored right after the run.
    await harness.prisma.$executeRaw`UPDATE ledger_accounts SET balance = balance + 1 WHERE id = ${account.id}::uuid`;
    let summary: Awaited<ReturnType<typeof reconcile>>;
    try {
      summary = await reconcile([own.partner.partnerId], 1000);
    } finally {
      await harness.prisma.$executeRaw`UPDATE ledger_accounts SET balance = balance - 1 WHERE id = ${account.id}::uuid`;
    }

    expect(await discrepanciesOf(summary.reportId)).toEqual(
      [
        `account_balance_mismatch ${account.id}`,
        `final_event_missing ${stuck.id}`,
        `money_left_in_transit ${f2f.id}`,
        `money_left_in_transit ${stuck.id}`,
        `posting_missing transaction:${f2f.id}:payout`,
        `posting_missing transaction:${stuck.id}:payout`,
        `posting_missing transaction:${stuck.id}:stablecoin_to_fiat`,
        `statement_line_without_posting ${f2f.id}:stablecoin_to_fiat`,
        `statement_line_without_posting ${payin.id}:refund`,
      ].sort(),
    );
    expect(summary).toMatchObject({ status: 'discrepancies', discrepancyCount: 9 });
    const details = await harness.prisma.reconciliationDiscrepancy.findMany({ where: { reportId: summary.reportId } });
    expect(details.find((row) => row.kind === 'account_balance_mismatch')?.detail).toBe(
      `wallet ${own.wallet.id} USDC: balance ${new Decimal(payin.stablecoin.amount).plus(1).toFixed()}, ` +
        `its entries add up to ${new Decimal(payin.stablecoin.amount).toFixed()}`,
    );
    expect(details.find((row) => row.subjectId === stuck.id && row.kind === 'money_left_in_transit')?.detail).toMatch(
      /^completed, yet its postings leave .* USDC on in_transit:/,
    );
    // The run is found in the Temporal UI by its report and status.
    expect(summary.searchAttributes).toMatchObject({
      ResourceId: [summary.reportId],
      ResourceStatus: ['discrepancies'],
    });
  });

  it("finds each way the provider's statement disagrees: a missing line, an extra line, a different amount", async () => {
    const own = await setUpParties(harness);
    const payin = await createPayin(own);
    await deposit(own, payin);
    expect(await settlementHandle(harness, payin.id).result()).toBe('completed');
    const f2f = await createTransaction(own);
    await deposit(own, f2f);
    expect(await settlementHandle(harness, f2f.id).result()).toBe('completed');
    const before = await reconcile([own.partner.partnerId], 1000);
    expect(before.status).toBe('clean');

    // The sandbox's statement told to disagree, as an operator would: `npm run reconciliation -- sandbox-statement`.
    try {
      await operator('sandbox-statement', 'drop', `${f2f.id}:stablecoin_to_fiat`);
      await operator('sandbox-statement', 'amount', `${payin.id}:fiat_to_stablecoin`, '1.23');
      const adjustments = await operator('sandbox-statement', 'extra', `${payin.id}:refund`, 'return', 'USD', '40');
      expect(adjustments).toEqual(
        expect.arrayContaining([
          { action: 'drop', idempotencyKey: `${f2f.id}:stablecoin_to_fiat` },
          { action: 'amount', idempotencyKey: `${payin.id}:fiat_to_stablecoin`, amount: '1.230000' },
          {
            action: 'extra',
            idempotencyKey: `${payin.id}:refund`,
            kind: 'return',
            currency: 'USD',
            amount: '40.000000',
          },
        ]),
      );
      const summary = await reconcile([own.partner.partnerId], 2);

      expect(await discrepanciesOf(summary.reportId)).toEqual([
        `posting_without_statement_line transaction:${f2f.id}:payout`,
        `statement_amount_mismatch ${payin.id}:fiat_to_stablecoin`,
        `statement_line_without_posting ${payin.id}:refund`,
      ]);
      expect(summary).toMatchObject({ status: 'discrepancies', discrepancyCount: 3 });
      expect(summary.checks.provider_statement).toMatchObject({ found: 2 });
      expect(summary.checks.statement_postings).toMatchObject({ found: 1 });
      const [report, ...found] = await operator('show', summary.reportId);
      expect(report).toMatchObject({ status: 'discrepancies', discrepancyCount: 3, checks: summary.checks });
      expect(found.find((item) => item.kind === 'statement_amount_mismatch')?.detail).toMatch(
        new RegExp(
          `^the statement shows a conversion of 1\\.23 \\w+ .*; posting transaction:${payin.id}:fiat_to_stablecoin moves `,
        ),
      );
      expect(found.find((item) => item.kind === 'posting_without_statement_line')?.detail).toBe(
        `the provider's statement has no line ${f2f.id}:stablecoin_to_fiat (the operation this posting records)`,
      );
      // Prometheus sees each kind of the latest run limited to partners (the daily run's are scope="all").
      const metrics = await reconciliationMetrics(summary.reportId);
      expect(metrics.get('payments_reconciliation_findings{kind="statement_amount_mismatch",scope="partners"}')).toBe(
        1,
      );
      expect(
        metrics.get('payments_reconciliation_findings{kind="statement_line_without_posting",scope="partners"}'),
      ).toBe(1);
      expect(
        metrics.get('payments_reconciliation_findings{kind="posting_without_statement_line",scope="partners"}'),
      ).toBe(1);
      expect(metrics.get('payments_reconciliation_findings{kind="transaction_stuck",scope="partners"}')).toBe(0);
      expect(metrics.get('payments_reconciliation_check_skipped{check="provider_statement",scope="partners"}')).toBe(0);
    } finally {
      expect(await operator('sandbox-statement', 'clear', `${f2f.id}:stablecoin_to_fiat`)).toEqual([{ cleared: 1 }]);
      await operator('sandbox-statement', 'clear', `${payin.id}:fiat_to_stablecoin`);
      await operator('sandbox-statement', 'clear', `${payin.id}:refund`);
    }
    expect((await reconcile([own.partner.partnerId], 1000)).status).toBe('clean');
  });

  it('is incomplete, never clean, when no provider statement is connected, and says which checks it skipped', async () => {
    // The worker as production builds it today: the activities with the unconnected statement.
    const taskQueue = `${harness.config.temporal.taskQueue}-unconnected`;
    const worker = await workerOnTaskQueue(harness, taskQueue, {
      providerStatements: new UnconnectedProviderStatements(),
    });
    const summary = await worker.runUntil(reconcile([parties.partner.partnerId], 1000, taskQueue));

    expect(summary.status).toBe('incomplete');
    expect(summary.discrepancyCount).toBe(0);
    expect(summary.searchAttributes).toMatchObject({ ResourceStatus: ['incomplete'] });
    expect(summary.checks.provider_statement).toEqual({ skipped: 'no provider statement is connected' });
    expect(summary.checks.statement_postings).toEqual({
      skipped: 'provider_statement was skipped: there is no statement to compare with',
    });
    expect(summary.checks.transactions).toEqual({ checked: 9, found: 0 });
    const [report] = await operator('show', summary.reportId);
    expect(report).toMatchObject({ status: 'incomplete', checks: summary.checks });
    const metrics = await reconciliationMetrics(summary.reportId);
    expect(metrics.get('payments_reconciliation_check_skipped{check="provider_statement",scope="partners"}')).toBe(1);
    expect(metrics.get('payments_reconciliation_check_skipped{check="statement_postings",scope="partners"}')).toBe(1);
    expect(metrics.get('payments_reconciliation_check_skipped{check="postings",scope="partners"}')).toBe(0);
    // This run's finish, as moved an hour on for the scrape.
    const finished = metrics.get('payments_reconciliation_last_finished_timestamp_seconds{scope="partners"}')!;
    expect(Math.abs(finished - (Date.now() / 1000 + 3600))).toBeLessThan(600);
  });

  it('finds money that stopped moving: a transaction in error or processing too long, a leg not closed or rejected and not refunded, a deposit returning too long', async () => {
    const own = await setUpParties(harness);
    const [erred, slow, recent] = [
      await createTransaction(own),
      await createTransaction(own),
      await createTransaction(own),
    ];
    for (const transaction of [erred!, slow!, recent!]) {
      await deposit(own, transaction, { simulate: 'conversion_error' });
    }
    // One at a time: the time-skipping server takes one sleeper (its skips move all three on).
    for (const transaction of [erred!, slow!, recent!]) await waitForStatus(harness, transaction.id, 'error');
    // A second deposit for a funded transaction is sent back on its own.
    const second = await deposit(own, recent!);
    await harness.env.client.workflow.getHandle(`deposit-return-${second.id}`).result();

    // Hours pass (the database's clock), some rows past their bounds (src/config.ts defaults: processing 4 h,
    // error 24 h, returning 4 h), some within them.
    await age('transactions', erred!.id, 30); // error for 30 h
    await harness.prisma.$executeRaw`
      UPDATE transaction_legs SET updated_at = now() - interval '30 hours' WHERE transaction_id = ${erred!.id}::uuid`;
    // processing for 5 h (a worker that lost it); its leg was asked just now.
    await harness.prisma.$executeRaw`UPDATE transactions SET status = 'processing' WHERE id = ${slow!.id}::uuid`;
    await age('transactions', slow!.id, 5);
    await age('transactions', recent!.id, 2); // error for 2 h: an operator still has time
    // Its payout refused 5 h ago and never refunded; its return sent back 5 h ago and never done.
    await harness.prisma.$executeRaw`
      INSERT INTO transaction_legs (id, transaction_id, kind, status, failure_reason, created_at, updated_at)
      VALUES (${newId()}::uuid, ${recent!.id}::uuid, 'stablecoin_to_fiat', 'rejected', 'account_closed',
        now() - interval '5 hours', now() - interval '5 hours')`;
    await harness.prisma.$executeRaw`
      UPDATE transaction_deposits SET status = 'returning' WHERE id = ${second.id as string}::uuid`;
    await age('transaction_deposits', second.id as string, 5);

    const summary = await reconcile([own.partner.partnerId], 2);
    expect(await discrepanciesOf(summary.reportId)).toEqual(
      [
        `deposit_stuck ${second.id}`,
        `leg_not_closed ${erred!.id}:fiat_to_stablecoin`,
        `leg_rejected_unhandled ${recent!.id}:stablecoin_to_fiat`,
        `transaction_stuck ${erred!.id}`,
        `transaction_stuck ${slow!.id}`,
      ].sort(),
    );
    expect(summary.status).toBe('discrepancies');
    expect(summary.checks).toMatchObject({
      stuck_transactions: { checked: 3, found: 2 },
      stuck_legs: { checked: 4, found: 2 },
      stuck_deposits: { checked: 1, found: 1 },
    });
    const [, ...found] = await operator('show', summary.reportId);
    const detail = (kind: string, subject: string) =>
      found.find((item) => item.kind === kind && item.subjectId === subject)?.detail;
    expect(detail('transaction_stuck', erred!.id)).toMatch(
      /^fiat_to_fiat error \(conversion_failed\) for 30\.\d hours, over the 24-hour bound$/,
    );
    expect(detail('transaction_stuck', slow!.id)).toMatch(
      /^fiat_to_fiat processing .*for 5\.\d hours, over the 4-hour bound$/,
    );
    expect(detail('deposit_stuck', second.id as string)).toMatch(
      new RegExp(`^[\\d.]+ \\w+ of transaction ${recent!.id} returning .*for 5\\.\\d hours, over the 4-hour bound$`),
    );
    const metrics = await reconciliationMetrics(summary.reportId);
    expect(metrics.get('payments_reconciliation_findings{kind="transaction_stuck",scope="partners"}')).toBe(2);
    expect(metrics.get('payments_reconciliation_findings{kind="deposit_stuck",scope="partners"}')).toBe(1);
    expect(metrics.get('payments_reconciliation_findings{kind="leg_not_closed",scope="partners"}')).toBe(1);
    expect(metrics.get('payments_reconciliation_findings{kind="leg_rejected_unhandled",scope="partners"}')).toBe(1);
    // Put back at rest: other test files' runs are limited to their partners, but the metrics gauges count every
    // transaction in error.
    await harness.prisma.$executeRaw`
      UPDATE transactions SET status = 'failed', updated_at = now() WHERE id = ANY(${[erred!.id, slow!.id, recent!.id]}::uuid[])`;
  });

  it('fires the alerts on findings and skipped checks (promtool test rules)', () => {
    const promtool = execFileSync('bash', [path.join(projectRoot, 'scripts', 'promtool.sh')], {
      encoding: 'utf8',
    }).trim();
    const output = execFileSync(promtool, ['test', 'rules', 'payments-rules.test.yml'], {
      cwd: path.join(projectRoot, 'ops', 'prometheus'),
      encoding: 'utf8',
    });
    expect(output).toMatch(/SUCCESS/);
  });
});

describe('balance transactions', () => {
  it('lists every movement of the wallets and the fees, newest first, each balance after its movement', async () => {
    const { api } = parties.partner;
    const items: Array<Record<string, any>> = [];
    let after: string | null = null;
    do {
      const page: { status: number; body: any } = await api
        .get('/v1/balance-transactions')
        .query({ limit: 7, ...(after ? { after } : {}) });
      expect(page.status).toBe(200);
      items.push(...page.body.items);
      after = page.body.cursor.after;
    } while (after);
    const ledger = await harness.prisma.ledgerEntry.count({
      where: {
        OR: [
          { account: { wallet: { partnerId: parties.partner.partnerId } } },
          { account: { systemCode: `partner_fees:${parties.partner.partnerId}` } },
        ],
      },
    });
    expect(items).toHaveLength(ledger);

    // Per wallet, oldest first: each balance is the one before plus the amount, and the last is the wallet's balance.
    const wallets = await api.get('/v1/wallets');
    for (const wallet of wallets.body.items as Array<{
      id: string;
      balances: Array<{ currency: string; amount: string }>;
    }>) {
      const mine = items.filter((item) => item.wallet_id === wallet.id && item.currency === 'USDC').reverse();
      expect(mine.length).toBeGreaterThan(0);
      let balance = new Decimal(0);
      for (const item of mine) {
        balance = balance.plus(item.amount);
        expect(item.balance_after).toBe(balance.toFixed(6));
      }
      expect(balance.toFixed(6)).toBe(wallet.balances.find((b) => b.currency === 'USDC')!.amount);
      const filtered = await api.get('/v1/balance-transactions').query({ wallet_id: wallet.id, limit: 100 });
      expect(filtered.body.items.map((item: { id: string }) => item.id)).toEqual(
        items.filter((item) => item.wallet_id === wallet.id).map((item) => item.id),
      );
    }
    expect(items.find((item) => item.source.id === flows.payin && item.account === 'wallet')).toMatchObject({
      source: { type: 'transaction', id: flows.payin, step: 'delivered' },
      amount: expect.stringMatching(/^\d+\.\d{6}$/),
    });
    expect(
      items
        .filter((item) => item.source.id === flows.internalTransfer)
        .map((item) => item.source.step)
        .sort(),
    ).toEqual(['delivered', 'hold']);

    // Fees: the partner's fee account, without a balance after, adding up to its fee balance.
    const fees = items.filter((item) => item.account === 'partner_fees');
    expect(fees.every((item) => item.balance_after === null && item.wallet_id === null)).toBe(true);
    const balance = await api.get('/v1/partner/balance');
    expect(balance.status).toBe(200);
    const expected = new Map<string, Decimal>();
    for (const fee of fees) expected.set(fee.currency, (expected.get(fee.currency) ?? new Decimal(0)).plus(fee.amount));
    expect(
      (balance.body.partner_fees as Array<{ currency: string; amount: string }>).map((b) => [
        b.currency,
        new Decimal(b.amount).toFixed(),
      ]),
    ).toEqual([...expected].sort().map(([currency, total]) => [currency, total.toFixed()]));
    expect(balance.body.partner_fees.length).toBeGreaterThan(1);

    const bySource = await api.get('/v1/balance-transactions').query({ source_type: 'wallet_transfer', limit: 100 });
    expect(bySource.body.items.length).toBeGreaterThan(0);
    expect(bySource.body.items.every((item: any) => item.source.type === 'wallet_transfer')).toBe(true);
    const usdt = await api.get('/v1/balance-transactions').query({ currency: 'USDT' });
    expect(usdt.body.items).toEqual([]);
    const foreign = await (
      await harness.createPartner()
    ).api
      .get('/v1/balance-transactions')
      .query({ wallet_id: parties.wallet.id });
    expect([foreign.status, foreign.body.error.code]).toEqual([404, 'not_found']);
  });
});

describe('settlement report', () => {
  it('is a CSV of the day’s final transactions whose columns add up to the ledger’s, and the same in JSON', async () => {
    const finals = await harness.prisma.event.findMany({
      where: { partnerId: parties.partner.partnerId, resourceId: flows.fiatToFiat, eventType: 'payin.completed' },
    });
    const date = finals[0]!.createdAt.toISOString().slice(0, 10);
    const response = await parties.partner.api.get('/v1/reports/settlements').query({ date }).buffer(true);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toBe(`attachment; filename="settlements-${date}.csv"`);
    const text = response.text;
    const lines = text.split('\r\n').filter((line) => line !== '');
    expect(text.endsWith('\r\n')).toBe(true);
    const header = lines[0]!.split(',');
    expect(header.slice(0, 5)).toEqual(['transaction_id', 'type', 'customer_id', 'status', 'failure_reason']);
    const rows = lines.slice(1).map((line) => Object.fromEntries(line.split(',').map((cell, i) => [header[i], cell])));
    const transactionIds = [
      flows.payin,
      flows.fiatToFiat,
      flows.refundedAfterLeg1,
      flows.wrongAmount,
      flows.cancelled,
      flows.depositedTwice,
      flows.payout,
      flows.payoutRefunded,
      flows.payoutSentIn,
    ];
    // The file's rows are this partner's, one per transaction that ended (a run crossing midnight UTC would split them).
    expect(rows.map((row) => row.transaction_id).sort()).toEqual([...transactionIds].sort());
    expect(rows.find((row) => row.transaction_id === flows.refundedAfterLeg1)).toMatchObject({
      type: 'fiat_to_fiat',
      status: 'refunded',
      failure_reason: 'payout_rejected',
      service_fee: '0.00',
      finalized_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
    });

    // The ledger's side, per currency: fees on each fee account, and what went out to receivers.
    const ledgerSum = async (account: string, step?: string) => {
      const sums = await harness.prisma.$queryRaw<Array<{ currency: string; total: string }>>`
        SELECT e.currency, sum(e.amount)::text AS total
        FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
        JOIN ledger_accounts a ON a.id = e.account_id
        WHERE split_part(t.reference, ':', 2) = ANY(${transactionIds}::text[]) AND t.reference LIKE 'transaction:%'
          AND a.system_code = ${account} AND (${step ?? null}::text IS NULL OR split_part(t.reference, ':', 3) = ${step ?? null})
        GROUP BY e.currency HAVING sum(e.amount) <> 0 ORDER BY e.currency::text`;
      return sums.map(({ currency, total }) => [currency, new Decimal(total).toFixed()]);
    };
    const reportSum = (column: string, currencyColumn: string, keep = (_row: Record<string, string>) => true) => {
      const sums = new Map<string, Decimal>();
      for (const row of rows.filter(keep)) {
        sums.set(row[currencyColumn]!, (sums.get(row[currencyColumn]!) ?? new Decimal(0)).plus(row[column]!));
      }
      return [...sums]
        .filter(([, total]) => !total.isZero())
        .sort()
        .map(([currency, total]) => [currency, total.toFixed()]);
    };
    expect(reportSum('service_fee', 'fee_currency')).toEqual(await ledgerSum('fee_revenue'));
    expect(reportSum('partner_fee', 'fee_currency')).toEqual(
      await ledgerSum(`partner_fees:${parties.partner.partnerId}`),
    );
    expect(reportSum('network_fee', 'fee_currency')).toEqual(await ledgerSum('network_fees'));
    expect(reportSum('service_fee', 'fee_currency').length).toBeGreaterThan(1);
    const paidOut = (row: Record<string, string>) => row.status === 'completed' && row.type !== 'payin';
    expect(reportSum('receiver_amount', 'receiver_currency', paidOut)).toEqual(await ledgerSum('settlement', 'payout'));

    const json = await parties.partner.api
      .get('/v1/reports/settlements')
      .query({ date })
      .set('Accept', 'application/json');
    expect(json.status).toBe(200);
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(json.body.time_zone).toBe('UTC');
    expect(json.body.items.map((item: any) => item.transaction_id)).toEqual(rows.map((row) => row.transaction_id));
    expect(json.body.items[0].finalized_at).toMatch(/Z$/);

    const empty = await parties.partner.api.get('/v1/reports/settlements').query({ date: '2001-01-01' }).buffer(true);
    expect(empty.text).toBe(`${header.join(',')}\r\n`);
    const invalid = await parties.partner.api.get('/v1/reports/settlements').query({ date: '2026-02-30' });
    expect(invalid.status).toBe(400);
  });
});

describe('settlement report: what really moved', () => {
  // A partner of its own: its report holds exactly these rows, whatever flows the other blocks add.
  let own: Parties;
  const moved: Record<string, TransactionBody> = {};

  beforeAll(async () => {
    own = await setUpParties(harness);
    const settled = async (name: string, transaction: TransactionBody, expected: string) => {
      expect(await settlementHandle(harness, transaction.id).result()).toBe(expected);
      moved[name] = transaction;
    };
    const completed = await createTransaction(own);
    await deposit(own, completed);
    await settled('completed', completed, 'completed');
    // A deposit of another amount than the quote's is taken and refunded in full.
    const short = await createTransaction(own);
    await deposit(own, short, { amount: '999.99' });
    await settled('short', short, 'refunded');
    // The payout is rejected after leg 1: the stablecoin is sold back below the locked rate (the sandbox's spread).
    const soldBack = await createTransaction(own);
    await deposit(own, soldBack, { simulate: 'payout_rejected' });
    await settled('soldBack', soldBack, 'refunded');
    const payin = await createPayin(own);
    await deposit(own, payin);
    await settled('payin', payin, 'completed');
    // From the wallet the pay-in funded: its refund credits the wallet, nothing goes out.
    await settled('walletPayoutRefunded', await createPayout(own, { simulate: 'payout_rejected' }), 'refunded');
    const cancelled = await createTransaction(own);
    expect((await own.partner.api.put(`/v1/transactions/${cancelled.id}`).send({ status: 'cancelled' })).status).toBe(
      200,
    );
    await settled('cancelled', cancelled, 'cancelled');
  });

  it('shows the deposit received, the amount returned, the sell-back and its FX loss, adding up to the ledger', async () => {
    const ids = Object.values(moved).map(({ id }) => id);
    const final = await harness.prisma.event.findFirstOrThrow({
      where: { partnerId: own.partner.partnerId, resourceId: moved.completed!.id, eventType: 'payin.completed' },
    });
    const date = final.createdAt.toISOString().slice(0, 10);
    const response = await own.partner.api.get('/v1/reports/settlements').query({ date }).buffer(true);
    expect(response.status).toBe(200);
    const [headerLine, ...lines] = response.text.split('\r\n').filter((line) => line !== '');
    const header = headerLine!.split(',');
    const rows = lines.map((line) => Object.fromEntries(line.split(',').map((cell, i) => [header[i]!, cell])));
    expect(rows.map((row) => row.transaction_id).sort()).toEqual([...ids].sort());
    const rowOf = (name: string) => rows.find((row) => row.transaction_id === moved[name]!.id);

    // What the partner sees per row (an empty cell is null): the quote's amount beside what really moved.
    const none = { deposit_received: '', returned_to_sender: '', sell_back_proceeds: '', fx_gain_loss: '' };
    expect(rowOf('short')).toMatchObject({
      status: 'refunded',
      failure_reason: 'deposit_amount_mismatch',
      sender_currency: 'BRL',
      sender_amount: '1000.00',
      deposit_received: '999.99',
      returned_to_sender: '999.99',
      sell_back_proceeds: '',
      fx_gain_loss: '',
    });
    expect(rowOf('completed')).toMatchObject({ ...none, deposit_received: '1000.00' });
    expect(rowOf('payin')).toMatchObject({ ...none, sender_currency: 'USD', deposit_received: '1000.00' });
    expect(rowOf('walletPayoutRefunded')).toMatchObject({ status: 'refunded', ...none });
    expect(rowOf('cancelled')).toMatchObject({ status: 'cancelled', ...none });
    const soldBack = rowOf('soldBack')!;
    expect(soldBack).toMatchObject({ deposit_received: '1000.00', returned_to_sender: '1000.00' });
    // The exchange paid less than leg 1's amount at the locked rate (the sender amount less the fees): a loss.
    expect(new Decimal(soldBack.fx_gain_loss!).isNegative()).toBe(true);
    const atLockedRate = new Decimal(moved.soldBack!.sender.amount).minus(moved.soldBack!.fees.total.amount);
    expect(new Decimal(soldBack.sell_back_proceeds!).minus(soldBack.fx_gain_loss!).toFixed(2)).toBe(
      atLockedRate.toFixed(2),
    );

    // The ledger's side: what these transactions' postings hold on an account, per currency (of one step or all).
    type Sums = Array<[string, string]>;
    const ledgerSum = async (account: string, step: string | null = null): Promise<Sums> => {
      const sums = await harness.prisma.$queryRaw<Array<{ currency: string; total: string }>>`
        SELECT e.currency, sum(e.amount)::text AS total
        FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
        JOIN ledger_accounts a ON a.id = e.account_id
        WHERE t.reference LIKE 'transaction:%' AND split_part(t.reference, ':', 2) = ANY(${ids}::text[])
          AND a.system_code = ${account} AND (${step}::text IS NULL OR split_part(t.reference, ':', 3) = ${step})
        GROUP BY e.currency HAVING sum(e.amount) <> 0 ORDER BY e.currency::text`;
      return sums.map(({ currency, total }) => [currency, new Decimal(total).toFixed()]);
    };
    /** Per currency, the sum of what `amounts` reads from each row (empty cells left out). */
    const reportSum = (amounts: (row: Record<string, string>) => Array<[string, string | undefined]>): Sums => {
      const sums = new Map<string, Decimal>();
      for (const [currency, value] of rows.flatMap(amounts)) {
        if (value) sums.set(currency, (sums.get(currency) ?? new Decimal(0)).plus(value));
      }
      return [...sums]
        .filter(([, total]) => !total.isZero())
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([currency, total]) => [currency, total.toFixed()]);
    };
    const column =
      (name: string, sign = 1) =>
      (row: Record<string, string>) =>
        [[row.sender_currency!, row[name] && new Decimal(row[name]).times(sign).toFixed()]] as Array<[string, string]>;
    const fiat = (sums: Sums) => sums.filter(([currency]) => !isStablecoin(currency as Currency));

    expect(reportSum(column('deposit_received', -1))).toEqual(await ledgerSum('settlement', 'deposit'));
    expect(reportSum(column('returned_to_sender'))).toEqual(await ledgerSum('settlement', 'refund'));
    expect(reportSum(column('sell_back_proceeds', -1))).toEqual(fiat(await ledgerSum('fx', 'sell_back')));
    expect(reportSum(column('fx_gain_loss'))).toEqual(await ledgerSum('fx_gain_loss'));
    // Everything these transactions moved in from and out to the outside world: deposits in, refunds and payouts out.
    const paidOut = (row: Record<string, string>): Array<[string, string | undefined]> =>
      row.status === 'completed' && row.type !== 'payin' ? [[row.receiver_currency!, row.receiver_amount]] : [];
    expect(
      reportSum((row) => [
        ...column('deposit_received', -1)(row),
        ...column('returned_to_sender')(row),
        ...paidOut(row),
      ]),
    ).toEqual(await ledgerSum('settlement'));
    expect((await ledgerSum('fx_gain_loss')).length).toBe(1);

    // JSON has the same figures, nulls as null.
    const json = await own.partner.api.get('/v1/reports/settlements').query({ date, format: 'json' });
    expect(json.status).toBe(200);
    const item = (name: string) => json.body.items.find((row: any) => row.transaction_id === moved[name]!.id);
    expect(item('short')).toMatchObject({ sender_amount: '1000.00', deposit_received: '999.99', fx_gain_loss: null });
    expect(item('soldBack')).toMatchObject({
      sell_back_proceeds: soldBack.sell_back_proceeds,
      fx_gain_loss: soldBack.fx_gain_loss,
    });
  });
});
