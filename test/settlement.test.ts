// Settlement of fiat-to-fiat transactions, path by path (time skipping): completed, cancelled, deadline
// passed, payout rejected and refunded, wrong amount, error then an operator's retry or refund, a
// cancel racing a deposit, late deposits; the ledger invariants after each, and the workflow's
// children, search attributes and query.
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Decimal, Money } from '../src/domain/money';
import { SANDBOX_SELL_BACK_SPREAD_BASIS_POINTS } from '../src/providers/fiat-rails';
import { receiveDepositByReference } from '../src/services/transactions/deposits';
import { workflowIds } from '../src/temporal/workflow-ids';
import { resolveErrorUpdate, settlementStateQuery } from '../workflows/settlement';
import { Harness, startHarness } from './support/harness';
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

/**
 * A refund after leg 1 sold the stablecoin back once, at the sandbox exchange's rate (its spread below the locked
 * rate): the sell-back posting moves exactly the provider's proceeds, clearing gets leg 1's converted amount back,
 * and the difference is the FX loss. Returns the proceeds.
 */
async function expectSoldBack(created: TransactionBody): Promise<Decimal> {
  const [operation] = await harness.prisma.sandboxRailOperation.findMany({
    where: { idempotencyKey: `${created.id}:sell_back` },
  });
  expect(operation).toMatchObject({ kind: 'sell_back', currency: 'BRL', outcome: 'completed' });
  const converted = new Decimal(created.sender.amount).minus(created.fees.total.amount);
  const proceeds = new Decimal(operation!.amount.toString());
  const atLockedRate = Money.of('BRL', converted.toFixed(2));
  expect(proceeds.toFixed(2)).toBe(
    atLockedRate.minus(atLockedRate.basisPoints(SANDBOX_SELL_BACK_SPREAD_BASIS_POINTS, 'up')).toString(),
  );
  const posting = await harness.prisma.ledgerTransaction.findUniqueOrThrow({
    where: { reference: `transaction:${created.id}:sell_back` },
    include: { entries: { include: { account: true } } },
  });
  const amountOf = (code: string) =>
    posting.entries
      .filter((entry) => entry.account.systemCode === code && entry.currency === 'BRL')
      .map((entry) => new Decimal(entry.amount.toString()).toFixed(2));
  expect(amountOf('fx')).toEqual([proceeds.neg().toFixed(2)]);
  expect(amountOf('fiat_clearing')).toEqual([converted.toFixed(2)]);
  expect(amountOf('fx_gain_loss')).toEqual([proceeds.minus(converted).toFixed(2)]);
  expect(proceeds.lt(converted)).toBe(true);
  const ledger = await ledgerOf(harness, created.id);
  expect(ledger.net['fx_gain_loss:BRL']).toBe(proceeds.minus(converted).toFixed());
  return proceeds;
}

const untilSkipping = (probe: () => Promise<boolean>, what: string) => untilSkippingTime(harness, probe, what);

async function walletBalances() {
  return (await parties.partner.api.get(`/v1/wallets/${parties.wallet.id}`)).body.balances;
}

