// Records the event histories that test/workflow-histories.test.ts replays: every workflow type, along each path it
// can take (and some still running, as a deploy finds them), from real runs of the workflow code with its real
// activities against the Temporal test server (time skipped), driven through the API like a partner would.
// Run with `npm run histories:record` (docs/workflow-versioning.md); not part of `npm test`.
import { mkdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { base58 } from '@scure/base';
import { consumeQuote } from '../../src/services/quotes';
import { workflowIds } from '../../src/temporal/workflow-ids';
import { verificationDecisionUpdate, verificationStateQuery } from '../../workflows/customer-verification';
import { virtualAccountDecisionUpdate } from '../../workflows/virtual-account';
import { deliveriesQueuedSignal, webhookDeliveryWorkflow } from '../../workflows/webhook-delivery';
import { maintenanceWorkflow } from '../../workflows/maintenance';
import { reconciliationWorkflow } from '../../workflows/reconciliation';
import {
  depositReturnStateQuery,
  resolveErrorUpdate,
  retryDepositReturnUpdate,
  settlementStateQuery,
} from '../../workflows/settlement';
import { resolvePayoutReturnUpdate } from '../../workflows/payout-return';
import { approvedCustomer, createWallet, virtualAccountBody } from '../support/accounts';
import { eventually } from '../support/eventually';
import { createCustomer, uploadDocument, uploadIndividualDocuments } from '../support/fixtures';
import { Harness, startHarness, TestPartner } from '../support/harness';
import { projectRoot } from '../support/paths';
import { historyToObject } from '../support/histories';
import {
  createTransaction,
  deposit,
  Parties,
  setUpParties,
  settlementHandle,
  TransactionBody,
  waitForStatus,
} from '../support/transactions';
import { createPayin, createPayout, fundWallet } from '../support/payments';
import { Answer, WebhookReceiver } from '../support/webhook-receiver';
import { configureWebhooks, newId, recordPayoutEvent } from '../support/webhooks';
import { startAnvil } from '../../scripts/lib/anvil';
import { chainDepositsOf } from '../../src/persistence/chain-watcher';
import { mintSandboxStablecoin, sandboxCollectionAddress } from '../../src/providers/evm/sandbox-chain';
import { ensureChainWatchers } from '../../src/temporal/chain-watchers';

export const historiesDir = path.join(projectRoot, 'test', 'histories');

let sandbox: Harness;
let production: Harness;
let partner: TestPartner;
let operatorPartner: TestPartner;
const receivers: WebhookReceiver[] = [];

// Files are overwritten, never deleted: histories kept from earlier versions (renamed) must keep replaying.
beforeAll(async () => {
  sandbox = await startHarness();
  production = await startHarness({ APP_ENV: 'production', VIRTUAL_ACCOUNT_REVIEW_REMINDER_HOURS: '24' });
  partner = await sandbox.createPartner('History recorder');
  operatorPartner = await production.createPartner('History recorder (production)');
});
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await sandbox?.teardown();
  await production?.teardown();
});

/** Saves the history of one run as test/histories/<workflow type>/<name>.json. */
async function save(harness: Harness, workflowId: string, name: string, runId?: string): Promise<void> {
  const handle = harness.env.client.workflow.getHandle(workflowId, runId);
  const [description, history] = await Promise.all([handle.describe(), handle.fetchHistory()]);
  const folder = path.join(historiesDir, description.type);
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    path.join(folder, `${name}.json`),
    `${JSON.stringify(historyToObject(history, workflowId), null, 1)}\n`,
  );
}

const rejectedProofOfAddress = [
  { name: 'PROOF_OF_ADDRESS', rejection_code: ['EXPIRED'], rejection_description: 'Older than 3 months' },
];

async function sandboxOutcome(customerId: string, outcome: string, rejected_steps: unknown[] = []) {
  const response = await partner.api
    .post(`/v1/sandbox/customers/${customerId}/verification-outcome`)
    .send({ outcome, rejected_steps });
  expect(response.status).toBe(200);
}

async function check(api: TestPartner['api'], customerId: string, status = 204) {
  expect((await api.post(`/v1/customers/${customerId}/check`)).status).toBe(status);
}

const customerHandle = (harness: Harness, id: string) =>
  harness.env.client.workflow.getHandle(workflowIds.customerVerification(id));

async function statusReached(harness: Harness, customerId: string, status: string): Promise<void> {
  const reached = await eventually(
    () => customerHandle(harness, customerId).query(verificationStateQuery),
    (state) => state.status === status,
    15_000,
  );
  expect(reached.status).toBe(status);
}

