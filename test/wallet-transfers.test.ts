// Wallet transfers (SPEC 1: no quote) and wallet balances, over HTTP with time skipping: sandbox
// funding, internal and external transfers to completion with their events delivered to a real
// receiver, the failure paths with the balance restored, every refusal with nothing created, the
// concurrency of transfers from one wallet, idempotent steps, and the ledger after each path.
import { randomBytes } from 'node:crypto';
import { base58 } from '@scure/base';
import { Client } from 'pg';
import { createActivities } from '../activities';
import { Decimal } from '../src/domain/money';
import { createProviders } from '../src/providers';
import { walletTransferSchema } from '../src/schemas/wallet-transfers';
import { workflowIds } from '../src/temporal/workflow-ids';
import { recheckSendUpdate, sendOutcomeUnknownQuery } from '../workflows/wallet-transfer';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { approvedCustomer, createWallet, WalletBody } from './support/accounts';
import type { CustomerBody } from './support/fixtures';
import { Harness, startHarness, TestPartner } from './support/harness';
import { WebhookReceiver } from './support/webhook-receiver';
import { configureWebhooks, verifiesWithStandardWebhooks } from './support/webhooks';

let harness: Harness;
let partner: TestPartner;
let customer: CustomerBody;
let receiver: WebhookReceiver;
let secret: string;

beforeAll(async () => {
  harness = await startHarness();
  partner = await harness.createPartner();
  customer = await approvedCustomer(harness, partner.api);
  receiver = await WebhookReceiver.start();
  ({ secret } = await configureWebhooks(partner, receiver.url, [
    'walletTransfer.created',
    'walletTransfer.completed',
    'walletTransfer.failed',
  ]));
});
afterAll(async () => {
  await receiver?.close();
  await harness?.teardown();
});

interface TransferBody {
  id: string;
  status: string;
  amount: string;
  network_fee: string;
  tx_hash: string | null;
  failure_reason: string | null;
  from: { wallet_id: string; address: string };
  to: { wallet_id: string | null; address: string };
  [field: string]: unknown;
}

const solanaAddress = () => base58.encode(randomBytes(32));

async function fund(wallet: WalletBody, amount: string, currency = 'USDC') {
  const response = await partner.api.post(`/v1/sandbox/wallets/${wallet.id}/fund`).send({ currency, amount });
  expect(response.status).toBe(200);
  return response.body as WalletBody;
}

async function balanceOf(wallet: WalletBody, currency = 'USDC'): Promise<string> {
  const response = await partner.api.get(`/v1/wallets/${wallet.id}`);
  expect(response.status).toBe(200);
  return (response.body as WalletBody).balances.find((balance) => balance.currency === currency)?.amount as string;
}

async function transfer(body: Record<string, unknown>, api = partner.api) {
  return api.post('/v1/wallet-transfer').send({ currency: 'USDC', ...body });
}