describe('completed', () => {
  it('settles a deposit of the exact amount through both legs, posting each step once', async () => {
    const created = await createTransaction(parties);
    const accepted = await deposit(parties, created, { sender_name: 'João Pereira' });
    expect(accepted).toEqual({
      id: expect.any(String),
      transaction_id: created.id,
      amount: '1000.00',
      currency: 'BRL',
      sender_name: 'João Pereira',
      reference: created.sender_deposit_instructions.reference,
      provider_reference: expect.any(String),
      status: 'accepted',
      return_reason: null,
      received_at: expect.any(String),
    });
    expect((await get(created.id)).status).toBe('processing');

    const handle = settlementHandle(harness, created.id);
    expect(await handle.result()).toBe('completed');
    const { transaction, ledger } = await expectInvariants(created.id);
    expect(transaction).toEqual({ ...created, status: 'completed', updated_at: expect.any(String) });
    expect(ledger.references).toEqual(['deposit', 'fiat_to_stablecoin', 'stablecoin_to_fiat', 'payout']);
    expect(ledger.net).toMatchObject({
      'fee_revenue:BRL': '5',
      [`partner_fees:${parties.partner.partnerId}:BRL`]: '11',
      'network_fees:BRL': '0.06',
      'settlement:BRL': '-1000',
      'settlement:MXN': created.receiver.amount.replace(/0+$/, '').replace(/\.$/, ''),
    });
    expect(await eventTypesOf(harness, created.id)).toEqual(['payin.created', 'payin.processing', 'payin.completed']);
    // The stablecoin never showed in the wallet's spendable balance.
    expect(await walletBalances()).toEqual([
      { currency: 'USDC', amount: '0.000000' },
      { currency: 'USDT', amount: '0.000000' },
    ]);
    // One operation per step at the (simulated) providers.
    const operations = await harness.prisma.sandboxRailOperation.findMany({
      where: { idempotencyKey: { startsWith: created.id } },
      orderBy: { createdAt: 'asc' },
    });
    expect(operations.map((operation) => [operation.kind, operation.outcome, operation.amount.toString()])).toEqual([
      ['conversion', 'completed', created.stablecoin.amount.replace(/0+$/, '')],
      ['payout', 'completed', created.receiver.amount.replace(/0+$/, '').replace(/\.$/, '')],
    ]);

    // Operators see the legs as children, the state in a query, the status in a search attribute.
    const description = await handle.describe();
    expect(description.searchAttributes).toMatchObject({
      PartnerId: [parties.partner.partnerId],
      CustomerId: [parties.customer.id],
      ResourceId: [created.id],
      ResourceStatus: ['completed'],
    });
    expect(await handle.query(settlementStateQuery)).toMatchObject({ status: 'completed', step: 'done' });
    // Upserts of the resource's attributes; the SDK's own marker of a patch (TemporalChangeVersion) is not counted.
    const upserts = async (workflowHandle: {
      fetchHistory(): Promise<{
        events?: Array<{
          eventType?: unknown;
          upsertWorkflowSearchAttributesEventAttributes?: {
            searchAttributes?: { indexedFields?: Record<string, unknown> | null } | null;
          } | null;
        }> | null;
      }>;
    }) =>
      ((await workflowHandle.fetchHistory()).events ?? []).filter(
        (event) =>
          event.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES &&
          'ResourceStatus' in
            (event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}),
      ).length;
    for (const leg of ['fiat-to-stablecoin', 'stablecoin-to-fiat'] as const) {
      const child = harness.env.client.workflow.getHandle(workflowIds.transactionLeg(created.id, leg));
      const childDescription = await child.describe();
      expect(childDescription.status.name).toBe('COMPLETED');
      expect(childDescription.searchAttributes).toMatchObject({
        PartnerId: [parties.partner.partnerId],
        CustomerId: [parties.customer.id],
        ResourceId: [created.id],
        ResourceStatus: ['completed'],
      });
      // Started with its search attributes: one upsert, at its end (npm run bench: each is engine work).
      expect(await upserts(child)).toBe(1);
    }
    // Started by the API with its search attributes: upserts only when the status changes (processing, completed).
    expect(await upserts(handle)).toBe(2);
  });
});

async function cancel(id: string) {
  return parties.partner.api.put(`/v1/transactions/${id}`).send({ status: 'cancelled' });
}

/** Waits for a late deposit's return workflow and gives the deposit as stored. */
async function returned(depositId: string) {
  const handle = harness.env.client.workflow.getHandle(workflowIds.depositReturn(depositId));
  expect(await handle.result()).toBe('returned');
  return harness.prisma.transactionDeposit.findUniqueOrThrow({ where: { id: depositId } });
}

