// Exactly once in effect, with a real worker OS process killed (SIGKILL) in the worst place of each
// money-moving step (of a settlement, and of a wallet transfer): after the step committed its work (the provider did it, or the database
// transaction committed) and before Temporal heard of it. The step then runs again on a restarted
// worker, and the transaction completes with no duplicated ledger entry, payout or event. The same for
// a pay-in (leg 1 alone) and a payout (leg 2 alone). The flows run side by side and share each kill (a step of each
// committed, then one SIGKILL), since each start of a worker process (its modules, its workflow thread) is costly.
//
// How each kill lands there, deterministically: the test holds a database lock the step needs (the
// provider's idempotency key, or the transaction's row) so the step's activity waits; it cuts the
// worker's connection to Temporal (a TCP proxy); it releases the lock, so the step commits but cannot
// report; it sees the commit, then SIGKILLs the worker, restores the connection, starts a new worker,
// and fails the lost attempt through Temporal's API (what the server does when its timeout passes, which the
// time-skipping test server would make the test wait for in real time) so Temporal retries it there.
import { Client } from 'pg';
import { type WorkflowHandle, WorkflowUpdateFailedError } from '@temporalio/client';
import { resolveErrorUpdate, settlementStateQuery } from '../workflows/settlement';
import { recheckSendUpdate, sendOutcomeUnknownQuery } from '../workflows/wallet-transfer';
import { connectionName } from '../src/persistence/database';
import { Harness, startHarness } from './support/harness';
import {
  failLostAttempts,
  isStarted,
  pendingActivitiesOf,
  ServiceProcess,
  startWorkerProcess,
} from './support/service-processes';
import { TcpProxy } from './support/tcp-proxy';
import { Decimal } from '../src/domain/money';
import { balanceOf, createPayin, createPayout, expectPaymentLedgerInvariants } from './support/payments';
import {
  createTransaction,
  eventTypesOf,
  expectLedgerInvariants,
  ledgerOf,
  Parties,
  setUpParties,
  settlementHandle,
  TransactionBody,
} from './support/transactions';

let harness: Harness;
let proxy: TcpProxy;
let worker: ServiceProcess | null = null;
let parties: Parties;

/** A worker process reaching Temporal through the proxy (the harness's bounds: see testLimitsAndBounds). */
const startWorker = () => startWorkerProcess(harness, { temporalAddress: proxy.address });

async function killWorker(): Promise<void> {
  const killed = worker as ServiceProcess;
  worker = null;
  await killed.stop('SIGKILL');
}

beforeAll(async () => {
  harness = await startHarness({}, { inProcessWorker: false });
  proxy = await TcpProxy.forAddress(harness.env.address).start();
  worker = await startWorker();
  parties = await setUpParties(harness);
}, 120_000);

afterAll(async () => {
  if (worker) await killWorker();
  await proxy?.stop();
  await harness?.teardown();
});

/** A lock held in a database transaction of its own; `release` rolls it back. */
interface HeldLock {
  pid: number;
  release(): Promise<void>;
}

async function holdLock(statement: string, values: unknown[]): Promise<HeldLock> {
  const client = new Client({ connectionString: harness.config.databaseUrl });
  await client.connect();
  await client.query('BEGIN');
  await client.query(statement, values);
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  return {
    pid,
    async release() {
      await client.query('ROLLBACK');
      await client.end();
    },
  };
}

/** The provider's record of `<transactionId>:<step>`, written and not committed: the provider call waits on it. */
const holdProviderKey = (key: string) =>
  holdLock(
    `INSERT INTO sandbox_rail_operations (idempotency_key, kind, currency, amount, outcome)
     VALUES ($1, 'held', 'USD', 1, 'completed')`,
    [key],
  );
/** The transaction's row: every status change and ledger posting of the settlement waits on it. */
const holdTransactionRow = (id: string) => holdLock('SELECT id FROM transactions WHERE id = $1::uuid FOR UPDATE', [id]);

