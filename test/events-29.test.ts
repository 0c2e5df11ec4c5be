// The 29 event types of SPEC 6, each produced by a real flow (HTTP API, sandbox controls, the operator's
// update, time skipping) and delivered to a real webhook receiver: signed (Standard Webhooks), with the SPEC
// payload, and `event_resource` the resource as GET shows it. The literal list below is the SPEC's, not the
// code's, so a type no flow produces fails the last test.
import { resolveErrorUpdate } from '../workflows/settlement';
import { virtualAccountDecisionUpdate } from '../workflows/virtual-account';
import { workflowIds } from '../src/temporal/workflow-ids';
import { approvedCustomer, createWallet, virtualAccountBody } from './support/accounts';
import { createCustomer, createExternalAccount, externalAccount, uploadIndividualDocuments } from './support/fixtures';
import { Harness, startHarness } from './support/harness';
import { createPayin, createPayout, fundWallet } from './support/payments';
import { deposit, Parties, setUpParties, settlementHandle, waitForStatus } from './support/transactions';
import { ReceivedWebhook, WebhookReceiver } from './support/webhook-receiver';
import { configureWebhooks, verifiesWithStandardWebhooks } from './support/webhooks';

/** SPEC 6, "Event types", group by group. */
const specEventTypes = [
  'payin.created',
  'payin.processing',
  'payin.completed',
  'payin.cancelled',
  'payin.failed',
  'payin.error',
  'payin.refunded',
  'payout.created',
  'payout.processing',
  'payout.completed',
  'payout.cancelled',
  'payout.failed',
  'payout.error',
  'payout.refunded',
  'walletTransfer.created',
  'walletTransfer.completed',
  'walletTransfer.failed',
  'customer.created',
  'customer.approved',
  'customer.under_review',
  'customer.rejected',
  'customer.partially_rejected',
  'external_account.created',
  'external_account.approved',
  'external_account.rejected',
  'virtual_account.created',
  'virtual_account.approved',
  'virtual_account.rejected',
  'virtual_account.cancelled',
] as const;
type SpecEventType = (typeof specEventTypes)[number];

let harness: Harness;
let parties: Parties;
let receiver: WebhookReceiver;
let secret: string;
/** A customer neither approved nor rejected: it may register accounts (the approved one already has this CLABE). */
let partiallyRejectedId: string;
/** The flow that produced each resource, for the report and the failure messages. */
const flowOf = new Map<string, string>();

beforeAll(async () => {
  harness = await startHarness();
  receiver = await WebhookReceiver.start();
  const partner = await harness.createPartner();
  ({ secret } = await configureWebhooks(partner, receiver.url, [...specEventTypes]));
  // customer.created, customer.under_review, customer.approved; external_account.created, external_account.approved.
  parties = await setUpParties(harness, partner);
  flowOf.set(parties.customer.id, 'customer verified (sandbox outcome approved)');
  flowOf.set(parties.externalAccountId, 'external account screened and approved');
});
afterAll(async () => {
  await receiver?.close();
  await harness?.teardown();
});

const api = () => parties.partner.api;
const cancelTransaction = (id: string) => api().put(`/v1/transactions/${id}`).send({ status: 'cancelled' });
const resolveError = (id: string, action: 'retry' | 'refund') =>
  settlementHandle(harness, id).executeUpdate(resolveErrorUpdate, { args: [{ action }] });
const solanaTxHash = '5'.repeat(88);