/** A deposit the transaction no longer waits for: returned in full on its own; the transaction unchanged. */
async function expectReturnedOnItsOwn(created: TransactionBody, status: string) {
  const events = await eventTypesOf(harness, created.id);
  const late = await deposit(parties, created);
  expect(late).toMatchObject({
    status: 'returning',
    return_reason: 'not_awaiting_deposit',
    amount: created.sender.amount,
  });
  expect((await returned(late.id)).status).toBe('returned');
  expect((await get(created.id)).status).toBe(status);
  expect(await eventTypesOf(harness, created.id)).toEqual(events);
  const { ledger } = await expectInvariants(created.id, [late.id]);
  expect(ledger.references.slice(-2)).toEqual(['received', 'returned']);
}

describe('cancelled', () => {
  it('cancels a transaction awaiting its deposit, once; nothing was posted', async () => {
    const created = await createTransaction(parties);
    const response = await cancel(created.id);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ...created, status: 'cancelled', updated_at: expect.any(String) });
    expect(await get(created.id)).toEqual(response.body);
    expect(await settlementHandle(harness, created.id).result()).toBe('cancelled');
    expect(await eventTypesOf(harness, created.id)).toEqual(['payin.created', 'payin.cancelled']);
    const { ledger } = await expectInvariants(created.id);
    expect(ledger.references).toEqual([]);

    const again = await cancel(created.id);
    expect(again.status).toBe(422);
    expect(again.body.error).toEqual({
      code: 'payin_cannot_be_cancelled',
      message: `Transaction ${created.id} is cancelled; only a transaction awaiting its deposit can be cancelled.`,
    });
  });

  it('refuses to cancel once the deposit arrived, and a body other than {"status": "cancelled"}', async () => {
    const created = await createTransaction(parties);
    await deposit(parties, created);
    const refused = await cancel(created.id);
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('payin_cannot_be_cancelled');
    expect(await settlementHandle(harness, created.id).result()).toBe('completed');

    for (const body of [{ status: 'completed' }, {}, { status: 'cancelled', reason: 'x' }]) {
      const invalid = await parties.partner.api.put(`/v1/transactions/${created.id}`).send(body);
      expect(invalid.status).toBe(400);
      expect(invalid.body.error.code).toBe('validation_error');
    }
    const unknown = await cancel('00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
  });

  it('returns a deposit that arrives after the cancellation, leaving the transaction cancelled', async () => {
    const created = await createTransaction(parties);
    expect((await cancel(created.id)).status).toBe(200);
    await expectReturnedOnItsOwn(created, 'cancelled');
  });
});

describe('deposit deadline', () => {
  it('fails a transaction without a deposit when its deadline passes (30 minutes on pix)', async () => {
    const created = await createTransaction(parties);
    expect(Date.parse(created.deposit_deadline as string) - Date.parse(created.created_at as string)).toBe(30 * 60_000);
    expect(created.sender_deposit_instructions.deadline).toBe(created.deposit_deadline);
    expect(await settlementHandle(harness, created.id).result()).toBe('failed');
    const { transaction, ledger } = await expectInvariants(created.id);
    expect(transaction).toMatchObject({ status: 'failed', failure_reason: 'deposit_deadline_passed' });
    expect(ledger.references).toEqual([]);
    expect(await eventTypesOf(harness, created.id)).toEqual(['payin.created', 'payin.failed']);

    await expectReturnedOnItsOwn(created, 'failed');
  });
});

