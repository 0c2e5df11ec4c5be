// Settlement of fiat-to-fiat transactions, path by path (time skipping): completed, cancelled, deadline
// passed, payout rejected and refunded, wrong amount, error then an operator's retry or refund, a
// cancel racing a deposit, late deposits; the ledger invariants after each, and the workflow's
// children, search attributes and query.
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { workflowIds } from '../src/temporal/workflow-ids';
import { resolveErrorUpdate, settlementStateQuery } from '../workflows/settlement';
import { Harness, startHarness } from './support/harness';
import {
  createTransaction,
  deposit,
  eventTypesOf,
  expectLedgerInvariants,
  ledgerOf,
  Parties,
  setUpParties,
  settlementHandle,
  TransactionBody,
  waitForStatus,
} from './support/transactions';

let harness: Harness;
let parties: Parties;

beforeAll(async () => {
  harness = await startHarness();
  parties = await setUpParties(harness);
});
afterAll(() => harness?.teardown());

const get = async (id: string): Promise<TransactionBody> => {
  const response = await parties.partner.api.get(`/v1/transactions/${id}`);
  expect(response.status).toBe(200);
  return response.body as TransactionBody;
};

async function expectInvariants(id: string, depositIds: string[] = []) {
  const transaction = await get(id);
  const ledger = await ledgerOf(harness, id, depositIds);
  expectLedgerInvariants(ledger, transaction, parties.partner.partnerId, parties.wallet.id);
  return { transaction, ledger };
}

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
    for (const leg of ['fiat-to-stablecoin', 'stablecoin-to-fiat'] as const) {
      const child = harness.env.client.workflow.getHandle(workflowIds.transactionLeg(created.id, leg));
      expect((await child.describe()).status.name).toBe('COMPLETED');
    }
  });
});
