// Virtual accounts in production (SPEC 3.2): under_review with `{}` until an operator signals
// `virtualAccountDecision` (docs/operations.md has the command); reminders while nobody decides, and rejection
// when the review times out, with time skipping. Every test decides the accounts it opens, so that
// skipping time in one test does not decide another's.
import { isValidIBAN } from 'ibantools';
import { loadConfig } from '../src/config';
import { bankProfilesSchema, sandboxBankProfiles } from '../src/providers/deposit-accounts';
import { findVirtualAccountByDepositReference } from '../src/persistence/virtual-accounts';
import { workflowIds } from '../src/temporal/workflow-ids';
import {
  virtualAccountDecisionUpdate,
  virtualAccountStateQuery,
  virtualAccountWorkflow,
} from '../workflows/virtual-account';
import { approvedCustomer, createWallet, virtualAccountBody, WalletBody } from './support/accounts';
import { eventually } from './support/eventually';
import { CustomerBody, individualCustomer } from './support/fixtures';
import {
  Harness,
  productionTestBanks,
  productionTestSecrets,
  startHarness,
  TestPartner,
  workerOnTaskQueue,
} from './support/harness';

const REMINDER_HOURS = 24;
const TIMEOUT_DAYS = 5;
let harness: Harness;
let partner: TestPartner;
let customer: CustomerBody;
let wallet: WalletBody;

beforeAll(async () => {
  harness = await startHarness({
    APP_ENV: 'production',
    VIRTUAL_ACCOUNT_REVIEW_REMINDER_HOURS: String(REMINDER_HOURS),
    VIRTUAL_ACCOUNT_REVIEW_TIMEOUT_DAYS: String(TIMEOUT_DAYS),
  });
  partner = await harness.createPartner();
  customer = await approvedCustomer(harness, partner.api);
  wallet = await createWallet(partner.api, customer.id, 'solana');
});
afterAll(() => harness?.teardown());

const handleOf = (id: string) => harness.env.client.workflow.getHandle(workflowIds.virtualAccount(id));
const getAccount = async (id: string) => (await partner.api.get(`/v1/virtual-accounts/${id}`)).body;
const eventTypesOf = async (id: string) =>
  (await harness.prisma.event.findMany({ where: { resourceId: id }, orderBy: { sequence: 'asc' } })).map(
    (event) => event.eventType,
  );

async function openAccount(overrides: Record<string, unknown> = {}) {
  const response = await partner.api
    .post('/v1/virtual-accounts')
    .send(virtualAccountBody(customer.id, wallet.id, overrides));
  expect(response.status).toBe(201);
  return response.body;
}

it('creates accounts under_review with empty deposit addresses and only the created event', async () => {
  const account = await openAccount();
  expect(account).toMatchObject({ status: 'under_review', deposit_addresses: {} });
  expect(await eventTypesOf(account.id)).toEqual(['virtual_account.created']);
  const handle = handleOf(account.id);
  expect(await handle.query(virtualAccountStateQuery)).toMatchObject({ status: 'under_review', remindersSent: 0 });
  expect((await handle.describe()).searchAttributes).toMatchObject({ ResourceStatus: ['under_review'] });
  expect(await harness.prisma.virtualAccountDeposit.count({ where: { virtualAccountId: account.id } })).toBe(0);

  await handle.executeUpdate(virtualAccountDecisionUpdate, { args: [{ outcome: 'rejected', reason: 'test cleanup' }] });
  expect(await handle.result()).toBe('rejected');
});