describe('customerVerificationWorkflow', () => {
  it('sandbox: approved by a preset outcome', async () => {
    const customer = await approvedCustomer(sandbox, partner.api);
    await save(sandbox, workflowIds.customerVerification(customer.id), 'sandbox-approved-preset');
  });

  it('sandbox: approved automatically after the delay', async () => {
    const customer = await createCustomer(partner.api);
    await uploadIndividualDocuments(partner.api, customer.id);
    await check(partner.api, customer.id);
    expect(await customerHandle(sandbox, customer.id).result()).toBe('approved');
    await save(sandbox, workflowIds.customerVerification(customer.id), 'sandbox-automatic-approval');
  });

  it('sandbox: check refused for missing documents, then partially rejected, then approved', async () => {
    const customer = await createCustomer(partner.api);
    await check(partner.api, customer.id, 422);
    await uploadIndividualDocuments(partner.api, customer.id);
    await sandboxOutcome(customer.id, 'partially_rejected', rejectedProofOfAddress);
    await check(partner.api, customer.id);
    await statusReached(sandbox, customer.id, 'partially_rejected');
    await uploadDocument(partner.api, customer.id, { document_type: 'PROOF_OF_ADDRESS' });
    await check(partner.api, customer.id);
    // Decided while under review (not preset): the update waits for the decision to apply.
    await sandboxOutcome(customer.id, 'approved');
    expect(await customerHandle(sandbox, customer.id).result()).toBe('approved');
    await save(
      sandbox,
      workflowIds.customerVerification(customer.id),
      'sandbox-missing-documents-partially-rejected-approved',
    );
  });

  it('sandbox: rejected', async () => {
    const customer = await createCustomer(partner.api);
    await uploadIndividualDocuments(partner.api, customer.id);
    await sandboxOutcome(customer.id, 'rejected', rejectedProofOfAddress);
    await check(partner.api, customer.id);
    expect(await customerHandle(sandbox, customer.id).result()).toBe('rejected');
    await save(sandbox, workflowIds.customerVerification(customer.id), 'sandbox-rejected');
  });

  it('still running: pending, and under review', async () => {
    const pending = await createCustomer(partner.api);
    await save(sandbox, workflowIds.customerVerification(pending.id), 'running-pending');
    const reviewed = await createCustomer(partner.api);
    await uploadIndividualDocuments(partner.api, reviewed.id);
    await check(partner.api, reviewed.id);
    await save(sandbox, workflowIds.customerVerification(reviewed.id), 'running-under-review');
  });

  it('production: the operator refuses an invalid decision, partially rejects, then approves', async () => {
    const customer = await createCustomer(operatorPartner.api);
    await uploadIndividualDocuments(operatorPartner.api, customer.id);
    await check(operatorPartner.api, customer.id);
    const handle = customerHandle(production, customer.id);
    await production.env.sleep('2 days');
    await expect(
      handle.executeUpdate(verificationDecisionUpdate, { args: [{ outcome: 'maybe' } as never] }),
    ).rejects.toMatchObject({ cause: { type: 'InvalidVerificationDecision' } });
    expect(
      await handle.executeUpdate(verificationDecisionUpdate, {
        args: [{ outcome: 'partially_rejected', rejected_steps: rejectedProofOfAddress } as never],
      }),
    ).toBe('partially_rejected');
    await uploadDocument(operatorPartner.api, customer.id, { document_type: 'PROOF_OF_ADDRESS' });
    await check(operatorPartner.api, customer.id);
    expect(
      await handle.executeUpdate(verificationDecisionUpdate, { args: [{ outcome: 'approved', rejected_steps: [] }] }),
    ).toBe('approved');
    expect(await handle.result()).toBe('approved');
    await save(
      production,
      workflowIds.customerVerification(customer.id),
      'production-operator-partially-rejected-approved',
    );
  });

  it('production: rejected by the operator', async () => {
    const customer = await createCustomer(operatorPartner.api);
    await uploadIndividualDocuments(operatorPartner.api, customer.id);
    await check(operatorPartner.api, customer.id);
    const handle = customerHandle(production, customer.id);
    await handle.executeUpdate(verificationDecisionUpdate, {
      args: [{ outcome: 'rejected', rejected_steps: rejectedProofOfAddress } as never],
    });
    expect(await handle.result()).toBe('rejected');
    await save(production, workflowIds.customerVerification(customer.id), 'production-operator-rejected');
  });
});

