// Scenario 1, worker killed: many fiat-to-fiat settlements in flight (quote, transaction, the sandbox deposit; some
// with a cancellation racing the deposit, some whose payout the receiving bank rejects so that they refund), while
// the worker process is SIGKILLed at random moments while money moves and restarted each time. Lost activity
// attempts and workflow tasks are retried when the Temporal server's own timeouts pass (nothing is failed or reset by hand). Then every
// transaction must reach its final status with, per transaction, exactly the expected ledger postings (each balanced,
// the clearing accounts and the stablecoin in transit back to zero), one event of each type, one operation per step at
// the sandbox's simulated exchange and banks (one payout), and no workflow left open.
import { randomUUID } from 'node:crypto';
import { Decimal } from '../../../src/domain/money';
import { ledgerAccounts, walletCurrencies } from '../../../src/domain/ledger';
import { ledgerBalances } from '../../../src/persistence/ledger';
import { workflowIds } from '../../../src/temporal/workflow-ids';
import {
  ledgerProblems,
  TransactionBody,
  TransactionLedger,
  transactionLedger,
} from '../../../test/support/transactions';
import { approvedCustomer, fiatToFiatAccounts, fiatToFiatBody, fiatToFiatQuote, idOf } from '../fixtures';
import { describe as describeOutcome, HttpClient, HttpOutcome, HttpRequest, HttpResponse } from '../http';
import { checkReconciliation, isFinal } from '../invariants';
import { reconciliationWorkflow } from '../../../workflows/reconciliation';
import { randomSource, RunSize, ScenarioReport } from '../report';
import { ChaosSystem } from '../system';
import { pause, waitUntil } from '../../lib/wait';

/** How a transaction is driven; its final status follows (a race ends either way). */
/** payout_answer_lost: the sandbox makes the payout and loses every answer (simulate payout_timeout_after_execution). */
type Plan = 'deposit' | 'payout_rejected' | 'payout_answer_lost' | 'race';

interface Settlement {
  plan: Plan;
  id: string;
  /** The transaction as created (amounts, fees). */
  created: TransactionBody;
  /** The final answers of the deposit and of the cancellation (race), after retries with their keys. */
  deposit?: HttpResponse;
  cancel?: HttpResponse;
}

/** Settlements being set up at once (quote, transaction, deposit); the earlier ones settle meanwhile. */
const CONCURRENCY = 8;

const settlementWorkflowTypes = [
  'settlementWorkflow',
  'fiatToStablecoinLegWorkflow',
  'stablecoinToFiatLegWorkflow',
  'depositReturnWorkflow',
];

/**
 * Sends a write with one Idempotency-Key until it has a final answer, as a partner's client would: 503s (the worker
 * is down and the workflow's update cannot be answered in time), 409s (the key still in use) and dropped connections
 * are retried; bounded by `limitMs`. Undefined when no final answer came in time.
 */
async function untilFinal(api: HttpClient, request: HttpRequest, limitMs: number): Promise<HttpResponse | undefined> {
  const headers = { ...request.headers, 'Idempotency-Key': randomUUID() };
  const deadline = Date.now() + limitMs;
  for (;;) {
    const outcome: HttpOutcome = await api.send({ ...request, headers, timeoutMs: 30_000 });
    if (isFinal(outcome)) return outcome as HttpResponse;
    if (Date.now() > deadline) return undefined;
    const retryAfter = outcome.kind === 'response' ? Number(outcome.headers['retry-after'] ?? 1) : 1;
    await pause(Math.min(Math.max(retryAfter, 0.5), 2) * 1000);
  }
}