it('customer: rejected, and partially_rejected under review (sandbox outcomes)', async () => {
  const rejected = await createCustomer(api());
  await uploadIndividualDocuments(api(), rejected.id);
  // Under review (check), then the sandbox outcome decides: rejected.
  expect((await api().post(`/v1/customers/${rejected.id}/check`)).status).toBe(204);
  const decided = await api()
    .post(`/v1/sandbox/customers/${rejected.id}/verification-outcome`)
    .send({
      outcome: 'rejected',
      rejected_steps: [{ name: 'CUSTOMER_DATA', rejection_code: ['SANCTIONS_MATCH'], rejection_description: 'Listed' }],
    });
  expect([decided.status, decided.body.customer_status]).toEqual([200, 'rejected']);
  flowOf.set(rejected.id, 'customer under review, then sandbox outcome rejected');

  const partial = await createCustomer(api());
  await uploadIndividualDocuments(api(), partial.id);
  expect((await api().post(`/v1/customers/${partial.id}/check`)).status).toBe(204);
  const outcome = await api()
    .post(`/v1/sandbox/customers/${partial.id}/verification-outcome`)
    .send({
      outcome: 'partially_rejected',
      rejected_steps: [
        { name: 'PROOF_OF_ADDRESS', rejection_code: ['EXPIRED'], rejection_description: 'Older than 3 months' },
      ],
    });
  expect([outcome.status, outcome.body.customer_status]).toEqual([200, 'partially_rejected']);
  partiallyRejectedId = partial.id;
  flowOf.set(partial.id, 'customer under review, then sandbox outcome partially_rejected');
});

it('external account: rejected by screening (a sandbox deny-listed beneficiary)', async () => {
  const account = await createExternalAccount(
    api(),
    externalAccount(partiallyRejectedId, 'spei', { beneficiary_name: 'Sanctioned Person' }),
  );
  expect(account.status).toBe('rejected');
  flowOf.set(account.id, 'external account with a deny-listed beneficiary (rejected by screening)');
});

it('virtual account: created approved (sandbox), then cancelled; another rejected by its review (simulate)', async () => {
  const created = await api()
    .post('/v1/virtual-accounts')
    .send(virtualAccountBody(parties.customer.id, parties.wallet.id));
  expect([created.status, created.body.status]).toEqual([201, 'approved']);
  const cancelled = await api().put(`/v1/virtual-accounts/${created.body.id}`).send({ status: 'cancelled' });
  expect([cancelled.status, cancelled.body.status]).toEqual([200, 'cancelled']);
  flowOf.set(created.body.id, 'virtual account created (sandbox approves), cancelled with PUT');
  const rejected = await api()
    .post('/v1/virtual-accounts')
    .send({ ...virtualAccountBody(parties.customer.id, parties.wallet.id), simulate: 'rejected' });
  expect([rejected.status, rejected.body.status]).toEqual([201, 'under_review']);
  const review = harness.env.client.workflow.getHandle(workflowIds.virtualAccount(rejected.body.id));
  expect(await review.result()).toBe('rejected');
  flowOf.set(rejected.body.id, 'virtual account with the sandbox simulate "rejected" (the review rejects it)');
});

it('pay-ins: completed, cancelled, failed at the deadline, error then refunded by the operator', async () => {
  await fundWallet(harness, parties); // created, processing, completed
  const funding = await harness.prisma.transaction.findFirstOrThrow({
    where: { walletId: parties.wallet.id, type: 'payin', status: 'completed' },
  });
  flowOf.set(funding.id, 'pay-in, sandbox deposit, completed');

  const cancelled = await createPayin(parties);
  expect((await cancelTransaction(cancelled.id)).status).toBe(200);
  expect(await settlementHandle(harness, cancelled.id).result()).toBe('cancelled');
  flowOf.set(cancelled.id, 'pay-in cancelled with PUT while awaiting the deposit');

  const late = await createPayin(parties);
  expect(await settlementHandle(harness, late.id).result()).toBe('failed');
  flowOf.set(late.id, 'pay-in with no deposit by the deadline (time skipped)');

  const erring = await createPayin(parties);
  await deposit(parties, erring, { simulate: 'conversion_error' });
  await waitForStatus(harness, erring.id, 'error');
  expect(await resolveError(erring.id, 'refund')).toBe('refund');
  expect(await settlementHandle(harness, erring.id).result()).toBe('refunded');
  flowOf.set(erring.id, 'pay-in deposit with simulate conversion_error, operator refund');
});