describe('quoteLifetimeWorkflow', () => {
  const payin = {
    sender: { currency: 'USD', payment_rail: 'wire', amount: '1000.00' },
    receiver: { currency: 'USDC', payment_rail: 'ethereum' },
  };
  const createQuote = async () => {
    const response = await partner.api.post('/v1/quote').send(payin);
    expect(response.status).toBe(201);
    return response.body.id as string;
  };

  it('expires after 5 minutes', async () => {
    const id = await createQuote();
    expect(await sandbox.env.client.workflow.getHandle(workflowIds.quote(id)).result()).toBe('expired');
    await save(sandbox, workflowIds.quote(id), 'expired');
  });

  it('is used once: the same consumer again is answered, another refused', async () => {
    const id = await createQuote();
    await consumeQuote(sandbox.services, partner.partnerId, id, 'payin', 'consumer-1');
    await consumeQuote(sandbox.services, partner.partnerId, id, 'payin', 'consumer-1');
    await expect(consumeQuote(sandbox.services, partner.partnerId, id, 'payin', 'consumer-2')).rejects.toThrow();
    expect(await sandbox.env.client.workflow.getHandle(workflowIds.quote(id)).result()).toBe('used');
    await save(sandbox, workflowIds.quote(id), 'used');
  });

  it('still running: active', async () => {
    const id = await createQuote();
    await save(sandbox, workflowIds.quote(id), 'running-active');
  });
});

describe('virtualAccountWorkflow', () => {
  async function createAccount(harness: Harness, as: TestPartner): Promise<string> {
    const customer = await approvedCustomer(harness, as.api);
    const wallet = await createWallet(as.api, customer.id);
    const response = await as.api.post('/v1/virtual-accounts').send(virtualAccountBody(customer.id, wallet.id));
    expect(response.status).toBe(201);
    return response.body.id as string;
  }
  const handleOf = (harness: Harness, id: string) =>
    harness.env.client.workflow.getHandle(workflowIds.virtualAccount(id));

  it('sandbox: approved at creation', async () => {
    const id = await createAccount(sandbox, partner);
    expect(await handleOf(sandbox, id).result()).toBe('approved');
    await save(sandbox, workflowIds.virtualAccount(id), 'sandbox-approved');
  });

  it('production: approved after two reminders', async () => {
    const id = await createAccount(production, operatorPartner);
    await production.env.sleep('50 hours');
    await handleOf(production, id).executeUpdate(virtualAccountDecisionUpdate, { args: [{ outcome: 'approved' }] });
    expect(await handleOf(production, id).result()).toBe('approved');
    await save(production, workflowIds.virtualAccount(id), 'production-approved-after-reminders');
  });

  it('production: rejected by the operator', async () => {
    const id = await createAccount(production, operatorPartner);
    await handleOf(production, id).executeUpdate(virtualAccountDecisionUpdate, {
      args: [{ outcome: 'rejected', reason: 'Sanctions screening hit' }],
    });
    expect(await handleOf(production, id).result()).toBe('rejected');
    await save(production, workflowIds.virtualAccount(id), 'production-rejected');
  });

  it('production: rejected when the review times out; and one still under review', async () => {
    const waiting = await createAccount(production, operatorPartner);
    await save(production, workflowIds.virtualAccount(waiting), 'running-under-review');
    expect(await handleOf(production, waiting).result()).toBe('rejected');
    await save(production, workflowIds.virtualAccount(waiting), 'production-review-timeout');
  });
});

