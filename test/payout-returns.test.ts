// A payout the receiving bank returns after completion (issue 34): reported through the sandbox endpoint, recorded
// once (status `returned`, its event and webhook, the posting into fiat_clearing), refused when it cannot be a
// return, and the operator's decision on workflow payout-return-<id>: repay (paid out again, `completed`) or refund
// (a payout from a wallet: converted back and credited to the wallet, `refunded`).
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { Decimal } from '../src/domain/money';
import { postingOfProviderOperation, requiredTransactionSteps } from '../src/domain/reconciliation';
import { workflowIds } from '../src/temporal/workflow-ids';
import { listOperatorActions } from '../src/persistence/operator-actions';
import { payoutReturnStateQuery, resolvePayoutReturnUpdate } from '../workflows/payout-return';
import { Harness, startHarness } from './support/harness';
import { balanceOf, createPayin, createPayout, fundWallet } from './support/payments';
import {
  createTransaction,
  deposit,
  eventTypesOf,
  ledgerOf,
  Parties,
  setUpParties,
  settlementHandle,
  TransactionBody,
} from './support/transactions';
import { WebhookReceiver } from './support/webhook-receiver';
import { configureWebhooks } from './support/webhooks';

let harness: Harness;
let parties: Parties;
let receiver: WebhookReceiver;

beforeAll(async () => {
  harness = await startHarness();
  receiver = await WebhookReceiver.start();
  parties = await setUpParties(harness);
  await configureWebhooks(parties.partner, receiver.url, [
    'payin.returned',
    'payout.returned',
    'payin.completed',
    'payout.refunded',
  ]);
});
afterAll(async () => {
  await receiver?.close();
  await harness?.teardown();
});

const api = () => parties.partner.api;
const get = async (id: string) => (await api().get(`/v1/transactions/${id}`)).body as TransactionBody;
const reportReturn = (id: string, body: Record<string, unknown>) =>
  api().post(`/v1/sandbox/transactions/${id}/payout-return`).send(body);
const returnHandle = (id: string) => harness.env.client.workflow.getHandle(workflowIds.payoutReturn(id));
const decide = (id: string, decision: Record<string, unknown>) =>
  returnHandle(id).executeUpdate(resolvePayoutReturnUpdate, { args: [decision as never] });