/** Polls `probe`; with `skipTime`, the test server's clock moves 2 s between polls (else it stands still). */
async function until(probe: () => Promise<boolean>, what: string, skipTime = false): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    if (skipTime) await harness.env.sleep('2 seconds');
    else await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Waiter {
  /** Whose connection waits (src/persistence/database.ts connectionName: `worker-<pid>` for a worker process's). */
  applicationName: string;
  /** The first 100 characters of its statement. */
  query: string;
}

/** The statements waiting on the lock. */
async function waitersOf(lock: HeldLock): Promise<Waiter[]> {
  return harness.prisma.$queryRaw<Waiter[]>`
    SELECT application_name AS "applicationName", left(query, 100) AS query
    FROM pg_stat_activity WHERE ${lock.pid}::int = ANY(pg_blocking_pids(pid))`;
}

const settlementWorkflowIds = (transactionId: string) => [
  `transaction-${transactionId}`,
  `transaction-${transactionId}-fiat-to-stablecoin`,
  `transaction-${transactionId}-stablecoin-to-fiat`,
];

/** The pending activities with their last failure, to tell why a step never committed. */
async function describePendingActivities(workflowIds: string[]): Promise<string> {
  const found = await pendingActivitiesOf(harness, workflowIds);
  return JSON.stringify(
    found.map(({ workflowId, pending }) => ({
      workflowId,
      type: pending.activityType?.name,
      state: pending.state,
      attempt: pending.attempt,
      lastFailure: pending.lastFailure?.message,
    })),
  );
}

/** One flow's step to kill the worker after: `lock` is held and the step waits on it. */
interface KillPoint {
  /** The transaction's (or transfer's) id. */
  id: string;
  step: string;
  lock: HeldLock;
  committed: () => Promise<boolean>;
  /** The lock for the flow's next kill, taken before the new worker starts. */
  nextLock?: () => Promise<HeldLock>;
  workflowIds?: string[];
}

/**
 * The kill, after a step of each of several flows at once (one worker process for all of them): every step waits on
 * its lock. Cut the worker off Temporal, let the steps commit, see every commit, SIGKILL. The next locks are taken
 * before the new worker starts; then the lost attempts are failed so that Temporal retries the steps on the new
 * worker. Answers each flow's next lock.
 */
async function killAfterCommits(points: KillPoint[]): Promise<Array<HeldLock | undefined>> {
  // Server time moves on while waiting, so timers and retries reach the worker. The waiter must be the current
  // worker process's connection: test files run side by side on one database, and another file's statement waiting
  // on the same row (payments.test.ts locked every transaction's row once) is not the step. The step must be its
  // flow's one activity running: cut off while the previous step's retry had not reported yet, the step would never
  // be scheduled.
  const workflowIdsOf = (point: KillPoint) => point.workflowIds ?? settlementWorkflowIds(point.id);
  const waiting = new Map<KillPoint, Waiter[]>();
  const workerConnection = connectionName('worker', undefined, (worker as ServiceProcess).pid);
  const waits = async (point: KillPoint) => {
    const waiters = await waitersOf(point.lock);
    waiting.set(point, waiters);
    if (!waiters.some((waiter) => waiter.applicationName === workerConnection)) return false;
    const started = (await pendingActivitiesOf(harness, workflowIdsOf(point))).filter(({ pending }) =>
      isStarted(pending),
    );
    return started.length === 1;
  };
  const steps = points.map((point) => point.step).join(', ');
  await until(async () => (await Promise.all(points.map(waits))).every(Boolean), `${steps} wait on their locks`, true);
  proxy.cut();
  for (const point of points) await point.lock.release();
  for (const point of points) {
    await until(point.committed, `${point.step} committed`).catch(async (error: Error) => {
      const pending = await describePendingActivities(workflowIdsOf(point));
      throw new Error(
        `${error.message}; waited on the lock: ${JSON.stringify(waiting.get(point))}; pending: ${pending}`,
      );
    });
  }
  await killWorker();
  proxy.restore();
  const next: Array<HeldLock | undefined> = [];
  for (const point of points) next.push(await point.nextLock?.());
  worker = await startWorker();
  await failLostAttempts(harness, points.flatMap(workflowIdsOf));
  return next;
}