describe('webhookDeliveryWorkflow', () => {
  async function receiver(responder?: (request: { headers: Record<string, unknown> }, index: number) => Answer) {
    const started = await WebhookReceiver.start(responder);
    receivers.push(started);
    return started;
  }
  const deliveryHandle = (partnerId: string, resourceId: string) =>
    sandbox.env.client.workflow.getHandle(workflowIds.webhookDelivery(partnerId, resourceId));

  it('delivered at once; retried then delivered; failed after 24 hours then the next delivered', async () => {
    const hooks = await sandbox.createPartner('Webhooks');
    let failing = '';
    const answers: Answer[] = [500, 'drop'];
    const target = await receiver((request, index) =>
      request.headers['webhook-id'] === failing ? 503 : (answers[index] ?? 200),
    );
    await configureWebhooks(hooks, target.url, ['payout.created', 'payout.processing']);

    const retried = newId();
    await recordPayoutEvent(sandbox.prisma, hooks.partnerId, retried, 'payout.created');
    await target.waitForCount(1);
    expect(await deliveryHandle(hooks.partnerId, retried).result()).toBe(1);
    await save(sandbox, workflowIds.webhookDelivery(hooks.partnerId, retried), 'retried-then-delivered');

    const delivered = newId();
    await recordPayoutEvent(sandbox.prisma, hooks.partnerId, delivered, 'payout.created');
    await recordPayoutEvent(sandbox.prisma, hooks.partnerId, delivered, 'payout.processing');
    await target.waitFor(
      (requests) => requests.filter((request) => request.body.event_resource_id === delivered).length >= 1,
    );
    expect(await deliveryHandle(hooks.partnerId, delivered).result()).toBeGreaterThanOrEqual(1);
    await save(sandbox, workflowIds.webhookDelivery(hooks.partnerId, delivered), 'delivered-in-order');

    const failed = newId();
    failing = await recordPayoutEvent(sandbox.prisma, hooks.partnerId, failed, 'payout.created');
    await recordPayoutEvent(sandbox.prisma, hooks.partnerId, failed, 'payout.processing');
    await target.waitFor((requests) => requests.some((request) => request.headers['webhook-id'] === failing));
    await save(sandbox, workflowIds.webhookDelivery(hooks.partnerId, failed), 'running-retrying');
    expect(await deliveryHandle(hooks.partnerId, failed).result()).toBe(2);
    await save(sandbox, workflowIds.webhookDelivery(hooks.partnerId, failed), 'failed-after-window-then-next');
  });

  it('cancelled when the configuration is disabled; redelivered on request', async () => {
    const hooks = await sandbox.createPartner('Webhooks paused');
    const target = await receiver(() => 503);
    const config = await configureWebhooks(hooks, target.url, ['payout.created']);
    const payout = newId();
    const eventId = await recordPayoutEvent(sandbox.prisma, hooks.partnerId, payout, 'payout.created');
    await target.waitForCount(1);
    expect((await hooks.api.put(`/v1/webhook-configs/${config.id}`).send({ enabled: false })).status).toBe(200);
    expect(await deliveryHandle(hooks.partnerId, payout).result()).toBe(1);
    await save(sandbox, workflowIds.webhookDelivery(hooks.partnerId, payout), 'cancelled-when-disabled');

    target.respondWith(() => 200);
    expect((await hooks.api.put(`/v1/webhook-configs/${config.id}`).send({ enabled: true })).status).toBe(200);
    const redelivery = await hooks.api.post(`/v1/events/${eventId}/redeliver`);
    expect(redelivery.status).toBe(202);
    const workflowId = workflowIds.webhookRedelivery(redelivery.body.id);
    await eventually(
      async () => sandbox.prisma.webhookDelivery.findUnique({ where: { id: redelivery.body.id } }),
      (row) => row?.dispatchedAt !== null,
    );
    expect(await sandbox.env.client.workflow.getHandle(workflowId).result()).toBe(1);
    await save(sandbox, workflowId, 'redelivery');
  });

  it('continues as new on a long queue', async () => {
    const hooks = await sandbox.createPartner('Webhooks long queue');
    const target = await receiver();
    await configureWebhooks(hooks, target.url, ['payout.created']);
    await sandbox.relay.stop(); // this test hands the deliveries over itself
    const payout = newId();
    for (let index = 0; index < 5; index += 1) await recordPayoutEvent(sandbox.prisma, hooks.partnerId, payout);
    const ids = (
      await sandbox.prisma.webhookDelivery.findMany({
        where: { partnerId: hooks.partnerId },
        orderBy: { sequence: 'asc' },
      })
    ).map((row) => row.id);
    const workflowId = workflowIds.webhookDelivery(hooks.partnerId, payout);
    const handle = await sandbox.env.client.workflow.signalWithStart(webhookDeliveryWorkflow, {
      workflowId,
      taskQueue: sandbox.config.temporal.taskQueue,
      args: [{ partnerId: hooks.partnerId, resourceId: payout, deliveriesPerRun: 2 }],
      signal: deliveriesQueuedSignal,
      signalArgs: [ids],
    });
    expect(await sandbox.env.client.workflow.getHandle(workflowId).result()).toBe(1);
    await save(sandbox, workflowId, 'continued-as-new-first-run', handle.signaledRunId);
    await save(sandbox, workflowId, 'continued-as-new-last-run');
  });
});

