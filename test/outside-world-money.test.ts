// Money that real providers can break (time skipping): a credit the bank reports twice, a refund with a late
// deposit beside the one that funded the transaction, a deposit's return that keeps failing, and outcomes a
// provider reports late, at refund time (the payout made after all, the conversion made after all) or never (an
// operator records the payout). What a partner and an operator see: statuses, deposits, operations, the ledger.
import { randomUUID } from 'node:crypto';
import { recordedOutcome, sendUpdate } from './support/updates';
import { type WorkflowHandle, WorkflowUpdateFailedError } from '@temporalio/client';
import { Decimal, Money } from '../src/domain/money';
import { receiveDepositByReference } from '../src/services/transactions/deposits';
import { receiveVirtualAccountCredit } from '../src/services/transactions/virtual-account-deposits';
import { workflowIds } from '../src/temporal/workflow-ids';
import {
  depositReturnStateQuery,
  resolveErrorUpdate,
  retryDepositReturnUpdate,
  settlementStateQuery,
} from '../workflows/settlement';
import { virtualAccountBody } from './support/accounts';
import { Harness, startHarness } from './support/harness';
import { balanceOf } from './support/payments';
import {
  createTransaction,
  deposit,
  eventTypesOf,
  expectLedgerInvariants,
  expectTransactionInvariants,
  ledgerOf,
  Parties,
  setUpParties,
  settlementHandle,
  TransactionBody,
  transactionOf,
  untilSkipping as untilSkippingTime,
  waitForStatus,
} from './support/transactions';

let harness: Harness;
let parties: Parties;

beforeAll(async () => {
  harness = await startHarness();
  parties = await setUpParties(harness);
});
afterAll(() => harness?.teardown());

const get = (id: string) => transactionOf(parties, id);
const expectInvariants = (id: string, depositIds: string[] = []) =>
  expectTransactionInvariants(harness, parties, id, depositIds);

const operationsOf = (prefix: string) =>
  harness.prisma.sandboxRailOperation.findMany({
    where: { idempotencyKey: { startsWith: prefix } },
    orderBy: { createdAt: 'asc' },
  });

const depositsOf = (transactionId: string) =>
  harness.prisma.transactionDeposit.findMany({ where: { transactionId }, orderBy: { receivedAt: 'asc' } });

const resolve = (id: string, decision: Record<string, unknown>) =>
  sendUpdate(settlementHandle(harness, id), resolveErrorUpdate, { args: [decision as never] });

const depositReturn = (depositId: string) =>
  harness.env.client.workflow.getHandle(workflowIds.depositReturn(depositId));

const untilSkipping = (probe: () => Promise<boolean>, what: string) => untilSkippingTime(harness, probe, what);

/** A bank's report of a credit carrying the transaction's reference, with the bank's own id of it. */
const bankCredit = (
  created: TransactionBody,
  providerReference: string,
  amount = created.sender.amount,
  at = new Date(),
) =>
  receiveDepositByReference(harness.services, {
    provider: 'test-bank',
    providerReference,
    reference: created.sender_deposit_instructions.reference,
    amount: Money.parse('BRL', amount),
    senderName: 'João Pereira',
    receivedAt: at,
  });

/** The postings of a deposit returned on its own (`deposit:<id>:*`), apart from its transaction's. */
const depositLedger = (depositId: string) => ledgerOf(harness, '00000000-0000-4000-8000-000000000000', [depositId]);