export async function workerKillScenario(system: ChaosSystem, report: ScenarioReport, size: RunSize): Promise<void> {
  const count = size.quick ? 30 : 100;
  const kills = size.quick ? 3 : 10;
  const random = randomSource(size.seed + 1);

  // The parties: an approved customer with a solana wallet and a spei account (BRL pix -> USDC solana -> MXN spei).
  const partner = await system.createPartner('chaos worker-kill');
  const { api } = partner;
  const customerId = await approvedCustomer(api);
  const { solanaWalletId: walletId, speiAccountId } = await fiatToFiatAccounts(api, customerId);

  const plans: Plan[] = Array.from({ length: count }, () => {
    const pick = random();
    return pick < 0.55 ? 'deposit' : pick < 0.75 ? 'payout_rejected' : pick < 0.85 ? 'payout_answer_lost' : 'race';
  });
  // Within the quote range (1 to 1000 BRL), cents included.
  const amounts = plans.map(
    () => `${100 + Math.floor(random() * 900)}.${String(Math.floor(random() * 100)).padStart(2, '0')}`,
  );
  const requestLimitMs = 180_000;
  const started = Date.now();
  const settlements: Settlement[] = [];
  const setupFailures: string[] = [];
  let sent = 0;

  async function drive(index: number): Promise<void> {
    const plan = plans[index] as Plan;
    const quote = await untilFinal(
      api,
      { method: 'POST', path: '/v1/quote/fiat-to-fiat', json: fiatToFiatQuote(amounts[index]) },
      requestLimitMs,
    );
    if (quote?.status !== 201) {
      setupFailures.push(`quote ${index}: ${quote ? describeOutcome(quote) : 'no final answer'}`);
      return;
    }
    const transaction = await untilFinal(
      api,
      {
        method: 'POST',
        path: '/v1/fiat-to-fiat',
        json: fiatToFiatBody({
          approvedCustomerId: customerId,
          fiatToFiatQuoteId: idOf(quote),
          solanaWalletId: walletId,
          speiAccountId,
        }),
      },
      requestLimitMs,
    );
    if (transaction?.status !== 201) {
      setupFailures.push(`transaction ${index}: ${transaction ? describeOutcome(transaction) : 'no final answer'}`);
      return;
    }
    const created = transaction.body as TransactionBody;
    const settlement: Settlement = { plan, id: created.id, created };
    settlements.push(settlement);
    const depositRequest: HttpRequest = {
      method: 'POST',
      path: `/v1/sandbox/transactions/${created.id}/deposit`,
      json: {
        amount: created.sender.amount,
        ...(plan === 'payout_rejected' ? { simulate: 'payout_rejected' } : {}),
        ...(plan === 'payout_answer_lost' ? { simulate: 'payout_timeout_after_execution' } : {}),
      },
    };
    const cancelRequest: HttpRequest = {
      method: 'PUT',
      path: `/v1/transactions/${created.id}`,
      json: { status: 'cancelled' },
    };
    if (plan === 'race') {
      // Either may leave first, the other a few milliseconds later: both outcomes occur.
      const cancelFirst = random() < 0.5;
      const headStart = pause(Math.floor(random() * 200));
      [settlement.cancel, settlement.deposit] = await Promise.all([
        cancelFirst
          ? untilFinal(api, cancelRequest, requestLimitMs)
          : headStart.then(() => untilFinal(api, cancelRequest, requestLimitMs)),
        cancelFirst
          ? headStart.then(() => untilFinal(api, depositRequest, requestLimitMs))
          : untilFinal(api, depositRequest, requestLimitMs),
      ]);
    } else {
      settlement.deposit = await untilFinal(api, depositRequest, requestLimitMs);
    }
  }

  /** A few at a time, so that settlements keep starting while the worker is killed and restarted. */
  async function sender(): Promise<void> {
    while (sent < plans.length) await drive(sent++);
  }

  /** Operations at the simulated exchange and banks so far (money moving). */
  const railOperations = async () =>
    Number(
      (
        await system.prisma.$queryRaw<Array<{ count: bigint }>>`SELECT count(*) AS count FROM sandbox_rail_operations`
      )[0]?.count ?? 0,
    );

  /**
   * Kills land while the worker moves money: once the simulated providers have seen 1 to 4 more operations since it
   * started (polled every few milliseconds, so a kill often lands in a step that has just committed and not yet told
   * Temporal: the worst place), or after 15 s of running when nothing moved.
   */
  async function killer(): Promise<void> {
    for (let kill = 0; kill < kills; kill += 1) {
      const target = (await railOperations()) + 1 + Math.floor(random() * 4);
      await waitUntil(async () => (await railOperations()) >= target, 15_000, 5);
      // With two workers (--engine server) each kill hits one of them; the other keeps settling meanwhile.
      const worker = system.workers[kill % system.workers.length]!;
      const leftover = await system.killAndCheckLocks(worker);
      if (leftover) report.fail(leftover);
      report.kills += 1;
      await worker.start();
      report.restarts += 1;
    }
  }

  await Promise.all([killer(), ...Array.from({ length: CONCURRENCY }, sender)]);
  for (const failure of setupFailures) report.fail(failure);
  report.cases = settlements.length;
  report.notes.sent_s = ((Date.now() - started) / 1000).toFixed(1);

  // Every settlement's workflow closes: lost attempts come back once the server's timeouts pass (1 minute at most
  // for a provider call, 30 s for a database step, 10 s for a workflow task), then their retry backoff.
  const settleLimitMs = size.quick ? 150_000 : 300_000;
  const openWorkflows = async () => {
    const open: string[] = [];
    for await (const execution of system.temporal.workflow.list({
      query: `PartnerId = '${partner.partnerId}' AND ExecutionStatus = 'Running'`,
    })) {
      if (settlementWorkflowTypes.includes(execution.type)) open.push(`${execution.type} ${execution.workflowId}`);
    }
    return open;
  };
  const closedInTime = await waitUntil(
    async () => {
      const rows = await system.prisma.transaction.findMany({
        where: { partnerId: partner.partnerId },
        select: { status: true },
      });
      return (
        rows.every((row) => ['completed', 'cancelled', 'refunded', 'failed'].includes(row.status)) &&
        (await openWorkflows()).length === 0
      );
    },
    settleLimitMs,
    1000,
  );
  report.notes.settled_s = ((Date.now() - started) / 1000).toFixed(1);
  if (!closedInTime) {
    const open = await openWorkflows();
    report.fail(
      `${open.length} settlement workflow(s) still open ${settleLimitMs / 1000} s after the run: ${open.slice(0, 5).join(', ')}`,
    );
  }

  await checkSettlements(system, report, partner.partnerId, walletId, settlements);

  // The daily proof, run now over this scenario's partner: the ledger, the provider operations and the transactions
  // agree after the kills (docs/reconciliation.md).
  const reconciliation = await system.temporal.workflow.execute(reconciliationWorkflow, {
    workflowId: `chaos-reconciliation-${partner.partnerId}`,
    taskQueue: 'payments',
    args: [{ partnerIds: [partner.partnerId] }],
  });
  report.notes.reconciliation = `${reconciliation.status}: ${JSON.stringify(reconciliation.checks)}`;
  checkReconciliation(report, reconciliation);
}