describe('refunds', () => {
  it('refunds everything when the receiving bank rejects the payout', async () => {
    const created = await createTransaction(parties);
    await deposit(parties, created, { simulate: 'payout_rejected' });
    expect(await settlementHandle(harness, created.id).result()).toBe('refunded');
    const { transaction, ledger } = await expectInvariants(created.id);
    expect(transaction).toMatchObject({ status: 'refunded', failure_reason: 'payout_rejected' });
    expect(await eventTypesOf(harness, created.id)).toEqual(['payin.created', 'payin.processing', 'payin.refunded']);
    const operations = await harness.prisma.sandboxRailOperation.findMany({
      where: { idempotencyKey: { startsWith: created.id } },
      orderBy: { createdAt: 'asc' },
    });
    const soldBack = await expectSoldBack(created);
    expect(operations.map((operation) => [operation.kind, operation.outcome, operation.amount.toFixed(2)])).toEqual([
      ['conversion', 'completed', new Decimal(created.stablecoin.amount).toFixed(2)],
      ['payout', 'rejected', created.receiver.amount],
      ['sell_back', 'completed', soldBack.toFixed(2)],
      ['return', 'completed', '1000.00'],
    ]);
    expect(ledger.references).toEqual(['deposit', 'fiat_to_stablecoin', 'sell_back', 'refund']);
  });

  it('returns a deposit of another amount in full and ends refunded', async () => {
    const created = await createTransaction(parties);
    const wrong = await deposit(parties, created, { amount: '999.99' });
    expect(wrong).toMatchObject({ status: 'returning', return_reason: 'amount_mismatch', amount: '999.99' });
    expect(await settlementHandle(harness, created.id).result()).toBe('refunded');
    const { transaction, ledger } = await expectInvariants(created.id);
    expect(transaction).toMatchObject({ status: 'refunded', failure_reason: 'deposit_amount_mismatch' });
    expect(ledger.references).toEqual(['deposit', 'refund']);
    expect(await eventTypesOf(harness, created.id)).toEqual(['payin.created', 'payin.processing', 'payin.refunded']);
    const stored = await harness.prisma.transactionDeposit.findUniqueOrThrow({ where: { id: wrong.id } });
    expect(stored.status).toBe('returned');
    const returnedAmount = await harness.prisma.sandboxRailOperation.findUniqueOrThrow({
      where: { idempotencyKey: `${created.id}:refund` },
    });
    expect(returnedAmount.amount.toFixed(2)).toBe('999.99');
  });
});

describe('error and the operator', () => {
  const resolve = (id: string, action: unknown) =>
    settlementHandle(harness, id).executeUpdate(resolveErrorUpdate, { args: [{ action } as never] });

  it('waits in error when the conversion keeps failing, then completes on the operator’s retry', async () => {
    const created = await createTransaction(parties);
    await expect(resolve(created.id, 'retry')).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
    await deposit(parties, created, { simulate: 'conversion_error' });
    await waitForStatus(harness, created.id, 'error');
    expect(await get(created.id)).toMatchObject({ status: 'error', failure_reason: 'conversion_failed' });
    const handle = settlementHandle(harness, created.id);
    expect(await handle.query(settlementStateQuery)).toMatchObject({
      status: 'error',
      step: 'fiat_to_stablecoin',
      awaitingOperator: true,
    });
    expect((await handle.describe()).searchAttributes.ResourceStatus).toEqual(['error']);
    // The leg failed after its bounded retries; nothing was converted or posted for it.
    const leg = harness.env.client.workflow.getHandle(workflowIds.transactionLeg(created.id, 'fiat-to-stablecoin'));
    expect((await leg.describe()).status.name).toBe('FAILED');
    expect((await ledgerOf(harness, created.id)).references).toEqual(['deposit']);

    const invalid = await resolve(created.id, 'approve').catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(((invalid as WorkflowUpdateFailedError).cause as Error).message).toBe(
      'action must be "retry", "refund" or "record_payout".',
    );
    expect(await resolve(created.id, 'retry')).toBe('retry');
    expect(await handle.result()).toBe('completed');
    const { transaction } = await expectInvariants(created.id);
    expect(transaction.failure_reason).toBeNull();
    expect(await eventTypesOf(harness, created.id)).toEqual([
      'payin.created',
      'payin.processing',
      'payin.error',
      'payin.processing',
      'payin.completed',
    ]);
  });

  it('refunds on the operator’s refund when the payout keeps failing', async () => {
    const created = await createTransaction(parties);
    await deposit(parties, created, { simulate: 'payout_error' });
    await waitForStatus(harness, created.id, 'error');
    expect(await get(created.id)).toMatchObject({ status: 'error', failure_reason: 'payout_failed' });
    expect((await ledgerOf(harness, created.id)).references).toEqual(['deposit', 'fiat_to_stablecoin']);
    expect(await resolve(created.id, 'refund')).toBe('refund');
    await expect(resolve(created.id, 'retry')).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
    expect(await settlementHandle(harness, created.id).result()).toBe('refunded');
    const { transaction, ledger } = await expectInvariants(created.id);
    expect(transaction).toMatchObject({ status: 'refunded', failure_reason: 'refunded_by_operator' });
    expect(ledger.references).toEqual(['deposit', 'fiat_to_stablecoin', 'sell_back', 'refund']);
    await expectSoldBack(created);
    expect(await eventTypesOf(harness, created.id)).toEqual([
      'payin.created',
      'payin.processing',
      'payin.error',
      'payin.processing',
      'payin.refunded',
    ]);
    // The payout never went out; the money came back once.
    const payout = await harness.prisma.sandboxRailOperation.findUnique({
      where: { idempotencyKey: `${created.id}:stablecoin_to_fiat` },
    });
    expect(payout).toBeNull();
  });
});