/** The ApplicationFailure type an update was refused with. */
async function refusalOf(update: Promise<unknown>): Promise<string | undefined> {
  const error = await update.then(
    () => null,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (error as WorkflowUpdateFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  return (cause as ApplicationFailure).type ?? undefined;
}

async function completedFiatToFiat(): Promise<TransactionBody> {
  const created = await createTransaction(parties);
  await deposit(parties, created);
  expect(await settlementHandle(harness, created.id).result()).toBe('completed');
  return get(created.id);
}

async function operationsOf(id: string) {
  const operations = await harness.prisma.sandboxRailOperation.findMany({
    where: { idempotencyKey: { startsWith: `${id}:` } },
    orderBy: { createdAt: 'asc' },
  });
  return operations.map((operation) => ({
    key: operation.idempotencyKey.slice(id.length + 1),
    kind: operation.kind,
    amount: new Decimal(operation.amount.toString()).toFixed(),
    requests: operation.requests,
  }));
}

/** The one posting of a reference, its entries as `account:currency` -> amount. */
async function posting(reference: string): Promise<Record<string, string>> {
  const found = await harness.prisma.ledgerTransaction.findUniqueOrThrow({
    where: { reference },
    include: { entries: { include: { account: true } } },
  });
  return Object.fromEntries(
    found.entries.map((entry) => [
      `${entry.account.systemCode ?? `wallet:${entry.account.walletId}`}:${entry.currency}`,
      new Decimal(entry.amount.toString()).toFixed(),
    ]),
  );
}

describe('a completed fiat-to-fiat transaction returned by the receiving bank', () => {
  it('is returned once (event, webhook, posting into clearing), a repeat is a replay, and a repay completes it again', async () => {
    const completed = await completedFiatToFiat();
    const returned = new Decimal(completed.receiver.amount).minus('12.50').toFixed(2); // the banks kept charges
    const body = { amount: returned, reason_code: 'AC04', return_reference: `RTN-${completed.id.slice(0, 8)}` };

    const first = await reportReturn(completed.id, body);
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.any(String),
      transaction_id: completed.id,
      amount: returned,
      currency: 'MXN',
      reason_code: 'AC04',
      return_reference: body.return_reference,
      returned_at: expect.any(String),
      resolution: null,
    });
    expect(await get(completed.id)).toEqual({
      ...completed,
      status: 'returned',
      failure_reason: 'payout_returned',
      updated_at: expect.any(String),
    });

    // The event, and its webhook delivered like every other.
    expect(await eventTypesOf(harness, completed.id)).toEqual([
      'payin.created',
      'payin.processing',
      'payin.completed',
      'payin.returned',
    ]);
    const event = await harness.prisma.event.findFirstOrThrow({
      where: { resourceId: completed.id, eventType: 'payin.returned' },
    });
    expect(await harness.prisma.webhookDelivery.count({ where: { eventId: event.id } })).toBe(1);
    await receiver.waitFor(
      (requests) => requests.some((request) => request.body.event_id === event.id),
      'the payin.returned webhook',
    );

    // The money is back in clearing, from outside, in one balanced posting.
    expect(await posting(`transaction:${completed.id}:payout_returned`)).toEqual({
      'settlement:MXN': `-${returned}`,
      'fiat_clearing:MXN': returned,
    });
    const ledger = await ledgerOf(harness, completed.id);
    expect(ledger.balanced).toBe(true);
    expect(ledger.references).toEqual([
      'deposit',
      'fiat_to_stablecoin',
      'stablecoin_to_fiat',
      'payout',
      'payout_returned',
    ]);
    expect(new Decimal(ledger.net['fiat_clearing:MXN'] ?? 0).toFixed(2)).toBe(returned);
    // The simulated bank's log lists the return (a provider statement built from it includes it).
    expect(await operationsOf(completed.id)).toContainEqual({
      key: 'payout_return',
      kind: 'payout_return',
      amount: new Decimal(returned).toFixed(),
      requests: 1,
    });

    // The same report again: the first return, nothing written twice.
    const again = await reportReturn(completed.id, body);
    expect([again.status, again.body]).toEqual([201, first.body]);
    const conflicting = await reportReturn(completed.id, { ...body, amount: '1.00' });
    expect([conflicting.status, conflicting.body.error?.code]).toEqual([422, 'payout_return_reference_conflict']);
    const other = await reportReturn(completed.id, { ...body, return_reference: 'RTN-OTHER' });
    expect([other.status, other.body.error?.code]).toEqual([422, 'payout_return_not_allowed']);
    expect(await eventTypesOf(harness, completed.id)).toHaveLength(4);
    expect(
      (await ledgerOf(harness, completed.id)).references.filter((step) => step === 'payout_returned'),
    ).toHaveLength(1);
    expect(await harness.prisma.transactionPayoutReturn.count({ where: { transactionId: completed.id } })).toBe(1);

    // The operator decides: bad input and a refund (none for fiat to fiat) are refused; the workflow still waits.
    const handle = returnHandle(completed.id);
    expect(await refusalOf(decide(completed.id, { action: 'burn', reason: 'x' }))).toBe('InvalidPayoutReturnDecision');
    expect(await refusalOf(decide(completed.id, { action: 'repay' }))).toBe('InvalidPayoutReturnDecision');
    expect(await refusalOf(decide(completed.id, { action: 'refund', reason: 'sender asked' }))).toBe(
      'PayoutReturnRefundNotSupported',
    );
    expect(
      await refusalOf(
        decide(completed.id, {
          action: 'repay',
          reason: 'x',
          external_account_id: '00000000-0000-4000-8000-000000000000',
        }),
      ),
    ).toBe('RepayDestinationRefused');
    expect(await handle.query(payoutReturnStateQuery)).toMatchObject({ phase: 'returned', awaitingOperator: true });
    const description = await handle.describe();
    expect(description.searchAttributes).toMatchObject({ ResourceId: [completed.id], ResourceStatus: ['returned'] });

    // Repay: paid out again under a new key, through the rail, and completed again with clearing back to zero.
    expect(await decide(completed.id, { action: 'repay', reason: 'beneficiary fixed the account' })).toEqual({
      action: 'repay',
      accepted: true,
    });
    expect(await handle.result()).toBe('completed');
    expect(await get(completed.id)).toMatchObject({ status: 'completed', failure_reason: null });
    expect(await operationsOf(completed.id)).toEqual([
      { key: 'fiat_to_stablecoin', kind: 'conversion', amount: expect.any(String), requests: 1 },
      {
        key: 'stablecoin_to_fiat',
        kind: 'payout',
        amount: new Decimal(completed.receiver.amount).toFixed(),
        requests: 1,
      },
      { key: 'payout_return', kind: 'payout_return', amount: new Decimal(returned).toFixed(), requests: 1 },
      { key: 'repay:1', kind: 'payout', amount: new Decimal(returned).toFixed(), requests: 1 },
    ]);
    const after = await ledgerOf(harness, completed.id);
    expect(after.balanced).toBe(true);
    expect(after.references.slice(-2)).toEqual(['payout_returned', 'repaid']);
    expect(new Decimal(after.net['fiat_clearing:MXN'] ?? 0).toFixed()).toBe('0');
    // What left for outside in MXN: the first payout, less what came back, plus the repay.
    expect(new Decimal(after.net['settlement:MXN'] ?? 0).toFixed()).toBe(
      new Decimal(completed.receiver.amount).toFixed(),
    );
    expect((await eventTypesOf(harness, completed.id)).slice(-2)).toEqual(['payin.returned', 'payin.completed']);
    expect(
      await harness.prisma.transactionPayoutReturn.findUniqueOrThrow({ where: { transactionId: completed.id } }),
    ).toMatchObject({
      resolution: 'repaid',
      resolutionReason: 'beneficiary fixed the account',
    });
    // Decided once: a later decision finds no workflow waiting.
    await expect(decide(completed.id, { action: 'repay', reason: 'again' })).rejects.toThrow();
  });
});