it('payouts: from the wallet (error, operator retry, completed; rejected then refunded), cancelled, failed', async () => {
  const retried = await createPayout(parties, { simulate: 'payout_error' });
  await waitForStatus(harness, retried.id, 'error');
  expect(await resolveError(retried.id, 'retry')).toBe('retry');
  expect(await settlementHandle(harness, retried.id).result()).toBe('completed');
  flowOf.set(retried.id, 'payout from the wallet with simulate payout_error, operator retry, completed');

  const rejected = await createPayout(parties, { simulate: 'payout_rejected' });
  expect(await settlementHandle(harness, rejected.id).result()).toBe('refunded');
  flowOf.set(rejected.id, 'payout from the wallet with simulate payout_rejected, refunded to the wallet');

  const cancelled = await createPayout(parties, { wallet_id: undefined });
  expect(cancelled.status).toBe('awaiting_deposit');
  expect((await cancelTransaction(cancelled.id)).status).toBe(200);
  expect(await settlementHandle(harness, cancelled.id).result()).toBe('cancelled');
  flowOf.set(cancelled.id, 'payout without wallet cancelled with PUT while awaiting the stablecoin');

  const expired = await createPayout(parties, { wallet_id: undefined });
  expect(await settlementHandle(harness, expired.id).result()).toBe('failed');
  flowOf.set(expired.id, 'payout without wallet, no confirmation by the deadline (time skipped)');

  const confirmed = await createPayout(parties, { wallet_id: undefined });
  const confirm = await api().post('/v1/payout/confirm').send({ transaction_id: confirmed.id, tx_hash: solanaTxHash });
  expect(confirm.status).toBe(200);
  expect(await settlementHandle(harness, confirmed.id).result()).toBe('completed');
  flowOf.set(confirmed.id, 'payout without wallet, POST /v1/payout/confirm, completed');
});

it('wallet transfers: completed to another wallet, failed on the network (simulate network_rejected)', async () => {
  const to = await createWallet(api(), parties.customer.id, 'solana', 'Savings');
  const funded = await api()
    .post(`/v1/sandbox/wallets/${parties.wallet.id}/fund`)
    .send({ currency: 'USDC', amount: '100' });
  expect(funded.status).toBe(200);
  const transfer = (body: Record<string, unknown>) =>
    api()
      .post('/v1/wallet-transfer')
      .send({ currency: 'USDC', from_wallet_id: parties.wallet.id, amount: '10', ...body });
  const completed = await transfer({ to_wallet_id: to.id });
  expect(completed.status).toBe(201);
  const handle = (id: string) => harness.env.client.workflow.getHandle(workflowIds.walletTransfer(id));
  await handle(completed.body.id).result();
  flowOf.set(completed.body.id, 'wallet transfer to a wallet of the customer, completed');

  const failed = await transfer({ to_wallet_id: to.id, simulate: 'network_rejected' });
  expect(failed.status).toBe(201);
  await handle(failed.body.id).result();
  flowOf.set(failed.body.id, 'wallet transfer with simulate network_rejected, failed');
});

const getPathOf: Record<string, string> = {
  payin: '/v1/transactions',
  payout: '/v1/transactions',
  walletTransfer: '/v1/wallet-transfers',
  customer: '/v1/customers',
  external_account: '/v1/external-accounts',
  virtual_account: '/v1/virtual-accounts',
};