describe('a provider that loses its answer (unknown outcomes)', () => {
  const resolve = (id: string, action: unknown) =>
    settlementHandle(harness, id).executeUpdate(resolveErrorUpdate, { args: [{ action } as never] });
  const operationsOf = (id: string) =>
    harness.prisma.sandboxRailOperation.findMany({
      where: { idempotencyKey: { startsWith: id } },
      orderBy: { createdAt: 'asc' },
    });

  it('completes a payout made whose every answer was lost, paying once (the rail is asked by the key)', async () => {
    const created = await createTransaction(parties);
    await deposit(parties, created, { simulate: 'payout_timeout_after_execution' });
    expect(await settlementHandle(harness, created.id).result()).toBe('completed');
    const { ledger } = await expectInvariants(created.id);
    expect(ledger.references).toEqual(['deposit', 'fiat_to_stablecoin', 'stablecoin_to_fiat', 'payout']);
    const operations = await operationsOf(created.id);
    expect(operations.map((operation) => [operation.kind, operation.outcome])).toEqual([
      ['conversion', 'completed'],
      ['payout', 'completed'],
    ]);
    // Every attempt of the payout asked the rail again under the same key: one payout.
    expect(operations[1]!.requests).toBe(6);
    expect(await eventTypesOf(harness, created.id)).toEqual(['payin.created', 'payin.processing', 'payin.completed']);
  });

  it('waits while the rail cannot say, refuses a refund in error, and completes on the retry, paying once', async () => {
    const created = await createTransaction(parties);
    await deposit(parties, created, { simulate: 'payout_outcome_unknown' });
    const leg = harness.env.client.workflow.getHandle(workflowIds.transactionLeg(created.id, 'stablecoin-to-fiat'));
    // While the rail is asked again, the leg shows it and the transaction stays processing.
    await untilSkipping(
      async () =>
        ((await leg.describe().catch(() => null))?.searchAttributes.ResourceStatus ?? [])[0] === 'outcome_unknown',
      'the leg shows outcome_unknown',
    );
    expect(await get(created.id)).toMatchObject({ status: 'processing' });
    await untilSkipping(
      async () => (await settlementHandle(harness, created.id).query(settlementStateQuery)).awaitingOperator,
      'the transaction waits for an operator',
    );
    expect(await get(created.id)).toMatchObject({ status: 'error', failure_reason: 'payout_failed' });
    const state = await settlementHandle(harness, created.id).query(settlementStateQuery);
    expect(state.refundBlocked).toMatch(/may have been/);

    const refused = await resolve(created.id, 'refund').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(((refused as WorkflowUpdateFailedError).cause as Error).message).toMatch(
      /^No refund: .*may have been.*A retry asks the provider again\.$/,
    );
    // Nothing was returned or sold back.
    expect((await operationsOf(created.id)).map((operation) => operation.kind)).toEqual(['conversion', 'payout']);

    expect(await resolve(created.id, 'retry')).toBe('retry');
    expect(await settlementHandle(harness, created.id).result()).toBe('completed');
    const { ledger } = await expectInvariants(created.id);
    expect(ledger.references).toEqual(['deposit', 'fiat_to_stablecoin', 'stablecoin_to_fiat', 'payout']);
    expect((await operationsOf(created.id)).map((operation) => [operation.kind, operation.outcome])).toEqual([
      ['conversion', 'completed'],
      ['payout', 'completed'],
    ]);
    expect(await eventTypesOf(harness, created.id)).toEqual([
      'payin.created',
      'payin.processing',
      'payin.error',
      'payin.processing',
      'payin.completed',
    ]);
  });

  it('refuses a refund when the payout was made but recording it kept failing, and records it on the retry', async () => {
    const created = await createTransaction(parties);
    // The database refuses to close this transaction's payout leg, as an outage lasting past every retry would.
    const suffix = created.id.replace(/-/g, '');
    await harness.prisma.$executeRawUnsafe(`
      CREATE FUNCTION test_refuse_leg_${suffix}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.transaction_id = '${created.id}' AND NEW.kind = 'stablecoin_to_fiat' AND NEW.status = 'completed' THEN
          RAISE EXCEPTION 'test: the payout leg cannot be closed';
        END IF;
        RETURN NEW;
      END $$`);
    await harness.prisma.$executeRawUnsafe(
      `CREATE TRIGGER test_refuse_leg_${suffix} BEFORE UPDATE ON transaction_legs FOR EACH ROW EXECUTE FUNCTION test_refuse_leg_${suffix}()`,
    );
    try {
      await deposit(parties, created);
      await untilSkipping(
        async () => (await settlementHandle(harness, created.id).query(settlementStateQuery)).awaitingOperator,
        'the transaction waits for an operator',
      );
      const state = await settlementHandle(harness, created.id).query(settlementStateQuery);
      expect(state).toMatchObject({ status: 'error', step: 'stablecoin_to_fiat' });
      expect(state.refundBlocked).toMatch(/^the payout was made but could not be recorded/);
      const refused = await resolve(created.id, 'refund').catch((error: unknown) => error);
      expect(((refused as WorkflowUpdateFailedError).cause as Error).message).toMatch(
        /^No refund: the payout was made/,
      );
    } finally {
      await harness.prisma.$executeRawUnsafe(`DROP TRIGGER test_refuse_leg_${suffix} ON transaction_legs`);
      await harness.prisma.$executeRawUnsafe(`DROP FUNCTION test_refuse_leg_${suffix}()`);
    }
    expect(await resolve(created.id, 'retry')).toBe('retry');
    expect(await settlementHandle(harness, created.id).result()).toBe('completed');
    const { ledger } = await expectInvariants(created.id);
    expect(ledger.references).toEqual(['deposit', 'fiat_to_stablecoin', 'stablecoin_to_fiat', 'payout']);
    const operations = await operationsOf(created.id);
    expect(operations.map((operation) => [operation.kind, operation.requests])).toEqual([
      ['conversion', 1],
      ['payout', 2],
    ]);
  });

  it('completes, returning nothing, when the rail reports at refund time the payout made after all', async () => {
    const created = await createTransaction(parties);
    await deposit(parties, created, { simulate: 'payout_error' });
    await waitForStatus(harness, created.id, 'error');
    expect((await settlementHandle(harness, created.id).query(settlementStateQuery)).refundBlocked).toBeNull();
    // The rail made the payout late, after answering "unavailable" every time.
    await harness.prisma.sandboxRailOperation.create({
      data: {
        idempotencyKey: `${created.id}:stablecoin_to_fiat`,
        kind: 'payout',
        currency: 'MXN',
        amount: created.receiver.amount,
        outcome: 'completed',
      },
    });
    expect(await resolve(created.id, 'refund')).toBe('refund');
    // Asked before anything is sold back or returned: the payout went out, so the transaction completed.
    expect(await settlementHandle(harness, created.id).result()).toBe('completed');
    const { transaction, ledger } = await expectInvariants(created.id);
    expect(transaction).toMatchObject({ status: 'completed', failure_reason: null });
    expect((await operationsOf(created.id)).map((operation) => operation.kind)).toEqual(['conversion', 'payout']);
    expect(ledger.references).toEqual(['deposit', 'fiat_to_stablecoin', 'stablecoin_to_fiat', 'payout']);
    expect((await eventTypesOf(harness, created.id)).slice(-3)).toEqual([
      'payin.error',
      'payin.processing',
      'payin.completed',
    ]);
  });
});