/**
 * Whether the provider recorded the flow's `step`: one record, however many requests (the test's held record is
 * not it).
 */
const provided = (id: string, step: string) => async () =>
  (await harness.prisma.sandboxRailOperation.count({
    where: { idempotencyKey: `${id}:${step}`, kind: { not: 'held' } },
  })) === 1;
/** Whether the flow's posting `step` committed, once. */
const posted = (id: string, step: string) => async () =>
  (await harness.prisma.ledgerTransaction.count({ where: { reference: `transaction:${id}:${step}` } })) === 1;

it('completes a settlement, a pay-in, a payout and a wallet transfer killed after each of their steps committed, with nothing duplicated', async () => {
  const { api } = parties.partner;
  // The settlement, waiting for its deposit.
  const transaction: TransactionBody = await createTransaction(parties);
  const settlement = transaction.id;
  // The pay-in (leg 1 alone), waiting for its deposit.
  const payin = await createPayin(parties);
  const balanceBefore = await balanceOf(api, parties.wallet.id);
  // The payout (leg 2 alone), waiting for its confirmation.
  const payout = (await createPayout(parties, { wallet_id: undefined })).id;
  // The wallet transfer: its completion credits the destination, so it waits on the destination's balance row.
  const destination = (
    await api.post('/v1/wallets').send({ customer_id: parties.customer.id, name: 'Kill', chain: 'solana' })
  ).body as { id: string };
  expect(
    (await api.post(`/v1/sandbox/wallets/${parties.wallet.id}/fund`).send({ currency: 'USDT', amount: '10' })).status,
  ).toBe(200);
  const destinationRow = await holdLock(
    `SELECT id FROM ledger_accounts WHERE wallet_id = $1::uuid AND currency = 'USDT' FOR UPDATE`,
    [destination.id],
  );
  const created = await api
    .post('/v1/wallet-transfer')
    .send({ from_wallet_id: parties.wallet.id, to_wallet_id: destination.id, currency: 'USDT', amount: '4' });
  expect(created.status).toBe(201);
  const transfer = created.body.id as string;

  const settlementConversionKey = await holdProviderKey(`${settlement}:fiat_to_stablecoin`);
  const payinConversionKey = await holdProviderKey(`${payin.id}:fiat_to_stablecoin`);
  const payoutKey = await holdProviderKey(`${payout}:stablecoin_to_fiat`);
  expect(
    (await api.post(`/v1/sandbox/transactions/${settlement}/deposit`).send({ amount: transaction.sender.amount }))
      .status,
  ).toBe(201);
  expect(
    (await api.post(`/v1/sandbox/transactions/${payin.id}/deposit`).send({ amount: payin.sender.amount })).status,
  ).toBe(201);
  expect((await api.post('/v1/payout/confirm').send({ transaction_id: payout, tx_hash: '5'.repeat(88) })).status).toBe(
    200,
  );

  // 1. The exchange converted (the settlement's leg 1, the pay-in), the payout went out, the transfer's completion
  // committed: the worker died before Temporal knew.
  const [settlementRow1, payinRow, payoutRow] = await killAfterCommits([
    {
      id: settlement,
      step: "the settlement's conversion",
      lock: settlementConversionKey,
      committed: provided(settlement, 'fiat_to_stablecoin'),
      nextLock: () => holdTransactionRow(settlement),
    },
    {
      id: payin.id,
      step: "the pay-in's conversion",
      lock: payinConversionKey,
      committed: provided(payin.id, 'fiat_to_stablecoin'),
      nextLock: () => holdTransactionRow(payin.id),
    },
    {
      id: payout,
      step: "the payout's payout",
      lock: payoutKey,
      committed: provided(payout, 'stablecoin_to_fiat'),
      nextLock: () => holdTransactionRow(payout),
    },
    {
      id: transfer,
      step: 'the transfer completion',
      lock: destinationRow,
      committed: async () =>
        (await harness.prisma.ledgerTransaction.count({
          where: { reference: `wallet-transfer:${transfer}:delivered` },
        })) === 1,
      workflowIds: [`wallet-transfer-${transfer}`],
    },
  ]);

  // 2. The settlement's leg 1 posting, the pay-in's completion (its postings, the credit to the wallet, `completed`)
  // and the payout's completion committed; the worker died before reporting them.
  const [settlementPayoutKey] = await killAfterCommits([
    {
      id: settlement,
      step: "the settlement's leg 1 posting",
      lock: settlementRow1 as HeldLock,
      committed: posted(settlement, 'fiat_to_stablecoin'),
      nextLock: () => holdProviderKey(`${settlement}:stablecoin_to_fiat`),
    },
    {
      id: payin.id,
      step: "the pay-in's completion",
      lock: payinRow as HeldLock,
      committed: posted(payin.id, 'delivered'),
    },
    { id: payout, step: "the payout's completion", lock: payoutRow as HeldLock, committed: posted(payout, 'payout') },
  ]);

  // 3. The settlement's payout went out; the worker died before Temporal knew.
  const [settlementRow2] = await killAfterCommits([
    {
      id: settlement,
      step: "the settlement's payout",
      lock: settlementPayoutKey as HeldLock,
      committed: provided(settlement, 'stablecoin_to_fiat'),
      nextLock: () => holdTransactionRow(settlement),
    },
  ]);

  // 4. The settlement's completion (leg 2's postings, status completed, event) committed; the worker died before
  // reporting it.
  await killAfterCommits([
    {
      id: settlement,
      step: "the settlement's completion",
      lock: settlementRow2 as HeldLock,
      committed: posted(settlement, 'payout'),
    },
  ]);

  await expectSettlementOnce(settlement);
  await expectPayinOnce(payin.id, balanceBefore);
  await expectPayoutOnce(payout);
  await expectTransferOnce(transfer, destination.id);
}, 240_000);