describe('maintenanceWorkflow', () => {
  it('purges once', async () => {
    const workflowId = `maintenance-${newId()}`;
    await sandbox.env.client.workflow.execute(maintenanceWorkflow, {
      workflowId,
      taskQueue: sandbox.config.temporal.taskQueue,
    });
    await save(sandbox, workflowId, 'one-run');
  });
});

describe('reconciliationWorkflow', () => {
  it('checks one partner in batches and closes its report', async () => {
    const workflowId = `reconciliation-${newId()}`;
    await sandbox.env.client.workflow.execute(reconciliationWorkflow, {
      workflowId,
      taskQueue: sandbox.config.temporal.taskQueue,
      args: [{ partnerIds: [partner.partnerId], batchSize: 2 }],
    });
    await save(sandbox, workflowId, 'one-run');
  });
});

describe('chainWatcherWorkflow', () => {
  it('reads, credits a transfer once deep enough, and is stopped', async () => {
    const anvil = await startAnvil();
    const chain = await startHarness({
      ETHEREUM_RPC_URL: anvil.rpcUrl,
      ETHEREUM_CONFIRMATIONS: '2',
      ETHEREUM_WATCH_POLL_SECONDS: '1',
    });
    try {
      await chain.prisma.chainDeposit.deleteMany({ where: { chain: 'ethereum' } });
      await chain.prisma.chainBlock.deleteMany({ where: { chain: 'ethereum' } });
      await chain.prisma.chainCursor.deleteMany({ where: { chain: 'ethereum' } });
      const [workflowId] = await ensureChainWatchers(chain.env.client, chain.config, chain.config.temporal.taskQueue);
      await mintSandboxStablecoin(anvil.rpcUrl, 'USDC', sandboxCollectionAddress(), 5_000_000n);
      const seen = await eventually(
        () => chainDepositsOf(chain.prisma, 'ethereum'),
        (found) => found.length === 1,
        30_000,
      );
      expect(seen.map((row) => row.status)).toEqual(['seen']);
      await fetch(anvil.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_mine', params: ['0x2'] }),
      });
      const rows = await eventually(
        () => chainDepositsOf(chain.prisma, 'ethereum'),
        (found) => found.some((row) => row.status === 'credited'),
        30_000,
      );
      expect(rows.some((row) => row.status === 'credited')).toBe(true);
      await chain.env.client.workflow.getHandle(workflowId!).terminate('recorded');
      await save(chain, workflowId!, 'steps-then-terminated');
    } finally {
      await chain.teardown();
      await anvil.stop();
    }
  }, 120_000);
});