describe('a credit the bank reports twice', () => {
  it('is recorded once on a transaction: one after the other, at once, and after the transaction completed', async () => {
    const created = await createTransaction(parties);
    const reference = `E2E-${created.id}`;
    const [first, second] = await Promise.all([bankCredit(created, reference), bankCredit(created, reference)]);
    expect(first).toMatchObject({ status: 'accepted', provider_reference: reference });
    expect(second).toEqual(first);
    expect(await bankCredit(created, reference)).toEqual(first);
    expect(await settlementHandle(harness, created.id).result()).toBe('completed');
    // Reported again once the transaction moved on: the same deposit, not a late one sent back.
    expect(await bankCredit(created, reference)).toEqual(first);
    expect((await depositsOf(created.id)).map((row) => [row.id, row.status])).toEqual([[first?.id, 'accepted']]);
    expect(await operationsOf(`deposit:${first!.id}`)).toEqual([]);
    const { ledger } = await expectInvariants(created.id);
    expect(ledger.references).toEqual(['deposit', 'fiat_to_stablecoin', 'stablecoin_to_fiat', 'payout']);
    expect(await eventTypesOf(harness, created.id)).toEqual(['payin.created', 'payin.processing', 'payin.completed']);
  });

  it('is recorded once through the sandbox endpoint; the same reference for another transaction is refused', async () => {
    const created = await createTransaction(parties);
    const body = { amount: created.sender.amount, provider_reference: `SBX-${created.id}` };
    const api = parties.partner.api;
    const [first, again] = await Promise.all([
      api.post(`/v1/sandbox/transactions/${created.id}/deposit`).send(body),
      api.post(`/v1/sandbox/transactions/${created.id}/deposit`).send(body),
    ]);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await settlementHandle(harness, created.id).result()).toBe('completed');
    const other = await createTransaction(parties);
    const refused = await api.post(`/v1/sandbox/transactions/${other.id}/deposit`).send(body);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('provider_reference_in_use');
    expect(await depositsOf(other.id)).toEqual([]);
    expect((await get(other.id)).status).toBe('awaiting_deposit');
    await api.put(`/v1/transactions/${other.id}`).send({ status: 'cancelled' });
  });

  it('makes one pay-in on a virtual account, however often and however concurrently it is reported', async () => {
    const response = await parties.partner.api
      .post('/v1/virtual-accounts')
      .send(virtualAccountBody(parties.customer.id, parties.wallet.id));
    expect(response.status).toBe(201);
    const account = response.body as { id: string; deposit_addresses: Record<string, any> };
    const before = new Decimal(await balanceOf(parties.partner.api, parties.wallet.id));
    const report = () =>
      receiveVirtualAccountCredit(harness.services, {
        provider: 'test-bank',
        providerReference: `ACH-TRACE-${account.id}`,
        reference: 'INV 9',
        amount: Money.parse('USD', '40.00'),
        senderName: 'Ana Souza',
        receivedAt: new Date(),
        account: { rail: 'ach', identifier: account.deposit_addresses.ach.bank_account_number as string },
      });
    const [first, second, third] = await Promise.all([report(), report(), report()]);
    expect(first).toMatchObject({ type: 'payin', sender: { virtual_account_id: account.id } });
    expect([second?.id, third?.id]).toEqual([first?.id, first?.id]);
    expect(await settlementHandle(harness, first!.id).result()).toBe('completed');
    expect((await report())?.id).toBe(first?.id);
    const payIns = await harness.prisma.transaction.findMany({ where: { virtualAccountId: account.id } });
    expect(payIns.map((row) => row.id)).toEqual([first?.id]);
    const credited = new Decimal(await balanceOf(parties.partner.api, parties.wallet.id)).minus(before);
    expect(credited.toFixed(6)).toBe(new Decimal((await get(first!.id)).receiver.amount).toFixed(6));
  });
});