it('approves on the operator’s signal: deposit details from the production bank, event with the full account', async () => {
  const account = await openAccount({ sender: { currency: 'EUR' }, accepts_third_party_payments: true });
  const handle = handleOf(account.id);
  // A malformed decision is refused with its reason; the valid one applies, and a second one is refused.
  await expect(
    handle.executeUpdate(virtualAccountDecisionUpdate, { args: [{ outcome: 'maybe' } as never] }),
  ).rejects.toMatchObject({ cause: { type: 'InvalidVirtualAccountDecision' } });
  expect(await handle.executeUpdate(virtualAccountDecisionUpdate, { args: [{ outcome: 'approved' }] })).toBe(
    'approved',
  );
  expect(await handle.result()).toBe('approved');

  const approved = await getAccount(account.id);
  expect(approved.status).toBe('approved');
  expect(approved.accepts_third_party_payments).toBe(true);
  expect(approved.deposit_addresses).toEqual({
    sepa: {
      iban: expect.stringMatching(/^DE\d{2}50010517\d{10}$/),
      bic: productionTestBanks.eur.bic,
      bank_name: 'Production Test Bank Europe',
      bank_address: productionTestBanks.eur.bank_address,
      beneficiary_name: 'Ana Souza',
    },
  });
  expect(isValidIBAN(approved.deposit_addresses.sepa.iban)).toBe(true);
  expect(new Date(approved.updated_at).getTime()).toBeGreaterThan(new Date(account.created_at).getTime());
  const events = await harness.prisma.event.findMany({
    where: { resourceId: account.id },
    orderBy: { sequence: 'asc' },
  });
  expect(events.map((event) => [event.eventType, event.resourceStatus])).toEqual([
    ['virtual_account.created', 'under_review'],
    ['virtual_account.approved', 'approved'],
  ]);
  expect(events[0]!.resource).toEqual(account);
  expect(events[1]!.resource).toEqual(approved);
  expect(
    (
      await findVirtualAccountByDepositReference(harness.prisma, {
        rail: 'sepa',
        identifier: approved.deposit_addresses.sepa.iban,
      })
    )?.id,
  ).toBe(account.id);
  expect((await handle.describe()).searchAttributes).toMatchObject({ ResourceStatus: ['approved'] });

  const row = await harness.prisma.virtualAccount.findUniqueOrThrow({ where: { id: account.id } });
  expect(row.decidedAt).not.toBeNull();
  expect(row.rejectionReason).toBeNull();

  // The third-party allowance is taken by this approved account.
  const second = await partner.api
    .post('/v1/virtual-accounts')
    .send(
      virtualAccountBody(customer.id, wallet.id, { sender: { currency: 'EUR' }, accepts_third_party_payments: true }),
    );
  expect(second.status).toBe(422);
  expect(second.body.error.code).toBe('eur_virtual_account_3pp_exists');
});

it('rejects on the operator’s signal, which frees the third-party allowance', async () => {
  const other = await approvedCustomer(harness, partner.api, individualCustomer({ first_name: 'Bia' }));
  const otherWallet = await createWallet(partner.api, other.id, 'ethereum');
  const body = virtualAccountBody(other.id, otherWallet.id, {
    sender: { currency: 'EUR' },
    accepts_third_party_payments: true,
  });
  const account = (await partner.api.post('/v1/virtual-accounts').send(body)).body;
  // Under review, the account holds the allowance already.
  expect((await partner.api.post('/v1/virtual-accounts').send(body)).body.error.code).toBe(
    'eur_virtual_account_3pp_exists',
  );

  const handle = handleOf(account.id);
  await handle.executeUpdate(virtualAccountDecisionUpdate, {
    args: [{ outcome: 'rejected', reason: 'Sanctions screening hit' }],
  });
  expect(await handle.result()).toBe('rejected');
  const rejected = await getAccount(account.id);
  expect(rejected).toMatchObject({ status: 'rejected', deposit_addresses: {}, accepts_third_party_payments: true });
  expect(await eventTypesOf(account.id)).toEqual(['virtual_account.created', 'virtual_account.rejected']);
  const row = await harness.prisma.virtualAccount.findUniqueOrThrow({ where: { id: account.id } });
  expect(row.rejectionReason).toBe('Sanctions screening hit');

  const again = await partner.api.post('/v1/virtual-accounts').send(body);
  expect(again.status).toBe(201);
  await handleOf(again.body.id).executeUpdate(virtualAccountDecisionUpdate, { args: [{ outcome: 'approved' }] });
  expect(await handleOf(again.body.id).result()).toBe('approved');
});