describe('a cancel racing a deposit', () => {
  it('has exactly one outcome, whichever comes first', async () => {
    const outcomes: string[] = [];
    for (let round = 0; round < 4; round += 1) {
      const created = await createTransaction(parties);
      const [cancelled, deposited] = await Promise.all([
        cancel(created.id),
        parties.partner.api
          .post(`/v1/sandbox/transactions/${created.id}/deposit`)
          .send({ amount: created.sender.amount }),
      ]);
      expect(deposited.status).toBe(201);
      const final = await settlementHandle(harness, created.id).result();
      if (cancelled.status === 200) {
        expect(deposited.body).toMatchObject({ status: 'returning', return_reason: 'not_awaiting_deposit' });
        expect(final).toBe('cancelled');
        await returned(deposited.body.id);
        await expectInvariants(created.id, [deposited.body.id]);
        expect(await eventTypesOf(harness, created.id)).toEqual(['payin.created', 'payin.cancelled']);
      } else {
        expect(cancelled.status).toBe(422);
        expect(cancelled.body.error.code).toBe('payin_cannot_be_cancelled');
        expect(deposited.body.status).toBe('accepted');
        expect(final).toBe('completed');
        await expectInvariants(created.id);
      }
      outcomes.push(final);
    }
    expect(outcomes.every((outcome) => outcome === 'cancelled' || outcome === 'completed')).toBe(true);
  });
});

