// Payout receivers screened right before the payout leaves (docs/screening.md "Payout receivers"): a potential match
// holds the payout (status still processing, event payout.held), its review waits for an operator's update; clear
// releases the payout (completed), confirm refunds it (refunded, receiver_sanctions_match), with the ledger balanced.
// The lists here are the EU list's format, a source no other test file loads into the shared table.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sendUpdate } from './support/updates';
import { Harness, startHarness } from './support/harness';
import { createActivities } from '../activities';
import { decideScreeningReviewUpdate, screeningReviewStateQuery } from '../workflows/screening';
import { screeningReviewWorkflowId } from '../src/domain/screening-review';
import { listScreenings, listVersionHistory } from '../src/persistence/screening';
import { listOperatorActions } from '../src/persistence/operator-actions';
import {
  createCustomer,
  createExternalAccount,
  externalAccount,
  individualCustomer,
  uploadIndividualDocuments,
} from './support/fixtures';
import { workflowIds } from '../src/temporal/workflow-ids';
import {
  eventTypesOf,
  ledgerOf,
  Parties,
  settlementHandle,
  setUpParties,
  TransactionBody,
} from './support/transactions';
import { balanceOf, createPayout, expectPaymentLedgerInvariants, fundWallet } from './support/payments';

const fixtures = path.join(__dirname, 'fixtures', 'sanctions');
const dir = mkdtempSync(path.join(os.tmpdir(), 'sanctions-payouts-'));
const euFile = path.join(dir, 'eu.xml');
// A run of its own: the shared database keeps earlier runs' versions, and the same bytes would be "unchanged".
const nonce = `${Date.now()}-${process.pid}`;
const baseEu = readFileSync(path.join(fixtures, 'eu-consolidated.xml'), 'utf8').replace(
  '<export ',
  `<!-- run ${nonce} -->\n<export `,
);
// A receiver no list names when its account is created; a later version of the list names it.
const receiver = 'Leopoldina Vandersnoot-Quarrington';
const euWithReceiver = baseEu.replace(
  '</export>',
  `  <sanctionEntity designationDetails="" unitedNationId="" euReferenceNumber="EU.9077.77" logicalId="887777">
    <regulation regulationType="regulation" organisationType="council" publicationDate="2026-11-25" numberTitle="2026/999" programme="RUS" logicalId="887778"/>
    <subjectType code="person" classificationCode="P"/>
    <nameAlias firstName="Leopoldina" middleName="" lastName="Vandersnoot-Quarrington" wholeName="${receiver}" function="" gender="F" title="" nameLanguage="" strong="true" regulationLanguage="en" logicalId="887779"/>
  </sanctionEntity>
</export>`,
);

let harness: Harness;
let parties: Parties;
let activities: ReturnType<typeof createActivities>;
let accountId: string;