it('reminds operators every day while undecided, and rejects when the review times out', async () => {
  const account = await openAccount({ name: 'Forgotten' });
  const handle = handleOf(account.id);
  const startedAt = (await handle.describe()).startTime.getTime();

  // Two and a half days: two reminders, still under review.
  await harness.env.sleep(`${2 * REMINDER_HOURS + 12} hours`);
  const waiting = await eventually(
    () => handle.query(virtualAccountStateQuery),
    (state) => state.remindersSent === 2,
  );
  expect(waiting).toEqual({
    status: 'under_review',
    remindersSent: 2,
    reviewDeadline: new Date(startedAt + TIMEOUT_DAYS * 86400_000).toISOString(),
  });
  expect((await harness.prisma.virtualAccount.findUniqueOrThrow({ where: { id: account.id } })).reviewReminders).toBe(
    2,
  );
  expect((await getAccount(account.id)).status).toBe('under_review');

  // Nobody decides: rejected at the deadline, with reason review_timeout.
  expect(await handle.result()).toBe('rejected');
  const closedAt = (await handle.describe()).closeTime as Date;
  expect(closedAt.getTime() - startedAt).toBeGreaterThanOrEqual(TIMEOUT_DAYS * 86400_000);
  const row = await harness.prisma.virtualAccount.findUniqueOrThrow({ where: { id: account.id } });
  expect(row).toMatchObject({
    status: 'rejected',
    rejectionReason: 'review_timeout',
    reviewReminders: TIMEOUT_DAYS - 1,
  });
  expect(await eventTypesOf(account.id)).toEqual(['virtual_account.created', 'virtual_account.rejected']);
});

it('approves within the deadline after reminders', async () => {
  const account = await openAccount({ name: 'Late but fine' });
  const handle = handleOf(account.id);
  await harness.env.sleep(`${3 * REMINDER_HOURS + 1} hours`);
  await eventually(
    () => handle.query(virtualAccountStateQuery),
    (state) => state.remindersSent === 3,
  );
  await handle.executeUpdate(virtualAccountDecisionUpdate, { args: [{ outcome: 'approved' }] });
  expect(await handle.result()).toBe('approved');
  const approved = await getAccount(account.id);
  expect(Object.keys(approved.deposit_addresses).sort()).toEqual(['ach', 'swift', 'wire']);
  expect(approved.deposit_addresses.ach.bank_account_number).toMatch(/^5501\d{8}$/);
  expect(approved.deposit_addresses.ach.bank_name).toBe('Production Test Bank');
});

describe('configuration', () => {
  const base = {
    DATABASE_URL: 'postgresql://localhost/x',
    APP_ENV: 'production',
    SECRETS_ENCRYPTION_KEY: productionTestSecrets.SECRETS_ENCRYPTION_KEY,
  };
  const banks = JSON.stringify(productionTestBanks);

  it('requires a wallet key seed and the banks in production', () => {
    expect(() => loadConfig({ ...base, VIRTUAL_ACCOUNT_BANKS: banks })).toThrow(
      'WALLET_KEY_SEED is required in production',
    );
    expect(() => loadConfig({ ...base, WALLET_KEY_SEED: 'ab'.repeat(32) })).toThrow(
      'VIRTUAL_ACCOUNT_BANKS is required in production',
    );
    expect(() => loadConfig({ ...base, WALLET_KEY_SEED: 'ab'.repeat(8), VIRTUAL_ACCOUNT_BANKS: banks })).toThrow(
      'WALLET_KEY_SEED must be at least 64 hex digits',
    );
    const config = loadConfig({ ...base, WALLET_KEY_SEED: 'ab'.repeat(32), VIRTUAL_ACCOUNT_BANKS: banks });
    expect(config.virtualAccountBanks?.eur.bban_prefix).toBe('50010517');
    expect(loadConfig({ DATABASE_URL: base.DATABASE_URL, APP_ENV: 'sandbox' }).walletKeySeed).toBeNull(); // sandbox seed
    // No silent sandbox: the environment must be named.
    expect(() => loadConfig({ DATABASE_URL: base.DATABASE_URL })).toThrow('APP_ENV is required');
  });

  it('validates the banks: routing numbers, BICs and IBANs that can be issued', () => {
    expect(bankProfilesSchema.safeParse(sandboxBankProfiles).success).toBe(true);
    const broken = {
      usd: { ...productionTestBanks.usd, ach_routing_number: '123456789', bic: 'NOTABIC' },
      eur: { ...productionTestBanks.eur, iban_country: 'XX' },
    };
    expect(() =>
      loadConfig({ ...base, WALLET_KEY_SEED: 'ab'.repeat(32), VIRTUAL_ACCOUNT_BANKS: JSON.stringify(broken) }),
    ).toThrow(
      /VIRTUAL_ACCOUNT_BANKS usd.ach_routing_number must be a valid ABA routing number; usd.bic must be a BIC.*eur.bban_prefix cannot issue valid IBANs for XX/,
    );
    expect(() => loadConfig({ ...base, WALLET_KEY_SEED: 'ab'.repeat(32), VIRTUAL_ACCOUNT_BANKS: '{' })).toThrow(
      'VIRTUAL_ACCOUNT_BANKS must be JSON',
    );
  });
});