describe('settlementWorkflow, its legs and depositReturnWorkflow', () => {
  let parties: Parties;
  beforeAll(async () => {
    parties = await setUpParties(sandbox, partner);
  });

  const settlementId = (transaction: TransactionBody) => workflowIds.transaction(transaction.id);
  const legId = (transaction: TransactionBody, leg: 'fiat-to-stablecoin' | 'stablecoin-to-fiat') =>
    workflowIds.transactionLeg(transaction.id, leg);
  const settled = (transaction: TransactionBody) => settlementHandle(sandbox, transaction.id).result();
  const cancel = (transaction: TransactionBody) =>
    partner.api.put(`/v1/transactions/${transaction.id}`).send({ status: 'cancelled' });
  const resolve = (transaction: TransactionBody, action: 'retry' | 'refund') =>
    settlementHandle(sandbox, transaction.id).executeUpdate(resolveErrorUpdate, { args: [{ action }] });
  /** Skips time 10 minutes a step until `probe` holds (bounded retries and provider polls pass meanwhile). */
  async function untilSkipping(probe: () => Promise<boolean>): Promise<void> {
    for (let step = 0; step < 40 && !(await probe()); step += 1) await sandbox.env.sleep('10 minutes');
    expect(await probe()).toBe(true);
  }
  /** A deposit the transaction no longer takes: sent back by its own workflow, saved as `name`. */
  async function lateDeposit(transaction: TransactionBody, name: string): Promise<void> {
    const late = await deposit(parties, transaction);
    expect(late).toMatchObject({ status: 'returning', return_reason: 'not_awaiting_deposit' });
    const workflowId = workflowIds.depositReturn(late.id as string);
    expect(await sandbox.env.client.workflow.getHandle(workflowId).result()).toBe('returned');
    await save(sandbox, workflowId, name);
  }

  it('completed through both legs; a second deposit returned on its own', async () => {
    const transaction = await createTransaction(parties);
    await deposit(parties, transaction);
    expect(await settled(transaction)).toBe('completed');
    await save(sandbox, settlementId(transaction), 'completed');
    await save(sandbox, legId(transaction, 'fiat-to-stablecoin'), 'completed');
    await save(sandbox, legId(transaction, 'stablecoin-to-fiat'), 'completed');
    await lateDeposit(transaction, 'second-deposit-returned');
  });

  it('cancelled; a deposit after the cancellation returned on its own', async () => {
    const transaction = await createTransaction(parties);
    expect((await cancel(transaction)).status).toBe(200);
    expect(await settled(transaction)).toBe('cancelled');
    await save(sandbox, settlementId(transaction), 'cancelled');
    await lateDeposit(transaction, 'after-cancellation-returned');
  });

  it('failed when the deposit deadline passed; a deposit after it returned on its own', async () => {
    const transaction = await createTransaction(parties);
    expect(await settled(transaction)).toBe('failed');
    await save(sandbox, settlementId(transaction), 'deadline-passed');
    await lateDeposit(transaction, 'after-deadline-returned');
  });

  it('refunded when the deposit is not the expected amount', async () => {
    const transaction = await createTransaction(parties);
    expect(await deposit(parties, transaction, { amount: '999.99' })).toMatchObject({
      return_reason: 'amount_mismatch',
    });
    expect(await settled(transaction)).toBe('refunded');
    await save(sandbox, settlementId(transaction), 'wrong-amount-refunded');
  });

  it('refunded when the receiving bank rejects the payout', async () => {
    const transaction = await createTransaction(parties);
    await deposit(parties, transaction, { simulate: 'payout_rejected' });
    expect(await settled(transaction)).toBe('refunded');
    await save(sandbox, settlementId(transaction), 'payout-rejected-refunded');
    await save(sandbox, legId(transaction, 'stablecoin-to-fiat'), 'rejected');
  });

  it('in error when the conversion keeps failing (still running), then completed on the operator’s retry', async () => {
    const transaction = await createTransaction(parties);
    await deposit(parties, transaction, { simulate: 'conversion_error' });
    await waitForStatus(sandbox, transaction.id, 'error');
    await save(sandbox, settlementId(transaction), 'running-error-awaiting-operator');
    await save(sandbox, legId(transaction, 'fiat-to-stablecoin'), 'failed-after-retries');
    expect(await resolve(transaction, 'retry')).toBe('retry');
    expect(await settled(transaction)).toBe('completed');
    await save(sandbox, settlementId(transaction), 'conversion-error-operator-retry-completed');
    await save(sandbox, legId(transaction, 'fiat-to-stablecoin'), 'completed-on-operator-retry');
  });

  it('in error when the payout keeps failing, then refunded on the operator’s decision', async () => {
    const transaction = await createTransaction(parties);
    await deposit(parties, transaction, { simulate: 'payout_error' });
    await waitForStatus(sandbox, transaction.id, 'error');
    await save(sandbox, legId(transaction, 'stablecoin-to-fiat'), 'failed-after-retries');
    expect(await resolve(transaction, 'refund')).toBe('refund');
    expect(await settled(transaction)).toBe('refunded');
    await save(sandbox, settlementId(transaction), 'payout-error-operator-refund');
  });

  it('in error when the payout keeps failing, then completed on the operator’s retry', async () => {
    const transaction = await createTransaction(parties);
    await deposit(parties, transaction, { simulate: 'payout_error' });
    await waitForStatus(sandbox, transaction.id, 'error');
    expect(await resolve(transaction, 'retry')).toBe('retry');
    expect(await settled(transaction)).toBe('completed');
    await save(sandbox, settlementId(transaction), 'payout-error-operator-retry-completed');
  });

  it('a late deposit whose return fails, returned on the operator’s retry', async () => {
    const transaction = await createTransaction(parties);
    expect((await cancel(transaction)).status).toBe(200);
    expect(await settled(transaction)).toBe('cancelled');
    const late = await deposit(parties, transaction, { simulate: 'return_error' });
    const workflowId = workflowIds.depositReturn(late.id as string);
    const handle = sandbox.env.client.workflow.getHandle(workflowId);
    await untilSkipping(async () => (await handle.query(depositReturnStateQuery)).status === 'return_failed');
    expect(await handle.executeUpdate(retryDepositReturnUpdate)).toBe('returning');
    expect(await handle.result()).toBe('returned');
    await save(sandbox, workflowId, 'return-failed-operator-retry-returned');
  });

  it('in error when the conversion keeps failing; made late by the exchange: booked and sold back on a refund', async () => {
    const transaction = await createTransaction(parties);
    await deposit(parties, transaction, { simulate: 'conversion_error' });
    await waitForStatus(sandbox, transaction.id, 'error');
    await sandbox.prisma.sandboxRailOperation.create({
      data: {
        idempotencyKey: `${transaction.id}:fiat_to_stablecoin`,
        kind: 'conversion',
        currency: 'USDC',
        amount: transaction.stablecoin.amount,
        outcome: 'completed',
      },
    });
    expect(await resolve(transaction, 'refund')).toBe('refund');
    expect(await settled(transaction)).toBe('refunded');
    await save(sandbox, settlementId(transaction), 'late-conversion-booked-refunded');
  });

  it('in error while the payout’s outcome stays unknown, then completed on the operator’s record of it', async () => {
    const transaction = await createTransaction(parties);
    await deposit(parties, transaction, { simulate: 'payout_outcome_unknown' });
    await untilSkipping(
      async () => (await settlementHandle(sandbox, transaction.id).query(settlementStateQuery)).awaitingOperator,
    );
    expect(
      await settlementHandle(sandbox, transaction.id).executeUpdate(resolveErrorUpdate, {
        args: [{ action: 'record_payout', provider_reference: 'RAIL-PAY-1', reason: 'confirmed with the rail' }],
      }),
    ).toBe('record_payout');
    expect(await settled(transaction)).toBe('completed');
    await save(sandbox, settlementId(transaction), 'payout-unknown-recorded-by-operator-completed');
  });

  it('still running: awaiting the deposit', async () => {
    const transaction = await createTransaction(parties);
    // Saved once its first workflow task completed (the deadline timer started), not while it is still in it.
    const timerStarted = (history: { events?: Array<{ timerStartedEventAttributes?: unknown }> | null }) =>
      (history.events ?? []).some((event) => event.timerStartedEventAttributes);
    expect(
      timerStarted(await eventually(() => settlementHandle(sandbox, transaction.id).fetchHistory(), timerStarted)),
    ).toBe(true);
    await save(sandbox, settlementId(transaction), 'running-awaiting-deposit');
  });
});