describe('a completed payout from a wallet returned by the receiving bank', () => {
  it('is returned (payout.returned) and the operator’s refund gives the wallet the stablecoin back at the rate of the moment', async () => {
    await fundWallet(harness, parties);
    const payout = await createPayout(parties);
    expect(await settlementHandle(harness, payout.id).result()).toBe('completed');
    const completed = await get(payout.id);
    const before = await balanceOf(api(), parties.wallet.id);

    const reported = await reportReturn(payout.id, { amount: completed.receiver.amount, reason_code: 'MD07' });
    expect(reported.status).toBe(201);
    expect(reported.body).toMatchObject({ return_reference: `SANDBOX-RETURN-${payout.id}`, reason_code: 'MD07' });
    expect((await get(payout.id)).status).toBe('returned');
    expect((await eventTypesOf(harness, payout.id)).slice(-2)).toEqual(['payout.completed', 'payout.returned']);
    expect(await posting(`transaction:${payout.id}:payout_returned`)).toEqual({
      'settlement:MXN': `-${completed.receiver.amount}`,
      'fiat_clearing:MXN': completed.receiver.amount,
    });

    expect(
      await decide(payout.id, { action: 'refund', reason: 'beneficiary deceased', operator: 'omar@example.com' }),
    ).toEqual({
      action: 'refund',
      accepted: true,
    });
    expect(await returnHandle(payout.id).result()).toBe('refunded');
    // The audit trail names who sent the update as Temporal carries it (this client's identity), and keeps the name
    // typed into the decision beside it (docs/operations.md "Audit trail").
    expect(await listOperatorActions(harness.prisma, { resourceId: payout.id })).toMatchObject([
      {
        resourceType: 'transaction_payout_return',
        action: 'refund',
        operator: harness.env.client.options.identity,
        reason: 'beneficiary deceased',
        details: expect.objectContaining({ stated_operator: 'omar@example.com' }),
      },
    ]);
    expect(await get(payout.id)).toMatchObject({ status: 'refunded', failure_reason: 'payout_returned' });
    expect((await eventTypesOf(harness, payout.id)).slice(-2)).toEqual(['payout.returned', 'payout.refunded']);

    // The sandbox market's rate of the moment: MXN -> USDC at (1 / 17) less the 0.4% spread, rounded down.
    const rate = new Decimal(1).div(17).times(new Decimal(1).minus(new Decimal(40).div(10_000)));
    const stablecoin = new Decimal(completed.receiver.amount).times(rate).toDecimalPlaces(6, Decimal.ROUND_DOWN);
    expect(await posting(`transaction:${payout.id}:payout_return_refund`)).toEqual({
      'fiat_clearing:MXN': `-${completed.receiver.amount}`,
      'fx:MXN': completed.receiver.amount,
      'fx:USDC': stablecoin.neg().toFixed(),
      [`wallet:${parties.wallet.id}:USDC`]: stablecoin.toFixed(),
    });
    expect(await balanceOf(api(), parties.wallet.id)).toBe(new Decimal(before).plus(stablecoin).toFixed(6));
    const ledger = await ledgerOf(harness, payout.id);
    expect(ledger.balanced).toBe(true);
    expect(new Decimal(ledger.net['fiat_clearing:MXN'] ?? 0).toFixed()).toBe('0');
    expect(await operationsOf(payout.id)).toContainEqual({
      key: 'payout_return_refund',
      kind: 'conversion',
      amount: stablecoin.toFixed(),
      requests: 1,
    });
  });
});