beforeAll(async () => {
  writeFileSync(euFile, baseEu);
  harness = await startHarness({ SCREENING_LISTS: `eu=${euFile}`, SCREENING_KEEP_VERSIONS: '1' });
  activities = createActivities({ ...harness.services, config: harness.config } as never);
  expect((await activities.refreshScreeningList({ source: 'eu', url: euFile })).outcome).toBe('loaded');
  parties = await setUpParties(harness);
  await fundWallet(harness, parties, '1000.00');
  const account = await createExternalAccount(
    parties.partner.api,
    externalAccount(parties.customer.id, 'spei', { beneficiary_name: receiver, clabe: '002010077777777784' }),
  );
  expect(account.status).toBe('approved');
  accountId = account.id;
  // The list now names the account's holder: nothing re-screens the account here, the payout's own screening does.
  writeFileSync(euFile, euWithReceiver);
  expect((await activities.refreshScreeningList({ source: 'eu', url: euFile })).outcome).toBe('loaded');
});
afterAll(async () => {
  await harness?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

const reviewOf = (transactionId: string) =>
  harness.env.client.workflow.getHandle(screeningReviewWorkflowId(transactionId));

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const get = async (id: string): Promise<TransactionBody> =>
  (await parties.partner.api.get(`/v1/transactions/${id}`)).body as TransactionBody;

/** The payout held: its event written and its review open; nothing paid out yet. */
async function expectHeld(payout: TransactionBody, group: 'payout' | 'payin' = 'payout') {
  const events = await until(
    () => eventTypesOf(harness, payout.id),
    (types) => types.includes(`${group}.held`),
  );
  expect(events).toEqual([`${group}.created`, `${group}.held`]);
  const state = await until(
    () =>
      reviewOf(payout.id)
        .query(screeningReviewStateQuery)
        .catch(() => null),
    (value) => value?.state === 'open',
  );
  expect(state?.input).toMatchObject({ subjectType: 'payout', resourceId: payout.id, opening: 'payout' });
  expect((await get(payout.id)).status).toBe('processing');
  const held = await harness.prisma.event.findFirstOrThrow({
    where: { resourceId: payout.id, eventType: 'payout.held' },
  });
  expect(held.resourceStatus).toBe('processing');
  // Nothing left for the receiver: no payout leg was opened.
  const legs = await harness.prisma.transactionLeg.findMany({ where: { transactionId: payout.id } });
  expect(legs.map((leg) => leg.kind)).not.toContain('stablecoin_to_fiat');
}

describe('payout receivers', () => {
  it('holds a payout whose receiver a newer list names; cleared, it completes, and the next payout is not held', async () => {
    const before = await balanceOf(parties.partner.api, parties.wallet.id);
    const payout = await createPayout(parties, { external_account_id: accountId });
    expect(payout.status).toBe('processing');
    await expectHeld(payout);
    expect(await balanceOf(parties.partner.api, parties.wallet.id)).not.toBe(before);

    const [screening] = await listScreenings(harness.prisma, payout.id);
    expect(screening).toMatchObject({
      subjectType: 'payout',
      subjectId: accountId,
      trigger: 'payout',
      name: receiver,
      outcome: 'potential_match',
      listVersions: expect.arrayContaining([expect.stringMatching(/^eu:[0-9a-f]{64}$/)]),
    });
    expect(screening!.matches[0]).toMatchObject({ source: 'eu', entryId: '887777' });

    expect(
      await sendUpdate(reviewOf(payout.id), decideScreeningReviewUpdate, {
        args: [
          { decision: 'clear', reason: 'different person, ticket SCR-21', operator: 'olivia.operator@example.com' },
        ],
      }),
    ).toBe('cleared');
    expect(await settlementHandle(harness, payout.id).result()).toBe('completed');
    const completed = await get(payout.id);
    expectPaymentLedgerInvariants(await ledgerOf(harness, payout.id), completed, parties.partner.partnerId);
    expect(await eventTypesOf(harness, payout.id)).toEqual(['payout.created', 'payout.held', 'payout.completed']);
    const [action] = await listOperatorActions(harness.prisma, { resourceId: payout.id });
    expect(action).toMatchObject({
      resourceType: 'payout_screening',
      action: 'clear',
      operator: 'olivia.operator@example.com',
      details: { entries: ['eu:887777'], opening: 'payout', external_account_id: accountId },
    });

    // The entry cleared for this account's holder holds no later payout to it.
    const next = await createPayout(parties, { external_account_id: accountId });
    expect(await settlementHandle(harness, next.id).result()).toBe('completed');
    expect(await eventTypesOf(harness, next.id)).toEqual(['payout.created', 'payout.completed']);
    expect((await listScreenings(harness.prisma, next.id))[0]).toMatchObject({ outcome: 'clear' });
  });

  it('refunds a held payout whose match an operator confirms (sandbox simulate=screening_review)', async () => {
    const before = await balanceOf(parties.partner.api, parties.wallet.id);
    const payout = await createPayout(parties, { simulate: 'screening_review' });
    await expectHeld(payout);
    await sendUpdate(reviewOf(payout.id), decideScreeningReviewUpdate, {
      args: [
        { decision: 'confirm', reason: 'the receiver is the listed person', operator: 'omar.operator@example.com' },
      ],
    });
    expect(await settlementHandle(harness, payout.id).result()).toBe('refunded');
    const refunded = await get(payout.id);
    expect(refunded.failure_reason).toBe('receiver_sanctions_match');
    const ledger = await ledgerOf(harness, payout.id);
    expectPaymentLedgerInvariants(ledger, refunded, parties.partner.partnerId);
    expect(ledger.references).toEqual(['funding', 'refund']);
    expect(await eventTypesOf(harness, payout.id)).toEqual(['payout.created', 'payout.held', 'payout.refunded']);
    expect(await balanceOf(parties.partner.api, parties.wallet.id)).toBe(before);
  });
});

describe('sandbox simulate=screening_review', () => {
  it('puts an external account under review whatever its holder; cleared, it is approved', async () => {
    const created = await parties.partner.api
      .post('/v1/external-accounts')
      .send(
        externalAccount(
          parties.customer.id,
          'spei',
          { beneficiary_name: 'María López', clabe: '002010077777777797' },
          { simulate: 'screening_review' },
        ),
      );
    expect([created.status, created.body.status]).toEqual([201, 'under_review']);
    const id = created.body.id as string;
    expect((await listScreenings(harness.prisma, id))[0]).toMatchObject({ outcome: 'potential_match', matches: [] });
    const review = reviewOf(id);
    await until(
      () => review.query(screeningReviewStateQuery).catch(() => null),
      (state) => state?.state === 'open',
    );
    await sendUpdate(review, decideScreeningReviewUpdate, {
      args: [{ decision: 'clear', reason: 'sandbox simulation', operator: 'olivia.operator@example.com' }],
    });
    expect(await review.result()).toBe('cleared');
    expect((await parties.partner.api.get(`/v1/external-accounts/${id}`)).body.status).toBe('approved');
    expect(await eventTypesOf(harness, id)).toEqual([
      'external_account.created',
      'external_account.under_review',
      'external_account.approved',
    ]);
  });

  it('holds a customer in review at verification whatever its name; a confirmed match rejects it', async () => {
    const customer = await createCustomer(parties.partner.api, {
      ...individualCustomer(),
      simulate: 'screening_review',
    });
    await uploadIndividualDocuments(parties.partner.api, customer.id);
    expect((await parties.partner.api.post(`/v1/customers/${customer.id}/check`)).status).toBe(204);
    const review = reviewOf(customer.id);
    const state = await until(
      () => review.query(screeningReviewStateQuery).catch(() => null),
      (value) => value?.state === 'open',
    );
    expect(state?.input).toMatchObject({ subjectType: 'customer', opening: 'verification' });
    await sendUpdate(review, decideScreeningReviewUpdate, {
      args: [{ decision: 'confirm', reason: 'sandbox simulation', operator: 'omar.operator@example.com' }],
    });
    expect(await harness.env.client.workflow.getHandle(workflowIds.customerVerification(customer.id)).result()).toBe(
      'rejected',
    );
    expect((await parties.partner.api.get(`/v1/customers/${customer.id}`)).body.status).toBe('rejected');
    expect(await eventTypesOf(harness, customer.id)).toEqual([
      'customer.created',
      'customer.under_review',
      'customer.rejected',
    ]);
  });
});

describe('list versions', () => {
  it('prunes old loaded versions after a refresh, keeping the newest and those a screening names', async () => {
    const loadedChecksums = async () =>
      (await listVersionHistory(harness.prisma, 'eu', 50))
        .filter((version) => version.status === 'loaded')
        .map((version) => version.checksum);
    // Named by screenings already: the first version (accounts created), the second (the payouts).
    const [named2, named1] = await loadedChecksums();
    for (const round of [1, 2]) {
      writeFileSync(euFile, euWithReceiver.replace('<export ', `<!-- later ${round} -->\n<export `));
      expect((await activities.refreshScreeningList({ source: 'eu', url: euFile })).outcome).toBe('loaded');
    }
    const [newest, unnamed] = await loadedChecksums();
    // At least the one unnamed here (the shared database may keep an earlier run's newest, unnamed too).
    expect((await activities.pruneScreeningListVersions()).pruned).toBeGreaterThanOrEqual(1);
    const kept = await loadedChecksums();
    expect(kept.slice(0, 3)).toEqual([newest, named2, named1]);
    expect(kept).not.toContain(unnamed);
    // What the processes screen against is untouched.
    expect((await activities.currentScreeningVersions()).filter((version) => version.startsWith('eu:'))).toEqual([
      `eu:${newest}`,
    ]);
  });
});