async function created(body: Record<string, unknown>): Promise<TransferBody> {
  const response = await transfer(body);
  if (response.status !== 201) throw new Error(`transfer failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as TransferBody;
}

const handleOf = (id: string) => harness.env.client.workflow.getHandle(workflowIds.walletTransfer(id));
const get = async (id: string) => (await partner.api.get(`/v1/wallet-transfers/${id}`)).body as TransferBody;
const eventTypesOf = async (id: string) =>
  (await harness.prisma.event.findMany({ where: { resourceId: id }, orderBy: { sequence: 'asc' } })).map(
    (event) => event.eventType,
  );

/** Net per account over one transfer's postings; every posting balanced. */
async function ledgerOf(id: string) {
  const postings = await harness.prisma.ledgerTransaction.findMany({
    where: { reference: { startsWith: `wallet-transfer:${id}:` } },
    include: { entries: { include: { account: true } } },
    orderBy: { createdAt: 'asc' },
  });
  const net: Record<string, string> = {};
  for (const posting of postings) {
    const total = posting.entries.reduce((sum, entry) => sum.plus(entry.amount.toString()), new Decimal(0));
    expect(total.isZero()).toBe(true);
    for (const entry of posting.entries) {
      const name = `${entry.account.systemCode ?? `wallet:${entry.account.walletId}`}:${entry.currency}`;
      net[name] = new Decimal(net[name] ?? 0).plus(entry.amount.toString()).toFixed();
    }
  }
  return { steps: postings.map((posting) => posting.reference.split(':')[2]), net };
}

/**
 * Every running balance of this file's wallets (theirs, in transit, held) equals the sum of its entries and is never
 * negative; every posting of a transfer or a funding balances. Other files' accounts are theirs to check: one of
 * them tampers with a balance for a moment on purpose (test/reconciliation.test.ts).
 */
async function expectLedgerInvariants() {
  const drift = await harness.prisma.$queryRaw<Array<{ id: string }>>`
    SELECT a.id::text FROM ledger_accounts a
    JOIN wallets w ON w.id = a.wallet_id OR a.system_code LIKE '%:' || w.id::text
    LEFT JOIN ledger_entries e ON e.account_id = a.id
    WHERE a.balance IS NOT NULL AND w.partner_id = ANY(${[...harness.partnerIds]}::uuid[])
    GROUP BY a.id, a.balance HAVING a.balance <> COALESCE(SUM(e.amount), 0) OR a.balance < 0`;
  expect(drift).toEqual([]);
  const unbalanced = await harness.prisma.$queryRaw<Array<{ reference: string }>>`
    SELECT t.reference FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
    WHERE t.reference LIKE 'wallet-transfer:%' OR t.reference LIKE 'sandbox-funding:%'
    GROUP BY t.reference, e.currency HAVING SUM(e.amount) <> 0`;
  expect(unbalanced).toEqual([]);
}

describe('balances and sandbox funding', () => {
  it('shows per-stablecoin balances from the ledger on the wallet and in the list; funding adds to them', async () => {
    const wallet = await createWallet(partner.api, customer.id, 'solana', 'Funded');
    expect(wallet.balances).toEqual([
      { currency: 'USDC', amount: '0.000000' },
      { currency: 'USDT', amount: '0.000000' },
    ]);
    const funded = await fund(wallet, '100.5');
    expect(funded.balances).toEqual([
      { currency: 'USDC', amount: '100.500000' },
      { currency: 'USDT', amount: '0.000000' },
    ]);
    await fund(wallet, '7.123456', 'USDT');
    expect((await partner.api.get(`/v1/wallets/${wallet.id}`)).body.balances).toEqual([
      { currency: 'USDC', amount: '100.500000' },
      { currency: 'USDT', amount: '7.123456' },
    ]);
    const list = await partner.api.get('/v1/wallets').query({ customer_id: customer.id, limit: 100 });
    expect(list.body.items.find((item: WalletBody) => item.id === wallet.id).balances).toEqual([
      { currency: 'USDC', amount: '100.500000' },
      { currency: 'USDT', amount: '7.123456' },
    ]);
    await expectLedgerInvariants();
  });

  it('refuses bad funding requests and other partners’ wallets, changing nothing', async () => {
    const wallet = await createWallet(partner.api, customer.id, 'solana', 'Unfunded');
    const tooPrecise = await partner.api
      .post(`/v1/sandbox/wallets/${wallet.id}/fund`)
      .send({ currency: 'USDC', amount: '1.1234567' });
    expect(tooPrecise.status).toBe(400);
    expect(tooPrecise.body.error.details).toEqual([expect.objectContaining({ param: 'amount' })]);
    const fiat = await partner.api.post(`/v1/sandbox/wallets/${wallet.id}/fund`).send({ currency: 'BRL', amount: '1' });
    expect(fiat.status).toBe(400);
    const other = await harness.createPartner('Other');
    const foreign = await other.api
      .post(`/v1/sandbox/wallets/${wallet.id}/fund`)
      .send({ currency: 'USDC', amount: '1' });
    expect(foreign.status).toBe(404);
    expect(await balanceOf(wallet)).toBe('0.000000');
  });
});

describe('internal transfer', () => {
  it('moves the amount between two of the partner’s wallets, free, with both events delivered', async () => {
    const from = await createWallet(partner.api, customer.id, 'solana', 'From');
    const to = await createWallet(partner.api, customer.id, 'solana', 'To');
    await fund(from, '100');
    const pending = await created({ from_wallet_id: from.id, to_wallet_id: to.id, amount: '25.5' });
    expect(pending).toEqual({
      id: expect.any(String),
      customer_id: customer.id,
      status: 'pending',
      from: { wallet_id: from.id, address: from.address },
      to: { wallet_id: to.id, address: to.address },
      chain: 'solana',
      currency: 'USDC',
      amount: '25.500000',
      network_fee: '0.000000',
      tx_hash: null,
      failure_reason: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    // Held at once: the source can no longer spend it.
    expect(await balanceOf(from)).toBe('74.500000');

    const handle = handleOf(pending.id);
    expect(await handle.result()).toBe('completed');
    const done = await get(pending.id);
    expect(done).toEqual({
      ...pending,
      status: 'completed',
      tx_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      updated_at: expect.any(String),
    });
    expect(await balanceOf(from)).toBe('74.500000');
    expect(await balanceOf(to)).toBe('25.500000');
    expect(await eventTypesOf(pending.id)).toEqual(['walletTransfer.created', 'walletTransfer.completed']);
    expect((await handle.describe()).searchAttributes).toMatchObject({
      PartnerId: [partner.partnerId],
      CustomerId: [customer.id],
      ResourceId: [pending.id],
      ResourceStatus: ['completed'],
    });

    const ledger = await ledgerOf(pending.id);
    expect(ledger.steps).toEqual(['hold', 'delivered']);
    expect(ledger.net).toEqual({
      [`wallet:${from.id}:USDC`]: '-25.5',
      [`wallet:${to.id}:USDC`]: '25.5',
      [`wallet_transfer_holds:${from.id}:USDC`]: '0',
    });
    await expectLedgerInvariants();

    const received = await receiver.waitFor(
      (requests) => requests.filter((r) => r.body.event_resource_id === pending.id).length >= 2,
      'the two transfer events',
    );
    const mine = received.filter((r) => r.body.event_resource_id === pending.id);
    expect(mine.map((r) => [r.body.event, r.body.event_type, r.body.event_resource_status])).toEqual([
      ['walletTransfer', 'walletTransfer.created', 'pending'],
      ['walletTransfer', 'walletTransfer.completed', 'completed'],
    ]);
    for (const delivered of mine) expect(verifiesWithStandardWebhooks(delivered, secret)).toBe(true);
    expect(mine[0]?.body.event_resource).toEqual(pending);
    expect(mine[1]?.body.event_resource).toEqual(done);
  });

  it('treats the address of one of the partner’s wallets as that wallet', async () => {
    const from = await createWallet(partner.api, customer.id, 'ethereum', 'From eth');
    const to = await createWallet(partner.api, customer.id, 'ethereum', 'To eth');
    await fund(from, '10');
    const pending = await created({ from_wallet_id: from.id, to_address: to.address.toLowerCase(), amount: '10' });
    expect(pending.to).toEqual({ wallet_id: to.id, address: to.address });
    expect(pending.network_fee).toBe('0.000000');
    expect(await handleOf(pending.id).result()).toBe('completed');
    expect((await get(pending.id)).tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await balanceOf(from)).toBe('0.000000');
    expect(await balanceOf(to)).toBe('10.000000');
    await expectLedgerInvariants();
  });
});

describe('external transfer', () => {
  it('sends to an outside address, charging the chain’s network fee on top', async () => {
    const from = await createWallet(partner.api, customer.id, 'solana', 'Payer');
    await fund(from, '20', 'USDT');
    const address = solanaAddress();
    const pending = await created({ from_wallet_id: from.id, to_address: address, amount: '10', currency: 'USDT' });
    expect(pending).toMatchObject({
      to: { wallet_id: null, address },
      amount: '10.000000',
      network_fee: '0.010000',
      currency: 'USDT',
    });
    expect(await balanceOf(from, 'USDT')).toBe('9.990000');
    expect(await handleOf(pending.id).result()).toBe('completed');
    const done = await get(pending.id);
    expect(done.status).toBe('completed');
    expect(await balanceOf(from, 'USDT')).toBe('9.990000');
    const ledger = await ledgerOf(pending.id);
    expect(ledger.net).toEqual({
      [`wallet:${from.id}:USDT`]: '-10.01',
      [`wallet_transfer_holds:${from.id}:USDT`]: '0',
      'settlement:USDT': '10',
      'network_fees:USDT': '0.01',
    });
    expect(await eventTypesOf(pending.id)).toEqual(['walletTransfer.created', 'walletTransfer.completed']);
    const received = await receiver.waitFor(
      (requests) => requests.filter((r) => r.body.event_resource_id === pending.id).length >= 2,
      'the external transfer events',
    );
    expect(received.filter((r) => r.body.event_resource_id === pending.id)[1]?.body.event_resource).toEqual(done);
    await expectLedgerInvariants();
  });

  it('charges ethereum’s fee on ethereum', async () => {
    const from = await createWallet(partner.api, customer.id, 'ethereum', 'Eth payer');
    await fund(from, '5');
    const other = await createWallet(partner.api, customer.id, 'ethereum', 'Not mine');
    // An address in one case is accepted and shown checksummed.
    const outside = '0x' + randomBytes(20).toString('hex');
    const pending = await created({ from_wallet_id: from.id, to_address: outside, amount: '3' });
    expect(pending.network_fee).toBe('1.000000');
    expect(pending.to.address.toLowerCase()).toBe(outside);
    expect(await balanceOf(from)).toBe('1.000000');
    expect(await handleOf(pending.id).result()).toBe('completed');
    expect(await balanceOf(other)).toBe('0.000000');
    await expectLedgerInvariants();
  });
});

describe('failure', () => {
  it.each([
    ['network_rejected', 'network_rejected'],
    ['network_unavailable', 'network_unavailable'],
  ])('simulate %s: fails and returns amount and fee to the source wallet', async (simulate, reason) => {
    const from = await createWallet(partner.api, customer.id, 'solana', `Failing ${simulate}`);
    await fund(from, '50');
    const pending = await created({ from_wallet_id: from.id, to_address: solanaAddress(), amount: '20', simulate });
    expect(await balanceOf(from)).toBe('29.990000');
    expect(await handleOf(pending.id).result()).toBe('failed');
    const failed = await get(pending.id);
    expect(failed).toEqual({ ...pending, status: 'failed', failure_reason: reason, updated_at: expect.any(String) });
    expect(await balanceOf(from)).toBe('50.000000');
    const ledger = await ledgerOf(pending.id);
    expect(ledger.steps).toEqual(['hold', 'returned']);
    for (const total of Object.values(ledger.net)) expect(new Decimal(total).isZero()).toBe(true);
    expect(await eventTypesOf(pending.id)).toEqual(['walletTransfer.created', 'walletTransfer.failed']);
    const received = await receiver.waitFor(
      (requests) => requests.filter((r) => r.body.event_resource_id === pending.id).length >= 2,
      'the failed transfer events',
    );
    const last = received.filter((r) => r.body.event_resource_id === pending.id)[1];
    expect(last?.body).toMatchObject({
      event_type: 'walletTransfer.failed',
      event_resource_status: 'failed',
      event_resource: failed,
    });
    await expectLedgerInvariants();
  });
});

describe('a chain that loses its answer (unknown outcomes)', () => {
  const sendsOf = (id: string) =>
    harness.prisma.sandboxRailOperation.findMany({ where: { idempotencyKey: `${id}:send` } });

  it('simulate send_timeout_after_broadcast: the chain, asked by the key, reports it sent: completed, sent once', async () => {
    const from = await createWallet(partner.api, customer.id, 'solana', 'Broadcast, answer lost');
    await fund(from, '50');
    const pending = await created({
      from_wallet_id: from.id,
      to_address: solanaAddress(),
      amount: '20',
      simulate: 'send_timeout_after_broadcast',
    });
    expect(await handleOf(pending.id).result()).toBe('completed');
    const completed = await get(pending.id);
    expect(completed).toMatchObject({ status: 'completed', failure_reason: null, tx_hash: expect.any(String) });
    expect(await balanceOf(from)).toBe('29.990000');
    expect((await ledgerOf(pending.id)).steps).toEqual(['hold', 'delivered']);
    const sends = await sendsOf(pending.id);
    // Every attempt asked the chain under the same key: one transfer on chain.
    expect(sends.map((send) => [send.kind, send.requests])).toEqual([['chain_send', 6]]);
    expect(await eventTypesOf(pending.id)).toEqual(['walletTransfer.created', 'walletTransfer.completed']);
    await expectLedgerInvariants();
  });

  it('simulate send_outcome_unknown: keeps the hold while the chain cannot say, until an operator’s recheck', async () => {
    const from = await createWallet(partner.api, customer.id, 'solana', 'Broadcast, outcome unknown');
    await fund(from, '50');
    const pending = await created({
      from_wallet_id: from.id,
      to_address: solanaAddress(),
      amount: '20',
      simulate: 'send_outcome_unknown',
    });
    const handle = handleOf(pending.id);
    await expect(handle.executeUpdate(recheckSendUpdate)).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
    for (let step = 0; step < 40 && !(await handle.query(sendOutcomeUnknownQuery)); step += 1) {
      await harness.env.sleep('10 minutes');
    }
    expect(await handle.query(sendOutcomeUnknownQuery)).toBe(true);
    expect((await handle.describe()).searchAttributes.ResourceStatus).toEqual(['outcome_unknown']);
    // Hours later, still processing and still held: never returned while it may have been sent.
    await harness.env.sleep('6 hours');
    expect(await get(pending.id)).toMatchObject({ status: 'processing', tx_hash: null });
    expect(await balanceOf(from)).toBe('29.990000');
    expect((await ledgerOf(pending.id)).steps).toEqual(['hold']);

    expect(await handle.executeUpdate(recheckSendUpdate)).toBe('rechecking');
    expect(await handle.result()).toBe('completed');
    expect(await balanceOf(from)).toBe('29.990000');
    expect((await ledgerOf(pending.id)).steps).toEqual(['hold', 'delivered']);
    expect((await sendsOf(pending.id)).length).toBe(1);
    expect(await eventTypesOf(pending.id)).toEqual(['walletTransfer.created', 'walletTransfer.completed']);
    await expectLedgerInvariants();
  });
});

describe('refusals', () => {
  let from: WalletBody;
  let to: WalletBody;
  let ethereum: WalletBody;

  beforeAll(async () => {
    from = await createWallet(partner.api, customer.id, 'solana', 'Refusals from');
    to = await createWallet(partner.api, customer.id, 'solana', 'Refusals to');
    ethereum = await createWallet(partner.api, customer.id, 'ethereum', 'Refusals eth');
    await fund(from, '10');
  });

  /** The refusal changed nothing: no transfer, no event, the balance as it was. */
  async function expectNothingCreated(run: () => Promise<{ status: number; body: any }>, status: number, code: string) {
    const before = await harness.prisma.walletTransfer.count({ where: { partnerId: partner.partnerId } });
    const events = await harness.prisma.event.count({ where: { partnerId: partner.partnerId } });
    const response = await run();
    expect(response.status).toBe(status);
    expect(response.body.error.code).toBe(code);
    expect(await harness.prisma.walletTransfer.count({ where: { partnerId: partner.partnerId } })).toBe(before);
    expect(await harness.prisma.event.count({ where: { partnerId: partner.partnerId } })).toBe(events);
    expect(await balanceOf(from)).toBe('10.000000');
    return response.body.error;
  }

  it('insufficient_funds when the balance does not cover amount + fee', async () => {
    const error = await expectNothingCreated(
      () => transfer({ from_wallet_id: from.id, to_address: solanaAddress(), amount: '10' }),
      422,
      'insufficient_funds',
    );
    expect(error.message).toBe(
      `Wallet ${from.id} holds 10.000000 USDC; this transfer needs 10.010000 (amount 10.000000 + network fee 0.010000).`,
    );
    await expectNothingCreated(
      () => transfer({ from_wallet_id: from.id, to_wallet_id: to.id, amount: '1', currency: 'USDT' }),
      422,
      'insufficient_funds',
    );
  });

  it('wallet_transfer_same_wallet, by id or by address', async () => {
    await expectNothingCreated(
      () => transfer({ from_wallet_id: from.id, to_wallet_id: from.id, amount: '1' }),
      422,
      'wallet_transfer_same_wallet',
    );
    await expectNothingCreated(
      () => transfer({ from_wallet_id: from.id, to_address: from.address, amount: '1' }),
      422,
      'wallet_transfer_same_wallet',
    );
  });

  it('wallet_transfer_chain_mismatch: a wallet or an address of another chain', async () => {
    await expectNothingCreated(
      () => transfer({ from_wallet_id: from.id, to_wallet_id: ethereum.id, amount: '1' }),
      422,
      'wallet_transfer_chain_mismatch',
    );
    await expectNothingCreated(
      () => transfer({ from_wallet_id: from.id, to_address: ethereum.address, amount: '1' }),
      422,
      'wallet_transfer_chain_mismatch',
    );
  });

  it('404 for wallets that are not the partner’s', async () => {
    const other = await harness.createPartner('Other');
    const otherCustomer = await approvedCustomer(harness, other.api);
    const theirs = await createWallet(other.api, otherCustomer.id, 'solana');
    await expectNothingCreated(
      () => transfer({ from_wallet_id: from.id, to_wallet_id: theirs.id, amount: '1' }),
      404,
      'not_found',
    );
    await expectNothingCreated(
      () => transfer({ from_wallet_id: from.id, to_wallet_id: 'nope', amount: '1' }),
      404,
      'not_found',
    );
    await expectNothingCreated(
      () => transfer({ from_wallet_id: from.id, to_wallet_id: to.id, amount: '1' }, other.api),
      404,
      'not_found',
    );
  });

  it.each([
    ['no destination', {}, 'to_wallet_id'],
    ['both destinations', { to_wallet_id: 'x', to_address: 'y' }, 'to_address'],
    ['a malformed address', { to_address: 'not-an-address' }, 'to_address'],
    [
      'a mixed-case address with a wrong checksum',
      { to_address: '0x52908400098527886E0F7030069857D2E4169Ee7' },
      'to_address',
    ],
    ['7 decimals', { to_wallet_id: 'TO', amount: '1.0000001' }, 'amount'],
    ['zero', { to_wallet_id: 'TO', amount: '0' }, 'amount'],
    ['a fiat currency', { to_wallet_id: 'TO', currency: 'BRL' }, 'currency'],
    ['an unknown simulation', { to_wallet_id: 'TO', simulate: 'explode' }, 'simulate'],
  ])('400 validation_error for %s, naming the parameter', async (_name, body, param) => {
    const request = { from_wallet_id: from.id, amount: '1', ...body } as Record<string, unknown>;
    if (request.to_wallet_id === 'TO') request.to_wallet_id = to.id;
    // The mixed-case address is an ethereum one: ask from the ethereum wallet (funded with nothing: still a 400 first).
    if (param === 'to_address' && String(request.to_address).startsWith('0x')) request.from_wallet_id = ethereum.id;
    const error = await expectNothingCreated(() => transfer(request), 400, 'validation_error');
    expect(error.details).toEqual(expect.arrayContaining([expect.objectContaining({ param })]));
  });
});

describe('concurrency', () => {
  it('10 concurrent transfers from one wallet: exactly the affordable ones succeed, the balance never below zero', async () => {
    const from = await createWallet(partner.api, customer.id, 'solana', 'Busy');
    const to = await createWallet(partner.api, customer.id, 'solana', 'Busy destination');
    await fund(from, '100');
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => transfer({ from_wallet_id: from.id, to_wallet_id: to.id, amount: '15' })),
    );
    const accepted = responses.filter((response) => response.status === 201);
    const refused = responses.filter((response) => response.status !== 201);
    expect(accepted).toHaveLength(6);
    expect(refused.map((response) => response.body.error.code)).toEqual(Array(4).fill('insufficient_funds'));
    expect(await balanceOf(from)).toBe('10.000000');
    for (const response of accepted) expect(await handleOf(response.body.id).result()).toBe('completed');
    expect(await balanceOf(from)).toBe('10.000000');
    expect(await balanceOf(to)).toBe('90.000000');
    expect(await harness.prisma.walletTransfer.count({ where: { fromWalletId: from.id } })).toBe(6);
    await expectLedgerInvariants();
  });

  it('an Idempotency-Key repeat answers the first transfer and holds the money once', async () => {
    const from = await createWallet(partner.api, customer.id, 'solana', 'Idempotent');
    const to = await createWallet(partner.api, customer.id, 'solana', 'Idempotent destination');
    await fund(from, '10');
    const send = () =>
      partner.api
        .post('/v1/wallet-transfer')
        .set('Idempotency-Key', `transfer-${from.id}`)
        .send({ from_wallet_id: from.id, to_wallet_id: to.id, currency: 'USDC', amount: '4' });
    const first = await send();
    const second = await send();
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(await harness.prisma.walletTransfer.count({ where: { fromWalletId: from.id } })).toBe(1);
    expect(await balanceOf(from)).toBe('6.000000');
    expect(await handleOf(first.body.id).result()).toBe('completed');
  });
});

describe('exactly once', () => {
  it('re-running every step of a finished transfer changes nothing (as after a worker killed anywhere)', async () => {
    const from = await createWallet(partner.api, customer.id, 'solana', 'Rerun');
    await fund(from, '10');
    const pending = await created({ from_wallet_id: from.id, to_address: solanaAddress(), amount: '2' });
    expect(await handleOf(pending.id).result()).toBe('completed');
    const done = await get(pending.id);
    const activities = createActivities({
      config: harness.config,
      prisma: harness.prisma,
      logger: harness.services.logger,
      ...createProviders(harness.config, harness.prisma),
    });
    expect(await activities.startWalletTransfer(pending.id)).toBe('completed');
    const sent = await activities.sendWalletTransfer(pending.id);
    expect(sent).toEqual({ status: 'sent', txHash: done.tx_hash });
    expect(await activities.completeWalletTransfer(pending.id, sent.status === 'sent' ? sent.txHash : '')).toBe(
      'completed',
    );
    expect(await activities.failWalletTransfer(pending.id, 'network_rejected')).toBe('completed');
    expect(await get(pending.id)).toEqual(done);
    expect((await ledgerOf(pending.id)).steps).toEqual(['hold', 'delivered']);
    expect(await eventTypesOf(pending.id)).toEqual(['walletTransfer.created', 'walletTransfer.completed']);
    expect(await balanceOf(from)).toBe('7.990000');
    await expectLedgerInvariants();
  });

  it('a step that waits on a lock for longer than Prisma’s default transaction timeout (5 s) still commits', async () => {
    // Money steps run within the project's bounds (transactionOptions), not Prisma's defaults: a step that
    // waited its turn on a busy row would otherwise fail after 5 s and go round its retries.
    const from = await createWallet(partner.api, customer.id, 'solana', 'Busy row');
    await fund(from, '10');
    const pending = await created({ from_wallet_id: from.id, to_address: solanaAddress(), amount: '2' });
    expect(await handleOf(pending.id).result()).toBe('completed');
    const activities = createActivities({
      config: harness.config,
      prisma: harness.prisma,
      logger: harness.services.logger,
      ...createProviders(harness.config, harness.prisma),
    });
    const holder = new Client({ connectionString: harness.config.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM wallet_transfers WHERE id = $1::uuid FOR UPDATE', [pending.id]);
      const released = new Promise((resolve) => setTimeout(resolve, 6_000)).then(() => holder.query('ROLLBACK'));
      const startedAt = Date.now();
      // A finished transfer: the step takes the row's lock, sees there is nothing to do, and commits.
      expect(await activities.failWalletTransfer(pending.id, 'network_rejected')).toBe('completed');
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(5_500);
      await released;
    } finally {
      await holder.end();
    }
  });
});

describe('reading', () => {
  it('gets and lists the partner’s transfers (by wallet and status), 404 for others’', async () => {
    const from = await createWallet(partner.api, customer.id, 'solana', 'Listed');
    const to = await createWallet(partner.api, customer.id, 'solana', 'Listed destination');
    await fund(from, '10');
    const first = await created({ from_wallet_id: from.id, to_wallet_id: to.id, amount: '1' });
    const second = await created({
      from_wallet_id: from.id,
      to_address: solanaAddress(),
      amount: '1',
      simulate: 'network_rejected',
    });
    await handleOf(first.id).result();
    await handleOf(second.id).result();

    const page1 = await partner.api.get('/v1/wallet-transfers').query({ wallet_id: from.id, limit: 1 });
    expect(page1.status).toBe(200);
    expect(page1.body.items.map((item: TransferBody) => item.id)).toEqual([second.id]);
    const page2 = await partner.api
      .get('/v1/wallet-transfers')
      .query({ wallet_id: from.id, limit: 1, after: page1.body.cursor.after });
    expect(page2.body.items.map((item: TransferBody) => item.id)).toEqual([first.id]);
    expect(page2.body.cursor.after).toBeNull();
    const incoming = await partner.api.get('/v1/wallet-transfers').query({ wallet_id: to.id });
    expect(incoming.body.items.map((item: TransferBody) => item.id)).toEqual([first.id]);
    const failed = await partner.api.get('/v1/wallet-transfers').query({ wallet_id: from.id, status: 'failed' });
    expect(failed.body.items).toEqual([await get(second.id)]);

    const other = await harness.createPartner('Reader');
    expect((await other.api.get(`/v1/wallet-transfers/${first.id}`)).status).toBe(404);
    expect((await other.api.get('/v1/wallet-transfers').query({ wallet_id: from.id })).status).toBe(404);
    const theirs = await other.api.get('/v1/wallet-transfers');
    expect(theirs.body.items).toEqual([]);
  });
});

describe('POST /webhooks/mock', () => {
  it.each(['walletTransfer.created', 'walletTransfer.completed', 'walletTransfer.failed'])(
    '%s has exactly the shape of a real one',
    async (eventType) => {
      const response = await partner.api.post('/webhooks/mock').send({ event_type: eventType });
      expect(response.status).toBe(200);
      const mocked = response.body.event.event_resource;
      expect(walletTransferSchema.strict().safeParse(mocked).success).toBe(true);
      const real = (await harness.prisma.event.findFirstOrThrow({ where: { partnerId: partner.partnerId, eventType } }))
        .resource as Record<string, unknown>;
      // Same keys at every level and the same types (every nullable field of a transfer is a string or null).
      const shape = (value: unknown): unknown =>
        value === null
          ? 'string'
          : typeof value === 'object'
            ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, shape(v)]))
            : typeof value;
      expect(shape(mocked)).toEqual(shape(real));
    },
  );
});