it('keeps a decision that reaches the workflow with its start (both in its first task)', async () => {
  // A busy worker takes the workflow's first task after the operator's decision has arrived: the update waits for
  // its handler, which runs inside setHandler, before the workflow reads its input. Made so here: the account's
  // workflow runs again on a task queue no worker polls until the decision is in.
  const account = await openAccount();
  const workflowId = workflowIds.virtualAccount(account.id);
  // Terminated once its first task is done: ended in the middle of one, the test server would keep time skipping
  // locked for the rest of the file.
  const original = harness.env.client.workflow.getHandle(workflowId);
  await eventually(
    async () => (await original.fetchHistory()).events!.some((event) => event.workflowTaskCompletedEventAttributes),
    (done) => done,
  );
  await original.terminate('the test starts it again');
  const taskQueue = `${harness.config.temporal.taskQueue}-decision-with-start`;
  const handle = await harness.env.client.workflow.start(virtualAccountWorkflow, {
    workflowId,
    taskQueue,
    args: [
      {
        virtualAccountId: account.id,
        partnerId: partner.partnerId,
        customerId: customer.id,
        status: 'under_review',
        review: harness.config.virtualAccountReview,
      },
    ],
  });
  const decided = handle.executeUpdate(virtualAccountDecisionUpdate, {
    args: [{ outcome: 'rejected', reason: 'decided before the first task' }],
  });
  await new Promise((resolve) => setTimeout(resolve, 500));
  const worker = await workerOnTaskQueue(harness, taskQueue);
  // Without the fix the update is never answered: fail in 30 s, not at the test's timeout.
  let timer: NodeJS.Timeout | undefined;
  const unanswered = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('the decision was not answered')), 30_000);
  });
  try {
    expect(await worker.runUntil(Promise.race([decided, unanswered]))).toBe('rejected');
  } finally {
    clearTimeout(timer);
  }
  expect(await handle.result()).toBe('rejected');
  const { events } = await handle.fetchHistory();
  const firstAccepted = events!.findIndex((event) => event.workflowExecutionUpdateAcceptedEventAttributes);
  const tasksBefore = events!.slice(0, firstAccepted).filter((event) => event.workflowTaskCompletedEventAttributes);
  expect(tasksBefore).toHaveLength(1); // the decision came with the start
  expect((await getAccount(account.id)).status).toBe('rejected');
  expect(await eventTypesOf(account.id)).toEqual(['virtual_account.created', 'virtual_account.rejected']);
});