async function checkSettlements(
  system: ChaosSystem,
  report: ScenarioReport,
  partnerId: string,
  walletId: string,
  settlements: Settlement[],
): Promise<void> {
  const outcomes: Record<string, number> = {};
  /** Entries per posting of the transactions that ended alike: a duplicated entry shows as a different shape. */
  const shapes = new Map<string, { shape: string; id: string }>();
  const aggregate = new Map<string, Decimal>();
  let providerRetries = 0;
  let returnedDeposits = 0;

  for (const settlement of settlements) {
    const { id, plan } = settlement;
    const fail = (message: string) => report.fail(`transaction ${id} (${plan}): ${message}`);
    const row = await system.prisma.transaction.findUniqueOrThrow({ where: { id } });
    const status = row.status;
    outcomes[status] = (outcomes[status] ?? 0) + 1;

    // The final status the plan leads to.
    // A race: the deposit's answer says which came first (accepted: the deposit; returned: the cancellation).
    const depositTaken = (settlement.deposit?.body as { status?: string } | undefined)?.status === 'accepted';
    const expected =
      plan === 'deposit' || plan === 'payout_answer_lost'
        ? 'completed'
        : plan === 'payout_rejected'
          ? 'refunded'
          : depositTaken
            ? 'completed'
            : 'cancelled';
    if (status !== expected) fail(`ended ${status}, expected ${expected}`);
    if (settlement.cancel?.status === 200 && status !== 'cancelled')
      fail(`the cancellation answered 200, yet ${status}`);
    if (plan === 'payout_rejected' && row.failureReason !== 'payout_rejected')
      fail(`failure_reason ${row.failureReason}, expected payout_rejected`);
    if (!settlement.deposit || settlement.deposit.status !== 201)
      fail(
        `the deposit never got its 201: ${settlement.deposit ? describeOutcome(settlement.deposit) : 'no final answer'}`,
      );
    if (plan === 'race' && ![200, 422].includes(settlement.cancel?.status ?? 0))
      fail(`the cancellation got ${settlement.cancel ? describeOutcome(settlement.cancel) : 'no final answer'}`);

    // The workflow finished with that status.
    const handle = system.temporal.workflow.getHandle(workflowIds.transaction(id));
    const description = await handle.describe();
    if (description.status.name !== 'COMPLETED') fail(`workflow ${description.status.name}`);
    else if ((await handle.result()) !== status)
      fail(`workflow ended ${await handle.result()}, the table says ${status}`);

    // Deposits: one funded the transaction (none if cancelled): still accepted when it completed, returned with the
    // refund when it was refunded; every other came late and went back on its own.
    const deposits = await system.prisma.transactionDeposit.findMany({ where: { transactionId: id } });
    const funding = deposits.filter((deposit) => deposit.returnReason !== 'not_awaiting_deposit');
    const returned = deposits.filter((deposit) => deposit.returnReason === 'not_awaiting_deposit');
    returnedDeposits += returned.length;
    if (funding.length !== (status === 'cancelled' ? 0 : 1))
      fail(`${funding.length} funding deposit(s) for a ${status} transaction`);
    const fundingStatus = status === 'refunded' ? 'returned' : 'accepted';
    for (const deposit of funding) {
      if (deposit.status !== fundingStatus)
        fail(`funding deposit ${deposit.id} is ${deposit.status}, expected ${fundingStatus} (${status})`);
    }
    for (const deposit of returned) {
      if (deposit.status !== 'returned' || deposit.returnReason !== 'not_awaiting_deposit')
        fail(
          `deposit ${deposit.id} is ${deposit.status} (${deposit.returnReason}), expected returned (not_awaiting_deposit)`,
        );
    }
    const answered = (settlement.deposit?.body as { id?: string } | undefined)?.id;
    if (answered && !deposits.some((deposit) => deposit.id === answered))
      fail(`deposit ${answered} answered but not stored`);

    // Events: exactly one of each type, in order.
    const events = await system.prisma.event.findMany({ where: { resourceId: id }, orderBy: { sequence: 'asc' } });
    report.eventsChecked += events.length;
    const eventTypes = events.map((event) => event.eventType);
    const expectedEvents =
      status === 'cancelled'
        ? ['payin.created', 'payin.cancelled']
        : ['payin.created', 'payin.processing', `payin.${status}`];
    if (eventTypes.join() !== expectedEvents.join())
      fail(`events ${eventTypes.join(', ')}, expected ${expectedEvents.join(', ')}`);

    // The ledger: exactly the step postings of the outcome, each balanced; clearing and in-transit back to zero.
    const returnedIds = returned.map((deposit) => deposit.id);
    const ledger: TransactionLedger = await transactionLedger(system.prisma, id, returnedIds);
    const isDepositReturn = (reference: string) => reference === 'received' || reference === 'returned';
    const ownReferences = ledger.references.filter((reference) => !isDepositReturn(reference));
    const expectedReferences =
      status === 'completed'
        ? ['deposit', 'fiat_to_stablecoin', 'stablecoin_to_fiat', 'payout']
        : status === 'refunded'
          ? ['deposit', 'fiat_to_stablecoin', 'sell_back', 'refund']
          : [];
    if (ownReferences.join() !== expectedReferences.join())
      fail(`postings ${ownReferences.join(', ') || 'none'}, expected ${expectedReferences.join(', ') || 'none'}`);
    const depositPostings = ledger.references.filter(isDepositReturn).length;
    if (depositPostings !== 2 * returned.length)
      fail(`${depositPostings} postings for ${returned.length} returned deposit(s), expected 2 each`);
    const view = { ...settlement.created, status };
    for (const problem of ledgerProblems(ledger, view, partnerId, walletId)) fail(`ledger: ${problem}`);
    const shapeKey = `${status}+${returned.length}`;
    const shape = ledger.references.map((reference, at) => `${reference}:${ledger.entriesPerPosting[at]}`).join(' ');
    const seen = shapes.get(shapeKey);
    if (!seen) shapes.set(shapeKey, { shape, id });
    else if (seen.shape !== shape)
      fail(`entries per posting ${shape}; transaction ${seen.id}, also ${status}: ${seen.shape}`);
    for (const [name, amount] of Object.entries(ledger.net)) {
      if (/^(fiat_clearing|in_transit)/.test(name))
        aggregate.set(name, (aggregate.get(name) ?? new Decimal(0)).plus(amount));
    }

    // The simulated exchange and banks: one operation per step (one payout), and one return per returned deposit.
    const operations = await system.prisma.sandboxRailOperation.findMany({
      where: {
        OR: [
          { idempotencyKey: { startsWith: `${id}:` } },
          ...returnedIds.map((depositId) => ({ idempotencyKey: `deposit:${depositId}:return` })),
        ],
      },
    });
    providerRetries += operations.filter((operation) => operation.requests > 1).length;
    const kinds = (prefix: string) =>
      operations
        .filter((operation) => operation.idempotencyKey.startsWith(prefix))
        .map((operation) => `${operation.kind}:${operation.outcome}`)
        .sort()
        .join(', ');
    const expectedOperations =
      status === 'completed'
        ? 'conversion:completed, payout:completed'
        : status === 'refunded'
          ? 'conversion:completed, payout:rejected, return:completed, sell_back:completed'
          : '';
    if (kinds(`${id}:`) !== expectedOperations)
      fail(`provider operations ${kinds(`${id}:`) || 'none'}, expected ${expectedOperations || 'none'}`);
    if (kinds('deposit:') !== returned.map(() => 'return:completed').join(', '))
      fail(`returns of deposits ${kinds('deposit:') || 'none'} for ${returned.length} returned deposit(s)`);
    const payouts = operations.filter((operation) => operation.kind === 'payout').length;
    if (payouts !== (status === 'cancelled' ? 0 : 1)) fail(`${payouts} payouts at the rail`);
  }

  // The service's clearing accounts and the wallet's stablecoin in transit, over all of them: back to zero.
  for (const [name, total] of aggregate) {
    if (!total.isZero()) report.fail(`${name} holds ${total.toFixed()} after every settlement ended`);
  }
  const spendable = await ledgerBalances(
    system.prisma,
    walletCurrencies.map((currency) => ledgerAccounts.wallet(walletId, currency)),
  );
  spendable.forEach((balance, index) => {
    if (!balance.isZero())
      report.fail(
        `the wallet's ${walletCurrencies[index]} balance is ${balance.toFixed()} (nothing should land there)`,
      );
  });
  // Where the kills landed: activity attempts retried (lost with the worker, then timed out) and workflow tasks lost.
  let retriedActivities = 0;
  let lostWorkflowTasks = 0;
  for (const settlement of settlements) {
    for (const workflowId of [
      workflowIds.transaction(settlement.id),
      workflowIds.transactionLeg(settlement.id, 'fiat-to-stablecoin'),
      workflowIds.transactionLeg(settlement.id, 'stablecoin-to-fiat'),
    ]) {
      const history = await system.temporal.workflow
        .getHandle(workflowId)
        .fetchHistory()
        .catch(() => null);
      for (const event of history?.events ?? []) {
        if ((event.activityTaskStartedEventAttributes?.attempt ?? 1) > 1) retriedActivities += 1;
        if (event.workflowTaskTimedOutEventAttributes) lostWorkflowTasks += 1;
      }
    }
  }
  report.notes.retried_activities = retriedActivities;
  report.notes.lost_workflow_tasks = lostWorkflowTasks;
  report.notes.outcomes = Object.entries(outcomes)
    .map(([status, total]) => `${status}:${total}`)
    .join(',');
  report.notes.returned_deposits = returnedDeposits;
  report.notes.provider_retries = providerRetries;
}