describe('a refund with a late deposit beside the funding one', () => {
  it('returns the funding deposit under the refund key; the late one is held and returned on its own', async () => {
    const created = await createTransaction(parties);
    const funding = await deposit(parties, created, {
      simulate: 'payout_error',
      provider_reference: `F-${created.id}`,
    });
    await waitForStatus(harness, created.id, 'error');
    // A late credit whose value date the bank puts before the funding one, and whose return keeps failing.
    const late = await parties.partner.api
      .post(`/v1/sandbox/transactions/${created.id}/deposit`)
      .send({ amount: '500.00', simulate: 'return_error', provider_reference: `L-${created.id}` });
    expect(late.status).toBe(201);
    expect(late.body).toMatchObject({ status: 'returning', return_reason: 'not_awaiting_deposit', amount: '500.00' });
    // On the books from the moment it arrived.
    expect(await depositLedger(late.body.id)).toMatchObject({
      references: ['received'],
      net: { 'fiat_clearing:BRL': '500' },
    });
    await untilSkipping(
      async () => (await depositReturn(late.body.id).query(depositReturnStateQuery)).status === 'return_failed',
      'the late deposit’s return fails',
    );
    expect(await resolve(created.id, { action: 'refund' })).toBe('refund');
    expect(await settlementHandle(harness, created.id).result()).toBe('refunded');
    const refundOperation = await harness.prisma.sandboxRailOperation.findUniqueOrThrow({
      where: { idempotencyKey: `${created.id}:refund` },
    });
    expect(refundOperation.amount.toFixed(2)).toBe('1000.00');
    const deposits = Object.fromEntries((await depositsOf(created.id)).map((row) => [row.id, row.status]));
    expect(deposits).toEqual({ [funding.id]: 'returned', [late.body.id]: 'return_failed' });
    // The late 500 is still held in clearing, on its own postings.
    expect((await depositLedger(late.body.id)).net['fiat_clearing:BRL']).toBe('500');
    expect(await sendUpdate(depositReturn(late.body.id), retryDepositReturnUpdate)).toBe('returning');
    expect(await depositReturn(late.body.id).result()).toBe('returned');
    const { ledger } = await expectInvariants(created.id, [late.body.id]);
    expect(ledger.references).toEqual(['deposit', 'fiat_to_stablecoin', 'received', 'sell_back', 'refund', 'returned']);
    expect((await operationsOf(`deposit:${late.body.id}`)).map((row) => [row.kind, row.amount.toFixed(2)])).toEqual([
      ['return', '500.00'],
    ]);
  });
});

/** How many timers of the workflow have fired (operator reminders, retry backoffs). */
async function firedTimersOf(handle: WorkflowHandle): Promise<number> {
  const { events } = await handle.fetchHistory();
  return (events ?? []).filter((event) => event.timerFiredEventAttributes).length;
}

describe('a deposit return that keeps failing', () => {
  it('waits in return_failed with the money held, visible to operators, and returns on their retry', async () => {
    const created = await createTransaction(parties);
    await deposit(parties, created);
    expect(await settlementHandle(harness, created.id).result()).toBe('completed');
    const late = await deposit(parties, created, { simulate: 'return_error' });
    const handle = depositReturn(late.id);
    await untilSkipping(
      async () => (await handle.query(depositReturnStateQuery)).status === 'return_failed',
      'the return fails for good',
    );
    expect((await handle.describe()).searchAttributes.ResourceStatus).toEqual(['error']);
    // Days without a decision: the wait is a timer a day (each a reminder in the worker's log), and it goes on.
    const remindersBefore = await firedTimersOf(handle);
    await harness.env.sleep('3 days');
    expect((await firedTimersOf(handle)) - remindersBefore).toBeGreaterThanOrEqual(3);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    const stored = await harness.prisma.transactionDeposit.findUniqueOrThrow({ where: { id: late.id } });
    expect(stored.status).toBe('return_failed');
    const shown = await parties.partner.api.get(`/v1/transactions/${created.id}`);
    expect(shown.status).toBe(200);
    expect(await depositLedger(late.id)).toMatchObject({
      references: ['received'],
      net: { 'fiat_clearing:BRL': '1000' },
    });
    const retryId = randomUUID();
    expect(await sendUpdate(handle, retryDepositReturnUpdate, { updateId: retryId })).toBe('returning');
    // What sendUpdate answers from when the test server says an update it applied was not found.
    expect(await recordedOutcome(handle, [retryId])).toEqual({ value: 'returning' });
    // Only a failed return waits for a retry: a second one is refused.
    await expect(sendUpdate(handle, retryDepositReturnUpdate)).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
    expect(await handle.result()).toBe('returned');
    expect((await harness.prisma.transactionDeposit.findUniqueOrThrow({ where: { id: late.id } })).status).toBe(
      'returned',
    );
    const { ledger } = await expectInvariants(created.id, [late.id]);
    expect(ledger.references.slice(-2)).toEqual(['received', 'returned']);
    expect((await get(created.id)).status).toBe('completed');
  });
});