it('delivers every SPEC 6 type, signed, with the SPEC payload and the full resource', async () => {
  const produced = [...specEventTypes];
  const deliveredTypes = (requests: ReceivedWebhook[]) => new Set(requests.map((r) => String(r.body.event_type)));
  await receiver
    .waitFor((requests) => produced.every((type) => deliveredTypes(requests).has(type)), 'every produced type')
    .catch(() => undefined); // the assertion on the set below names what is missing
  const requests = [...receiver.requests];

  for (const type of produced) {
    // A type without deliveries fails the assertion on the set below, after the others were checked.
    const deliveries = requests.filter((request) => request.body.event_type === type);
    for (const delivery of deliveries) {
      const body = delivery.body as Record<string, any>;
      const context = `${type} of ${String(body.event_resource_id)} (${flowOf.get(body.event_resource_id) ?? '?'})`;
      expect({ context, signed: verifiesWithStandardWebhooks(delivery, secret) }).toEqual({ context, signed: true });
      expect({ context, keys: Object.keys(body).sort() }).toEqual({
        context,
        keys: [
          'event',
          'event_created_at',
          'event_id',
          'event_resource',
          'event_resource_id',
          'event_resource_status',
          'event_type',
        ],
      });
      expect(body.event).toBe(type.slice(0, type.indexOf('.')));
      expect(body.event_id).toBe(delivery.headers['webhook-id']);
      expect(new Date(body.event_created_at).toISOString()).toBe(body.event_created_at);
      expect(body.event_resource).toMatchObject({ id: body.event_resource_id, status: body.event_resource_status });
      const current = await api().get(`${getPathOf[body.event]}/${body.event_resource_id}`);
      expect(current.status).toBe(200);
      // The full resource: the same fields as GET returns (values are those at the time of the event).
      expect({ context, keys: Object.keys(body.event_resource).sort() }).toEqual({
        context,
        keys: Object.keys(current.body).sort(),
      });
      // The resource's last event carries the resource exactly as GET shows it now (nothing changed since).
      const later = requests.filter(
        (other) => other.body.event_resource_id === body.event_resource_id && other.receivedAt > delivery.receivedAt,
      );
      if (later.length === 0 && current.body.status === body.event_resource_status) {
        expect({ context, resource: body.event_resource }).toEqual({ context, resource: current.body });
      }
    }
  }

  // The SPEC's 29, exactly: a flow that stops producing a type fails here.
  expect(produced).toHaveLength(29);
  expect([...deliveredTypes(requests)].sort()).toEqual([...produced].sort());
});

describe('production: virtual_account.rejected by the operator carries the same payload', () => {
  let production: Harness;
  beforeAll(async () => {
    production = await startHarness({ APP_ENV: 'production' });
  });
  afterAll(() => production?.teardown());

  it('is emitted by the operator’s rejection with the SPEC payload and the full resource', async () => {
    const partner = await production.createPartner();
    const customer = await approvedCustomer(production, partner.api);
    const wallet = await createWallet(partner.api, customer.id, 'solana');
    const simulated = await partner.api
      .post('/v1/virtual-accounts')
      .send({ ...virtualAccountBody(customer.id, wallet.id), simulate: 'rejected' });
    expect([simulated.status, simulated.body.error?.details?.[0]?.param]).toEqual([400, 'simulate']);
    const opened = await partner.api.post('/v1/virtual-accounts').send(virtualAccountBody(customer.id, wallet.id));
    expect([opened.status, opened.body.status]).toEqual([201, 'under_review']);
    const handle = production.env.client.workflow.getHandle(workflowIds.virtualAccount(opened.body.id));
    await handle.executeUpdate(virtualAccountDecisionUpdate, { args: [{ outcome: 'rejected', reason: 'events-29' }] });
    expect(await handle.result()).toBe('rejected');

    const row = await production.prisma.event.findFirstOrThrow({
      where: { resourceId: opened.body.id, eventType: 'virtual_account.rejected' },
    });
    const event = (await partner.api.get(`/v1/events/${row.id}`)).body;
    const current = (await partner.api.get(`/v1/virtual-accounts/${opened.body.id}`)).body;
    expect(event).toEqual({
      event: 'virtual_account',
      event_id: row.id,
      event_type: 'virtual_account.rejected',
      event_resource_id: opened.body.id,
      event_resource_status: 'rejected',
      event_resource: current,
      event_created_at: expect.any(String),
    });
    expect(current.status).toBe('rejected');
  });
});