/** The settlement completed; every step ran at least twice (the killed attempt and the retry) and took effect once. */
async function expectSettlementOnce(id: string): Promise<void> {
  expect(await settlementHandle(harness, id).result()).toBe('completed');
  const final = (await parties.partner.api.get(`/v1/transactions/${id}`)).body as TransactionBody;
  expect(final.status).toBe('completed');
  const operations = await harness.prisma.sandboxRailOperation.findMany({
    where: { idempotencyKey: { startsWith: id } },
    orderBy: { createdAt: 'asc' },
  });
  expect(operations.map((operation) => [operation.kind, operation.outcome])).toEqual([
    ['conversion', 'completed'],
    ['payout', 'completed'],
  ]);
  for (const operation of operations) expect(operation.requests).toBeGreaterThanOrEqual(2);
  const ledger = await ledgerOf(harness, id);
  expect(ledger.references).toEqual(['deposit', 'fiat_to_stablecoin', 'stablecoin_to_fiat', 'payout']);
  expect(ledger.entryCount).toBe(2 + 7 + 4 + 2);
  expectLedgerInvariants(ledger, final, parties.partner.partnerId, parties.wallet.id);
  expect(await eventTypesOf(harness, id)).toEqual(['payin.created', 'payin.processing', 'payin.completed']);
  const legs = await harness.prisma.transactionLeg.findMany({ where: { transactionId: id } });
  expect(legs.map((leg) => [leg.kind, leg.status]).sort()).toEqual([
    ['fiat_to_stablecoin', 'completed'],
    ['stablecoin_to_fiat', 'completed'],
  ]);
  expect(await harness.prisma.transactionDeposit.count({ where: { transactionId: id } })).toBe(1);
}