describe('cancellation (PUT /v1/virtual-accounts/{id})', () => {
  const cancel = (id: string) => partner.api.put(`/v1/virtual-accounts/${id}`).send({ status: 'cancelled' });
  const remindersOf = async (id: string) =>
    (await harness.prisma.virtualAccount.findUniqueOrThrow({ where: { id } })).reviewReminders;

  it('cancels an account under review: the workflow stops reminding and ends cancelled', async () => {
    const account = await openAccount();
    const handle = handleOf(account.id);
    // One reminder, then the partner cancels.
    await harness.env.sleep(`${REMINDER_HOURS + 1} hours`);
    expect(
      await eventually(
        () => remindersOf(account.id),
        (count) => count === 1,
      ),
    ).toBe(1);
    const response = await cancel(account.id);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ...account, status: 'cancelled', updated_at: expect.any(String) });
    expect(await getAccount(account.id)).toEqual(response.body);
    expect(await handle.result()).toBe('cancelled');
    expect((await handle.describe()).searchAttributes).toMatchObject({ ResourceStatus: ['cancelled'] });
    const events = await harness.prisma.event.findMany({
      where: { resourceId: account.id },
      orderBy: { sequence: 'asc' },
    });
    expect(events.map((event) => [event.eventType, event.resourceStatus])).toEqual([
      ['virtual_account.created', 'under_review'],
      ['virtual_account.cancelled', 'cancelled'],
    ]);
    expect(events[1]?.resource).toEqual(response.body);
    // No more reminders, no timeout rejection, no decision.
    await harness.env.sleep(`${TIMEOUT_DAYS + 1} days`);
    expect(await remindersOf(account.id)).toBe(1);
    expect((await getAccount(account.id)).status).toBe('cancelled');
    await expect(
      handle.executeUpdate(virtualAccountDecisionUpdate, { args: [{ outcome: 'approved' }] }),
    ).rejects.toThrow();
    expect((await getAccount(account.id)).status).toBe('cancelled');
    expect(await eventTypesOf(account.id)).toEqual(['virtual_account.created', 'virtual_account.cancelled']);

    const again = await cancel(account.id);
    expect(again.status).toBe(422);
    expect(again.body.error).toEqual({
      code: 'virtual_account_cannot_be_cancelled',
      message: `Virtual account ${account.id} is cancelled; only an account under review or approved can be cancelled.`,
    });
  });

  it('cancels an approved account (its workflow completed at the decision); deposit details stop', async () => {
    // A customer of its own: the file's customer already holds its EUR third-party account.
    const holder = await approvedCustomer(harness, partner.api, individualCustomer({ first_name: 'Clara' }));
    const holderWallet = await createWallet(partner.api, holder.id, 'solana');
    const eurBody = virtualAccountBody(holder.id, holderWallet.id, {
      sender: { currency: 'EUR' },
      accepts_third_party_payments: true,
    });
    const account = (await partner.api.post('/v1/virtual-accounts').send(eurBody)).body;
    const handle = handleOf(account.id);
    await handle.executeUpdate(virtualAccountDecisionUpdate, { args: [{ outcome: 'approved' }] });
    expect(await handle.result()).toBe('approved');
    const approved = await getAccount(account.id);
    expect(approved.deposit_addresses.sepa.iban).toBeDefined();

    const response = await cancel(account.id);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      ...approved,
      status: 'cancelled',
      deposit_addresses: {},
      updated_at: expect.any(String),
    });
    expect(await eventTypesOf(account.id)).toEqual([
      'virtual_account.created',
      'virtual_account.approved',
      'virtual_account.cancelled',
    ]);
    // The details still lead to the account (so a late deposit can be returned), which now says cancelled.
    const found = await findVirtualAccountByDepositReference(harness.prisma, {
      rail: 'sepa',
      identifier: approved.deposit_addresses.sepa.iban,
    });
    expect(found?.status).toBe('cancelled');
    // A cancelled EUR account no longer holds the customer's one third-party allowance.
    const next = await partner.api.post('/v1/virtual-accounts').send(eurBody);
    expect(next.status).toBe(201);
    await handleOf(next.body.id).executeUpdate(virtualAccountDecisionUpdate, { args: [{ outcome: 'rejected' }] });
  });

  it('refuses to cancel a rejected account, changing nothing', async () => {
    const account = await openAccount();
    const handle = handleOf(account.id);
    await handle.executeUpdate(virtualAccountDecisionUpdate, { args: [{ outcome: 'rejected', reason: 'test' }] });
    expect(await handle.result()).toBe('rejected');
    const rejected = await getAccount(account.id);
    const response = await cancel(account.id);
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('virtual_account_cannot_be_cancelled');
    expect(response.body.error.message).toContain('is rejected');
    expect(await getAccount(account.id)).toEqual(rejected);
    expect(await eventTypesOf(account.id)).toEqual(['virtual_account.created', 'virtual_account.rejected']);
  });

  it('a decision after the cancellation is refused by the workflow’s validator while it is still running', async () => {
    const account = await openAccount();
    const handle = handleOf(account.id);
    const [cancelled, decision] = await Promise.allSettled([
      cancel(account.id),
      handle.executeUpdate(virtualAccountDecisionUpdate, { args: [{ outcome: 'approved' }] }),
    ]);
    // Exactly one outcome: either the decision came first (approved, then cancelled by the API) or the cancellation.
    expect(cancelled.status).toBe('fulfilled');
    expect((cancelled as PromiseFulfilledResult<{ status: number }>).value.status).toBe(200);
    expect((await getAccount(account.id)).status).toBe('cancelled');
    const types = await eventTypesOf(account.id);
    expect(types).toEqual(
      decision.status === 'fulfilled'
        ? ['virtual_account.created', 'virtual_account.approved', 'virtual_account.cancelled']
        : ['virtual_account.created', 'virtual_account.cancelled'],
    );
  });
});