describe('walletTransferWorkflow', () => {
  let customerId: string;
  beforeAll(async () => {
    customerId = (await approvedCustomer(sandbox, partner.api)).id;
  });
  async function fundedWallet(name: string): Promise<string> {
    const wallet = await createWallet(partner.api, customerId, 'solana', name);
    const funded = await partner.api
      .post(`/v1/sandbox/wallets/${wallet.id}/fund`)
      .send({ currency: 'USDC', amount: '100' });
    expect(funded.status).toBe(200);
    return wallet.id;
  }
  async function transferred(body: Record<string, unknown>, expected: string, name: string): Promise<void> {
    const response = await partner.api.post('/v1/wallet-transfer').send({ currency: 'USDC', amount: '10', ...body });
    expect(response.status).toBe(201);
    const workflowId = workflowIds.walletTransfer(response.body.id as string);
    expect(await sandbox.env.client.workflow.getHandle(workflowId).result()).toBe(expected);
    await save(sandbox, workflowId, name);
  }
  const outsideAddress = () => base58.encode(randomBytes(32));

  it('completed between two wallets of the partner', async () => {
    const from = await fundedWallet('History transfer source');
    const to = await createWallet(partner.api, customerId, 'solana', 'History transfer destination');
    await transferred({ from_wallet_id: from, to_wallet_id: to.id }, 'completed', 'completed-internal');
  });

  it('completed to an outside address; failed when the network rejects it', async () => {
    const from = await fundedWallet('History transfer outside');
    await transferred({ from_wallet_id: from, to_address: outsideAddress() }, 'completed', 'completed-external');
    await transferred(
      { from_wallet_id: from, to_address: outsideAddress(), simulate: 'network_rejected' },
      'failed',
      'failed-network-rejected',
    );
  });
});