/** The pay-in completed, converted once and credited to the wallet once. */
async function expectPayinOnce(id: string, balanceBefore: string): Promise<void> {
  expect(await settlementHandle(harness, id).result()).toBe('completed');
  const final = (await parties.partner.api.get(`/v1/transactions/${id}`)).body as TransactionBody;
  const operations = await harness.prisma.sandboxRailOperation.findMany({
    where: { idempotencyKey: { startsWith: id } },
  });
  expect(operations.map((operation) => [operation.kind, operation.outcome])).toEqual([['conversion', 'completed']]);
  expect(operations[0]?.requests).toBeGreaterThanOrEqual(2);
  const ledger = await ledgerOf(harness, id);
  expect(ledger.references).toEqual(['deposit', 'fiat_to_stablecoin', 'delivered']);
  expect(ledger.entryCount).toBe(2 + 6 + 2);
  expectPaymentLedgerInvariants(ledger, final, parties.partner.partnerId);
  expect(await eventTypesOf(harness, id)).toEqual(['payin.created', 'payin.processing', 'payin.completed']);
  expect(await balanceOf(parties.partner.api, parties.wallet.id)).toBe(
    new Decimal(balanceBefore).plus(final.stablecoin.amount).toFixed(6),
  );
}

/** The payout completed and paid out once. */
async function expectPayoutOnce(id: string): Promise<void> {
  expect(await settlementHandle(harness, id).result()).toBe('completed');
  const final = (await parties.partner.api.get(`/v1/transactions/${id}`)).body as TransactionBody;
  const operations = await harness.prisma.sandboxRailOperation.findMany({
    where: { idempotencyKey: { startsWith: id } },
  });
  expect(operations.map((operation) => [operation.kind, operation.outcome])).toEqual([['payout', 'completed']]);
  expect(operations[0]?.requests).toBeGreaterThanOrEqual(2);
  const ledger = await ledgerOf(harness, id);
  expect(ledger.references).toEqual(['deposit', 'funding', 'stablecoin_to_fiat', 'payout']);
  expectPaymentLedgerInvariants(ledger, final, parties.partner.partnerId);
  expect(await eventTypesOf(harness, id)).toEqual(['payout.created', 'payout.processing', 'payout.completed']);
  expect(await harness.prisma.transactionDeposit.count({ where: { transactionId: id } })).toBe(1);
}

/** The wallet transfer completed, delivered once. */
async function expectTransferOnce(id: string, destinationId: string): Promise<void> {
  const { api } = parties.partner;
  expect(await harness.env.client.workflow.getHandle(`wallet-transfer-${id}`).result()).toBe('completed');
  expect((await api.get(`/v1/wallet-transfers/${id}`)).body.status).toBe('completed');
  const balances = async (walletId: string) => (await api.get(`/v1/wallets/${walletId}`)).body.balances;
  expect(await balances(parties.wallet.id)).toContainEqual({ currency: 'USDT', amount: '6.000000' });
  expect(await balances(destinationId)).toContainEqual({ currency: 'USDT', amount: '4.000000' });
  const postings = await harness.prisma.ledgerTransaction.findMany({
    where: { reference: { startsWith: `wallet-transfer:${id}:` } },
    orderBy: { createdAt: 'asc' },
  });
  expect(postings.map((posting) => posting.reference)).toEqual([
    `wallet-transfer:${id}:hold`,
    `wallet-transfer:${id}:delivered`,
  ]);
  expect(await eventTypesOf(harness, id)).toEqual(['walletTransfer.created', 'walletTransfer.completed']);
}

/** Polls until every probe holds, the test server's clock moving on. */
const untilEvery = (probes: Array<() => Promise<boolean>>, what: string) =>
  until(async () => (await Promise.all(probes.map((probe) => probe()))).every(Boolean), what, true);

/** SIGKILL the worker wherever it is, start another, and fail the dead worker's started attempts. */
async function killAnywhere(workflowIds: string[]): Promise<void> {
  await killWorker();
  worker = await startWorker();
  await failLostAttempts(harness, workflowIds);
}