describe('reports that cannot be a return', () => {
  it('are refused, and leave no trace: not completed, more than was paid out, a pay-in', async () => {
    const awaiting = await createTransaction(parties);
    const notCompleted = await reportReturn(awaiting.id, { amount: '10.00', reason_code: 'AC01' });
    expect([notCompleted.status, notCompleted.body.error?.code]).toEqual([422, 'payout_return_not_allowed']);
    expect(notCompleted.body.error.message).toContain('awaiting_deposit');

    const completed = await completedFiatToFiat();
    const tooMuch = await reportReturn(completed.id, {
      amount: new Decimal(completed.receiver.amount).plus('0.01').toFixed(2),
      reason_code: 'AC01',
    });
    expect([tooMuch.status, tooMuch.body.error?.code]).toEqual([422, 'return_amount_exceeds_payout']);
    const tooPrecise = await reportReturn(completed.id, { amount: '1.001', reason_code: 'AC01' });
    expect([tooPrecise.status, tooPrecise.body.error?.code]).toEqual([422, 'amount_too_precise']);
    const unknownReason = await reportReturn(completed.id, { amount: '1.00', reason_code: 'XX99' });
    expect(unknownReason.status).toBe(400);

    const payin = await createPayin(parties);
    await deposit(parties, payin);
    expect(await settlementHandle(harness, payin.id).result()).toBe('completed');
    const payinReturn = await reportReturn(payin.id, { amount: '1.00', reason_code: 'AC04' });
    expect([payinReturn.status, payinReturn.body.error?.code]).toEqual([422, 'payin_cannot_be_returned']);

    for (const id of [awaiting.id, completed.id, payin.id]) {
      expect(await harness.prisma.transactionPayoutReturn.count({ where: { transactionId: id } })).toBe(0);
      expect((await operationsOf(id)).filter((operation) => operation.kind === 'payout_return')).toEqual([]);
      expect((await eventTypesOf(harness, id)).filter((type) => type.endsWith('.returned'))).toEqual([]);
    }
    expect((await get(completed.id)).status).toBe('completed');
  });
});

describe('reconciliation of a returned payout (pure rules)', () => {
  it('matches the return, the repay and the refund’s conversion to their postings, and requires them once decided', () => {
    const id = '11111111-2222-4333-8444-555555555555';
    expect(postingOfProviderOperation(`${id}:payout_return`)?.reference).toBe(`transaction:${id}:payout_returned`);
    expect(postingOfProviderOperation(`${id}:repay:2`)?.reference).toBe(`transaction:${id}:repaid`);
    expect(postingOfProviderOperation(`${id}:payout_return_refund`)?.reference).toBe(
      `transaction:${id}:payout_return_refund`,
    );
    const returned = ['deposit', 'fiat_to_stablecoin', 'stablecoin_to_fiat', 'payout', 'payout_returned'];
    expect(
      requiredTransactionSteps({ type: 'fiat_to_fiat', status: 'completed', walletId: 'w', posted: returned }),
    ).toEqual([...returned, 'repaid']);
    expect(
      requiredTransactionSteps({
        type: 'payout',
        status: 'refunded',
        walletId: 'w',
        posted: ['funding', 'stablecoin_to_fiat', 'payout', 'payout_returned'],
      }),
    ).toEqual(['funding', 'stablecoin_to_fiat', 'payout', 'payout_returned', 'payout_return_refund']);
  });
});