describe('a second deposit', () => {
  it('is returned once the transaction is funded, leaving it as it is', async () => {
    const created = await createTransaction(parties);
    await deposit(parties, created);
    expect(await settlementHandle(harness, created.id).result()).toBe('completed');
    await expectReturnedOnItsOwn(created, 'completed');
  });
});

describe('deposits reported by a bank integration (the production path)', () => {
  it('matches the reference, as a statement may write it, to its transaction; other credits are left alone', async () => {
    const created = await createTransaction(parties);
    const reference = created.sender_deposit_instructions.reference;
    const report = (text: string, amount = Money.parse('BRL', '1000.00')) =>
      receiveDepositByReference(harness.services, {
        provider: 'test-bank',
        providerReference: `E2E ${text} ${amount.toString()} ${created.id}`,
        reference: text,
        amount,
        senderName: 'João Pereira',
        receivedAt: new Date(),
      });
    expect(await report('TX0000000000')).toBeNull();
    expect(await report('not a reference')).toBeNull();
    expect(await report(reference, Money.parse('USD', '1000.00'))).toBeNull();
    const taken = await report(reference.toLowerCase().replace(/(.{4})/g, '$1 '));
    expect(taken).toMatchObject({ transaction_id: created.id, status: 'accepted', sender_name: 'João Pereira' });
    expect(await settlementHandle(harness, created.id).result()).toBe('completed');
    await expectInvariants(created.id);
  });
});