it('pays once when a payout was made and its answers lost (simulate payout_timeout_after_execution, payout_outcome_unknown), with the worker killed meanwhile', async () => {
  // Both settlements at once, one worker killed for both.
  const flows = await Promise.all(
    (['payout_timeout_after_execution', 'payout_outcome_unknown'] as const).map(async (simulate) => {
      const transaction: TransactionBody = await createTransaction(parties);
      const deposited = await parties.partner.api
        .post(`/v1/sandbox/transactions/${transaction.id}/deposit`)
        .send({ amount: transaction.sender.amount, simulate });
      expect(deposited.status).toBe(201);
      return { simulate, id: transaction.id, handle: settlementHandle(harness, transaction.id) };
    }),
  );
  await untilEvery(
    flows.map(({ id }) => provided(id, 'stablecoin_to_fiat')),
    'the payouts were made',
  );
  await killAnywhere(flows.flatMap(({ id }) => settlementWorkflowIds(id)));

  for (const { simulate, id, handle } of flows) {
    const state = async () => handle.query(settlementStateQuery);
    for (let step = 0; step < 40; step += 1) {
      const { awaitingOperator, step: current } = await state();
      if (awaitingOperator || current === 'done') break;
      await harness.env.sleep('10 minutes');
    }
    const unknown = simulate === 'payout_outcome_unknown';
    if (unknown) {
      // The rail could not say: in error, the refund refused (the receiver may be paid); a retry asks again.
      expect(await state()).toMatchObject({
        status: 'error',
        step: 'stablecoin_to_fiat',
        refundBlocked: expect.any(String),
      });
      await expect(handle.executeUpdate(resolveErrorUpdate, { args: [{ action: 'refund' }] })).rejects.toBeInstanceOf(
        WorkflowUpdateFailedError,
      );
      expect(await handle.executeUpdate(resolveErrorUpdate, { args: [{ action: 'retry' }] })).toBe('retry');
    }
    expect(await handle.result()).toBe('completed');

    const final = (await parties.partner.api.get(`/v1/transactions/${id}`)).body as TransactionBody;
    const operations = await harness.prisma.sandboxRailOperation.findMany({
      where: { idempotencyKey: { startsWith: id } },
      orderBy: { createdAt: 'asc' },
    });
    expect(operations.map((operation) => [operation.kind, operation.outcome])).toEqual([
      ['conversion', 'completed'],
      ['payout', 'completed'],
    ]);
    const ledger = await ledgerOf(harness, id);
    expect(ledger.references).toEqual(['deposit', 'fiat_to_stablecoin', 'stablecoin_to_fiat', 'payout']);
    expectLedgerInvariants(ledger, final, parties.partner.partnerId, parties.wallet.id);
    expect(await eventTypesOf(harness, id)).toEqual([
      'payin.created',
      'payin.processing',
      ...(unknown ? ['payin.error', 'payin.processing'] : []),
      'payin.completed',
    ]);
  }
}, 240_000);