describe('virtualAccountWorkflow cancellation and the sandbox rejection', () => {
  it('sandbox: rejected by its review (simulate "rejected")', async () => {
    const customer = await approvedCustomer(sandbox, partner.api);
    const wallet = await createWallet(partner.api, customer.id);
    const created = await partner.api
      .post('/v1/virtual-accounts')
      .send({ ...virtualAccountBody(customer.id, wallet.id), simulate: 'rejected' });
    expect(created.status).toBe(201);
    const workflowId = workflowIds.virtualAccount(created.body.id as string);
    expect(await sandbox.env.client.workflow.getHandle(workflowId).result()).toBe('rejected');
    await save(sandbox, workflowId, 'sandbox-simulated-rejection');
  });

  it('production: cancelled by the partner while under review', async () => {
    const customer = await approvedCustomer(production, operatorPartner.api);
    const wallet = await createWallet(operatorPartner.api, customer.id);
    const created = await operatorPartner.api
      .post('/v1/virtual-accounts')
      .send(virtualAccountBody(customer.id, wallet.id));
    expect(created.status).toBe(201);
    const cancelled = await operatorPartner.api
      .put(`/v1/virtual-accounts/${created.body.id}`)
      .send({ status: 'cancelled' });
    expect(cancelled.status).toBe(200);
    const workflowId = workflowIds.virtualAccount(created.body.id as string);
    expect(await production.env.client.workflow.getHandle(workflowId).result()).toBe('cancelled');
    await save(production, workflowId, 'production-cancelled-under-review');
  });
});

describe('settlementWorkflow for pay-ins and payouts', () => {
  let parties: Parties;
  beforeAll(async () => {
    parties = await setUpParties(sandbox, partner);
  });
  const settled = (transaction: TransactionBody) => settlementHandle(sandbox, transaction.id).result();

  it('a pay-in completed (leg 1 alone); a payout from the wallet completed (leg 2 alone)', async () => {
    await fundWallet(sandbox, parties);
    const payin = await createPayin(parties);
    await deposit(parties, payin);
    expect(await settled(payin)).toBe('completed');
    await save(sandbox, workflowIds.transaction(payin.id), 'payin-completed');
    const payout = await createPayout(parties);
    expect(await settled(payout)).toBe('completed');
    await save(sandbox, workflowIds.transaction(payout.id), 'payout-from-wallet-completed');
  });

  it('a payout awaiting its stablecoin, confirmed, completed', async () => {
    const payout = await createPayout(parties, { wallet_id: undefined });
    const confirmed = await parties.partner.api
      .post('/v1/payout/confirm')
      .send({ transaction_id: payout.id, tx_hash: '5'.repeat(88) });
    expect(confirmed.status).toBe(200);
    expect(await settled(payout)).toBe('completed');
    await save(sandbox, workflowIds.transaction(payout.id), 'payout-confirmed-completed');
  });
});

describe('payoutReturnWorkflow', () => {
  let parties: Parties;
  beforeAll(async () => {
    parties = await setUpParties(sandbox, partner);
  });
  const returned = async (transaction: TransactionBody, amount = transaction.receiver.amount) => {
    expect(await settlementHandle(sandbox, transaction.id).result()).toBe('completed');
    const response = await parties.partner.api
      .post(`/v1/sandbox/transactions/${transaction.id}/payout-return`)
      .send({ amount, reason_code: 'AC04' });
    expect(response.status).toBe(201);
    return sandbox.env.client.workflow.getHandle(workflowIds.payoutReturn(transaction.id));
  };

  it('fiat to fiat: a refund refused, then repaid; and one still awaiting a decision', async () => {
    const transaction = await createTransaction(parties);
    await deposit(parties, transaction);
    const handle = await returned(transaction);
    await expect(
      handle.executeUpdate(resolvePayoutReturnUpdate, { args: [{ action: 'refund', reason: 'refused' }] }),
    ).rejects.toThrow();
    await handle.executeUpdate(resolvePayoutReturnUpdate, { args: [{ action: 'repay', reason: 'account fixed' }] });
    expect(await handle.result()).toBe('completed');
    await save(sandbox, handle.workflowId, 'fiat-to-fiat-repaid');

    const waiting = await createTransaction(parties);
    await deposit(parties, waiting);
    const open = await returned(waiting);
    await sandbox.env.sleep('25 hours'); // one reminder
    await save(sandbox, open.workflowId, 'still-awaiting-decision');
  });

  it('a payout from the wallet: refunded to the wallet', async () => {
    await fundWallet(sandbox, parties);
    const payout = await createPayout(parties);
    const handle = await returned(payout);
    await handle.executeUpdate(resolvePayoutReturnUpdate, { args: [{ action: 'refund', reason: 'beneficiary deceased' }] });
    expect(await handle.result()).toBe('refunded');
    await save(sandbox, handle.workflowId, 'payout-refunded');
  });
});