describe('outcomes a provider reports late', () => {
  it('books a conversion the exchange made after all before anything is returned, then sells it back', async () => {
    const created = await createTransaction(parties);
    await deposit(parties, created, { simulate: 'conversion_error' });
    await waitForStatus(harness, created.id, 'error');
    // The exchange made the conversion late, after answering "unavailable" every time.
    await harness.prisma.sandboxRailOperation.create({
      data: {
        idempotencyKey: `${created.id}:fiat_to_stablecoin`,
        kind: 'conversion',
        currency: 'USDC',
        amount: created.stablecoin.amount,
        outcome: 'completed',
      },
    });
    expect(await resolve(created.id, { action: 'refund' })).toBe('refund');
    expect(await settlementHandle(harness, created.id).result()).toBe('refunded');
    const { transaction, ledger } = await expectInvariants(created.id);
    expect(transaction).toMatchObject({ status: 'refunded', failure_reason: 'refunded_by_operator' });
    expect(ledger.references).toEqual(['deposit', 'fiat_to_stablecoin', 'sell_back', 'refund']);
    expect((await operationsOf(created.id)).map((row) => row.kind)).toEqual(['conversion', 'sell_back', 'return']);
  });

  it('completes on an operator’s record of a payout the rail cannot report, with their reason kept', async () => {
    const created = await createTransaction(parties);
    await deposit(parties, created, { simulate: 'payout_outcome_unknown' });
    await untilSkipping(
      async () => (await settlementHandle(harness, created.id).query(settlementStateQuery)).awaitingOperator,
      'the payout’s outcome stays unknown and an operator is waited for',
    );
    const state = await settlementHandle(harness, created.id).query(settlementStateQuery);
    expect(state).toMatchObject({ status: 'error', step: 'stablecoin_to_fiat', payoutAsked: true });
    const refused = (decision: Record<string, unknown>) =>
      resolve(created.id, decision).then(
        () => null,
        (error: WorkflowUpdateFailedError) => (error.cause as Error).message,
      );
    expect(await refused({ action: 'record_payout', provider_reference: 'PAY-1' })).toMatch(/reason/);
    expect(await refused({ action: 'record_payout', reason: 'confirmed by phone' })).toMatch(/provider_reference/);
    expect(await refused({ action: 'refund' })).toMatch(/No refund/);
    expect(
      await resolve(created.id, {
        action: 'record_payout',
        provider_reference: 'RAIL-PAY-778',
        reason: 'Confirmed paid on the rail’s portal (ticket 4411)',
      }),
    ).toBe('record_payout');
    expect(await settlementHandle(harness, created.id).result()).toBe('completed');
    const { transaction, ledger } = await expectInvariants(created.id);
    expect(transaction.status).toBe('completed');
    expect(ledger.references).toEqual(['deposit', 'fiat_to_stablecoin', 'stablecoin_to_fiat', 'payout']);
    const leg = await harness.prisma.transactionLeg.findUniqueOrThrow({
      where: { transactionId_kind: { transactionId: created.id, kind: 'stablecoin_to_fiat' } },
    });
    expect(leg).toMatchObject({
      status: 'completed',
      providerReference: 'RAIL-PAY-778',
      operatorReason: 'Confirmed paid on the rail’s portal (ticket 4411)',
    });
  });

  it('refuses record_payout where no payout was asked', async () => {
    const created = await createTransaction(parties);
    await deposit(parties, created, { simulate: 'conversion_error' });
    await waitForStatus(harness, created.id, 'error');
    await expect(
      resolve(created.id, { action: 'record_payout', provider_reference: 'X', reason: 'y' }),
    ).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
    expect(await resolve(created.id, { action: 'retry' })).toBe('retry');
    expect(await settlementHandle(harness, created.id).result()).toBe('completed');
  });
});