it('sends a wallet transfer once when its broadcast’s answers were lost (simulate send_timeout_after_broadcast, send_outcome_unknown), with the worker killed meanwhile', async () => {
  const { api } = parties.partner;
  expect(
    (await api.post(`/v1/sandbox/wallets/${parties.wallet.id}/fund`).send({ currency: 'USDC', amount: '20' })).status,
  ).toBe(200);
  const usdc = async () =>
    new Decimal(
      (
        (await api.get(`/v1/wallets/${parties.wallet.id}`)).body.balances as Array<{
          currency: string;
          amount: string;
        }>
      ).find((balance) => balance.currency === 'USDC')!.amount,
    );
  const before = await usdc();
  // Both transfers at once, one worker killed for both.
  const flows: Array<{ simulate: string; id: string; handle: WorkflowHandle }> = [];
  for (const simulate of ['send_timeout_after_broadcast', 'send_outcome_unknown'] as const) {
    const created = await api.post('/v1/wallet-transfer').send({
      from_wallet_id: parties.wallet.id,
      to_address: 'So11111111111111111111111111111111111111112',
      currency: 'USDC',
      amount: '4',
      simulate,
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    flows.push({ simulate, id, handle: harness.env.client.workflow.getHandle(`wallet-transfer-${id}`) });
  }
  // What both take from the wallet, each its amount and its network fee, once: held from their creation.
  const debited = async () => {
    let sum = new Decimal(0);
    for (const { id } of flows) {
      sum = sum.plus(4).plus((await api.get(`/v1/wallet-transfers/${id}`)).body.network_fee);
    }
    return sum;
  };
  await untilEvery(
    flows.map(({ id }) => provided(id, 'send')),
    'the transfers were broadcast',
  );
  await killAnywhere(flows.map(({ id }) => `wallet-transfer-${id}`));

  for (const { simulate, id, handle } of flows) {
    if (simulate === 'send_outcome_unknown') {
      // The chain is asked again for about two hours of (skipped) time.
      for (let step = 0; step < 40 && !(await handle.query(sendOutcomeUnknownQuery)); step += 1) {
        await harness.env.sleep('10 minutes');
      }
      expect(await handle.query(sendOutcomeUnknownQuery)).toBe(true);
      // Held, not returned, while it may have been sent.
      expect(before.minus(await usdc()).toFixed(6)).toBe((await debited()).toFixed(6));
      expect(await handle.executeUpdate(recheckSendUpdate)).toBe('rechecking');
    }
    expect(await handle.result()).toBe('completed');
    const transfer = (await api.get(`/v1/wallet-transfers/${id}`)).body;
    expect(transfer).toMatchObject({ status: 'completed', tx_hash: expect.any(String) });
    expect(await harness.prisma.sandboxRailOperation.count({ where: { idempotencyKey: `${id}:send` } })).toBe(1);
    expect(await eventTypesOf(harness, id)).toEqual(['walletTransfer.created', 'walletTransfer.completed']);
  }
  // Debited once each: the amount and the network fee.
  expect(before.minus(await usdc()).toFixed(6)).toBe((await debited()).toFixed(6));
}, 240_000);

it('records a credit once when the bank reports it again after the worker was killed', async () => {
  const transaction: TransactionBody = await createTransaction(parties);
  const id = transaction.id;
  const report = () =>
    parties.partner.api
      .post(`/v1/sandbox/transactions/${id}/deposit`)
      .send({ amount: transaction.sender.amount, provider_reference: `E2E-KILL-${id}` });
  await killWorker();
  // No worker takes the update: the report is answered retryable, and nothing is recorded by it yet. Nothing can
  // answer it, so the harness's bound for a loaded machine (30 s, testLimitsAndBounds) would only be waited out:
  // this one call gets 3 s (read at call time from the harness's config, which the API shares).
  const loadedMachineBound = harness.config.temporal.callTimeoutMs;
  harness.config.temporal.callTimeoutMs = 3_000;
  let first: Awaited<ReturnType<typeof report>>;
  try {
    first = await report();
  } finally {
    harness.config.temporal.callTimeoutMs = loadedMachineBound;
  }
  expect(first.status).toBe(503);
  worker = await startWorker();
  const again = await report();
  expect(again.status).toBe(201);
  expect(again.body).toMatchObject({ status: 'accepted', provider_reference: `E2E-KILL-${id}` });
  expect(await settlementHandle(harness, id).result()).toBe('completed');
  const third = await report();
  expect(third.body).toEqual(again.body);
  const deposits = await harness.prisma.transactionDeposit.findMany({ where: { transactionId: id } });
  expect(deposits.map((row) => row.id)).toEqual([again.body.id]);
  const ledger = await ledgerOf(harness, id);
  expect(ledger.references).toEqual(['deposit', 'fiat_to_stablecoin', 'stablecoin_to_fiat', 'payout']);
  expect(await eventTypesOf(harness, id)).toEqual(['payin.created', 'payin.processing', 'payin.completed']);
}, 120_000);
