// Screening in the flows (docs/screening.md), against list files in the official formats made here: each load is a
// version row (a failed or suspicious one refused, the previous version kept); an external account's holder, a
// customer at verification and approved customers after a list changed are screened and their reports kept; a
// potential match waits in a review workflow for an operator's validated update (clear or confirm, with a reason),
// recorded in operator_actions, with the subject's status, events and webhooks following.
import { sendUpdate } from './support/updates';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { listOperatorActions } from '../src/persistence/operator-actions';
import { currentListVersions, listScreenings, listVersionHistory } from '../src/persistence/screening';
import { screeningReviewWorkflowId } from '../src/domain/screening-review';
import { createActivities } from '../activities';
import {
  decideScreeningReviewUpdate,
  rescreeningWorkflow,
  screeningListRefreshWorkflow,
  screeningReviewStateQuery,
} from '../workflows/screening';
import { Harness, productionTestSecrets, startHarness, TestPartner } from './support/harness';
import { loadConfig } from '../src/config';
import { historyToObject, keepHistoryIfAsked } from './support/histories';
import { createProviders } from '../src/providers';
import { productionFlowTable } from '../src/providers/readiness';
import { approvedCustomer, createWallet } from './support/accounts';
import { payoutQuoteBody, quote } from './support/payments';
import { createCustomer, externalAccount, individualCustomer, uploadIndividualDocuments } from './support/fixtures';
import { workflowIds } from '../src/temporal/workflow-ids';

const fixtures = path.join(__dirname, 'fixtures', 'sanctions');
const dir = mkdtempSync(path.join(os.tmpdir(), 'sanctions-'));
const sdnFile = path.join(dir, 'sdn.xml');
// A run of its own: the shared database keeps earlier runs' versions, and the same bytes would be "unchanged".
const nonce = `${Date.now()}-${process.pid}`;
const withNonce = (xml: string) => xml.replace('<sdnList', `<!-- run ${nonce} -->\n<sdnList`);
const baseSdn = withNonce(readFileSync(path.join(fixtures, 'ofac-sdn.xml'), 'utf8'));
// A name no other test file uses, added by a later version of the list.
const newcomer = { first: 'Hortensia Evangelina', last: 'QUILLFEATHERSTONE' };
const sdnWithNewcomer = baseSdn.replace(
  '</sdnList>',
  `  <sdnEntry>
    <uid>90077</uid>
    <firstName>${newcomer.first}</firstName>
    <lastName>${newcomer.last}</lastName>
    <sdnType>Individual</sdnType>
    <programList><program>SDGT</program></programList>
  </sdnEntry>
</sdnList>`,
);

let harness: Harness;
let partner: TestPartner;
let activities: ReturnType<typeof createActivities>;

beforeAll(async () => {
  writeFileSync(sdnFile, baseSdn);
  harness = await startHarness({ SCREENING_LISTS: `ofac_sdn=${sdnFile}` });
  partner = await harness.createPartner('Screening partner');
  activities = createActivities({ ...harness.services, config: harness.config } as never);
  expect(await activities.refreshScreeningList({ source: 'ofac_sdn', url: sdnFile })).toMatchObject({
    outcome: 'loaded',
  });
});
afterAll(async () => {
  await harness?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

const reviewHandle = (resourceId: string) =>
  harness.env.client.workflow.getHandle(screeningReviewWorkflowId(resourceId));

const record = (workflowId: string, name: string) => keepHistoryIfAsked(harness.env.client, workflowId, name);

/** The operator's update (sendUpdate: sent again under its id when the test server loses it). */
const decide = (
  handle: ReturnType<typeof reviewHandle>,
  decision: { decision: 'clear' | 'confirm'; reason: string; operator: string },
  updateId?: string,
) => sendUpdate(handle, decideScreeningReviewUpdate, { args: [decision], ...(updateId ? { updateId } : {}) });

async function eventTypes(resourceId: string): Promise<string[]> {
  const rows = await harness.prisma.event.findMany({ where: { resourceId }, orderBy: { sequence: 'asc' } });
  return rows.map((row) => row.eventType);
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('list versions', () => {
  it('keeps the previous version when a load fails or is suspicious, and records why', async () => {
    const before = (await currentListVersions(harness.prisma)).find((version) => version.source === 'ofac_sdn')!;
    expect(before.entryCount).toBe(3);

    const broken = path.join(dir, 'broken.xml');
    writeFileSync(broken, baseSdn.slice(0, baseSdn.length / 2));
    expect(await activities.refreshScreeningList({ source: 'ofac_sdn', url: broken })).toMatchObject({
      outcome: 'refused',
      detail: expect.stringMatching(/^parse_error/),
    });
    const oneEntry = path.join(dir, 'one.xml');
    writeFileSync(oneEntry, baseSdn.replace(/<sdnEntry>\s*<uid>9000[12]<\/uid>[\s\S]*?<\/sdnEntry>/g, ''));
    expect(await activities.refreshScreeningList({ source: 'ofac_sdn', url: oneEntry })).toMatchObject({
      outcome: 'refused',
      detail: 'too_few_entries: 1 entries, the current version has 3',
    });
    expect(await activities.refreshScreeningList({ source: 'ofac_sdn', url: sdnFile })).toMatchObject({
      outcome: 'unchanged',
    });

    const after = (await currentListVersions(harness.prisma)).find((version) => version.source === 'ofac_sdn')!;
    expect(after.id).toBe(before.id);
    const history = await listVersionHistory(harness.prisma, 'ofac_sdn', 3);
    expect(history.map((version) => [version.status, version.url])).toEqual([
      ['refused', oneEntry],
      ['refused', broken],
      ['loaded', sdnFile],
    ]);
  });
});

describe('external accounts', () => {
  it("puts a potential match's account under review; an operator clears it with a reason", async () => {
    const customer = await approvedCustomer(harness, partner.api);
    const created = await partner.api
      .post('/v1/external-accounts')
      .send(externalAccount(customer.id, 'wire', { beneficiary_name: 'Viktor Karpovskiy' }));
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('under_review');
    const id = created.body.id as string;

    const [screening] = await listScreenings(harness.prisma, id);
    expect(screening).toMatchObject({
      subjectType: 'external_account',
      trigger: 'creation',
      outcome: 'potential_match',
      // The versions in force: this file's OFAC list, and any other list a test file sharing the database loaded.
      listVersions: expect.arrayContaining([expect.stringMatching(/^ofac_sdn:[0-9a-f]{64}$/)]),
    });
    expect(screening!.matches[0]).toMatchObject({
      source: 'ofac_sdn',
      entryId: '90001',
      matchedName: expect.any(String),
    });
    expect(await eventTypes(id)).toEqual(['external_account.created', 'external_account.under_review']);

    const handle = reviewHandle(id);
    expect((await handle.query(screeningReviewStateQuery)).state).toBe('open');
    // The validator refuses a decision without a reason: nothing is recorded, the review stays open.
    await expect(
      handle.executeUpdate(decideScreeningReviewUpdate, {
        args: [{ decision: 'clear', reason: ' ', operator: 'olivia.operator@example.com' }],
      }),
    ).rejects.toThrow(WorkflowUpdateFailedError);
    expect(await listOperatorActions(harness.prisma, { resourceId: id })).toHaveLength(0);

    expect(
      await decide(
        handle,
        {
          decision: 'clear',
          reason: 'different person: born 1990, ticket SCR-7',
          operator: 'olivia.operator@example.com',
        },
        'clear-by-olivia',
      ),
    ).toBe('cleared');
    expect(await handle.result()).toBe('cleared');
    await record(screeningReviewWorkflowId(id), 'creation-cleared-after-a-refused-update');
    const account = await partner.api.get(`/v1/external-accounts/${id}`);
    expect(account.body.status).toBe('approved');
    expect(await eventTypes(id)).toEqual([
      'external_account.created',
      'external_account.under_review',
      'external_account.approved',
    ]);
    const [action] = await listOperatorActions(harness.prisma, { resourceId: id });
    expect(action).toMatchObject({
      workflowId: screeningReviewWorkflowId(id),
      updateId: 'clear-by-olivia',
      resourceType: 'external_account_screening',
      action: 'clear',
      operator: 'olivia.operator@example.com',
      reason: 'different person: born 1990, ticket SCR-7',
      details: { entries: ['ofac_sdn:90001'], opening: 'creation' },
    });

    // The review's history: the update with its arguments, for the note (docs/screening.md).
    const { events } = await handle.fetchHistory();
    const updates = events!
      .map((event) => event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest)
      .filter((request) => request?.input?.name === 'decideScreeningReview')
      .map((request) => ({
        updateId: request!.meta?.updateId,
        args: JSON.parse(Buffer.from(request!.input!.args!.payloads![0]!.data!).toString()),
      }));
    expect(updates).toEqual([
      {
        updateId: 'clear-by-olivia',
        args: {
          decision: 'clear',
          reason: 'different person: born 1990, ticket SCR-7',
          operator: 'olivia.operator@example.com',
        },
      },
    ]);
    if (process.env.SCREENING_PRINT_HISTORY)
      console.log(JSON.stringify({ review: screeningReviewWorkflowId(id), updates }, null, 2));
  });

  it('refuses payouts to an account under review; a confirmed match rejects the account', async () => {
    const customer = await approvedCustomer(harness, partner.api);
    const wallet = await createWallet(partner.api, customer.id, 'solana');
    const created = await partner.api
      .post('/v1/external-accounts')
      .send(externalAccount(customer.id, 'spei', { beneficiary_name: 'Northern Star Shipping LLC' }));
    expect(created.body.status).toBe('under_review');
    const id = created.body.id as string;
    const { id: quoteId } = await quote(partner.api, payoutQuoteBody());
    const payout = await partner.api
      .post('/v1/payout')
      .send({ quote_id: quoteId, customer_id: customer.id, external_account_id: id, wallet_id: wallet.id });
    expect(payout.status).toBe(422);
    expect(payout.body.error.code).toBe('external_account_under_review');
    await decide(reviewHandle(id), {
      decision: 'confirm',
      reason: 'same entity, same address',
      operator: 'omar.operator@example.com',
    });
    expect((await partner.api.get(`/v1/external-accounts/${id}`)).body.status).toBe('rejected');
    expect((await eventTypes(id)).at(-1)).toBe('external_account.rejected');
  });
});

describe('customers', () => {
  it('holds a matching customer in review during verification; a confirmed match rejects the customer', async () => {
    const customer = await createCustomer(
      partner.api,
      individualCustomer({ first_name: 'Viktor', last_name: 'Karpovsky', date_of_birth: '1961-03-14', country: 'RUS' }),
    );
    await uploadIndividualDocuments(partner.api, customer.id);
    expect((await partner.api.post(`/v1/customers/${customer.id}/check`)).status).toBe(204);
    const review = await until(
      () => listScreenings(harness.prisma, customer.id),
      (rows) => rows.length > 0,
    );
    expect(review[0]).toMatchObject({
      trigger: 'verification',
      outcome: 'potential_match',
      matches: [expect.objectContaining({ entryId: '90001', agreed: expect.arrayContaining(['date_of_birth']) })],
    });
    const handle = reviewHandle(customer.id);
    await until(
      () => handle.query(screeningReviewStateQuery).catch(() => null),
      (state) => state?.state === 'open',
    );
    await decide(handle, {
      decision: 'confirm',
      reason: 'name and date of birth agree',
      operator: 'olivia.operator@example.com',
    });
    const verification = harness.env.client.workflow.getHandle(workflowIds.customerVerification(customer.id));
    expect(await verification.result()).toBe('rejected');
    await record(screeningReviewWorkflowId(customer.id), 'verification-confirmed');
    await record(workflowIds.customerVerification(customer.id), 'sandbox-screening-match-confirmed');
    expect((await partner.api.get(`/v1/customers/${customer.id}`)).body.status).toBe('rejected');
    expect(await eventTypes(customer.id)).toEqual(['customer.created', 'customer.under_review', 'customer.rejected']);
  });

  it('a new list version matching an approved customer puts that customer under review; cleared, approved again', async () => {
    const customer = await approvedCustomer(
      harness,
      partner.api,
      individualCustomer({ first_name: newcomer.first, last_name: 'Quillfeatherstone' }),
    );
    // Another partner's customer of the same name: a run limited to this file's partner leaves it alone.
    const otherPartner = await harness.createPartner('Screening partner, another');
    const decoy = await approvedCustomer(
      harness,
      otherPartner.api,
      individualCustomer({ first_name: newcomer.first, last_name: 'Quillfeatherstone' }),
    );
    const approvedHere = await harness.prisma.customer.count({
      where: { partnerId: partner.partnerId, status: 'approved' },
    });
    writeFileSync(sdnFile, sdnWithNewcomer);
    // The Schedule's workflow: the new version loaded, then everyone (here: this file's partner) screened again.
    const refresh = await harness.env.client.workflow.execute(screeningListRefreshWorkflow, {
      workflowId: `screening-lists-${nonce}`,
      taskQueue: harness.config.temporal.taskQueue,
      args: [{ partnerIds: [partner.partnerId] }],
    });
    const versions = await activities.currentScreeningVersions();
    expect(refresh.outcomes).toEqual([{ source: 'ofac_sdn', outcome: 'loaded' }]);
    const result = refresh.rescreening!;
    expect(result.reviewsOpened.map((review) => review.resourceId)).toContain(customer.id);
    const opened = result.reviewsOpened.find((review) => review.resourceId === customer.id)!;
    // The customer went under review with the review's start intent; the worker's start relay starts the review.
    expect((await partner.api.get(`/v1/customers/${customer.id}`)).body.status).toBe('under_review');
    await harness.startRelay.sweep({ minAgeMs: 0 });
    expect(result.customersScreened).toBe(approvedHere);
    expect(result.reviewsOpened.map((review) => review.resourceId)).not.toContain(decoy.id);
    expect((await otherPartner.api.get(`/v1/customers/${decoy.id}`)).body.status).toBe('approved');
    if (process.env.SCREENING_PRINT_HISTORY) console.log(JSON.stringify({ refresh, versions }, null, 2));
    await record(`screening-lists-${nonce}`, 'loaded-then-rescreened');
    await record(`screening-lists-${nonce}-rescreening`, 'one-review-opened');

    const handle = harness.env.client.workflow.getHandle(opened.workflowId);
    await until(
      () => handle.query(screeningReviewStateQuery).catch(() => null),
      (state) => state?.subjectUnderReview === true,
    );
    expect((await partner.api.get(`/v1/customers/${customer.id}`)).body.status).toBe('under_review');
    const screenings = await listScreenings(harness.prisma, customer.id);
    expect(screenings.at(-1)).toMatchObject({
      trigger: 'rescreening',
      outcome: 'potential_match',
      listVersions: versions,
      matches: [expect.objectContaining({ entryId: '90077' })],
    });
    await decide(handle, {
      decision: 'clear',
      reason: 'different date of birth, ticket SCR-9',
      operator: 'olivia.operator@example.com',
    });
    expect(await handle.result()).toBe('cleared');
    await record(opened.workflowId, 'rescreening-cleared');
    expect((await partner.api.get(`/v1/customers/${customer.id}`)).body.status).toBe('approved');
    expect((await eventTypes(customer.id)).slice(-2)).toEqual(['customer.under_review', 'customer.approved']);

    // The same version again opens no review: the operator cleared that entry for this customer.
    const again = await harness.env.client.workflow.execute(rescreeningWorkflow, {
      workflowId: `rescreening-again-${nonce}`,
      taskQueue: harness.config.temporal.taskQueue,
      args: [{ versions, partnerIds: [partner.partnerId] }],
    });
    expect(again.reviewsOpened).toEqual([]);
  });
});

describe('production readiness', () => {
  const production = (extra: Record<string, string>) =>
    loadConfig({ ...process.env, APP_ENV: 'production', ...productionTestSecrets, ...extra });
  // What the production flow table says of screening (src/providers/readiness.ts): refused, and why, or served.
  const screeningRow = (extra: Record<string, string>) => {
    const config = production(extra);
    return productionFlowTable(config, createProviders(config, harness.prisma).accountScreening).find(
      (entry) => entry.flow === 'screening',
    );
  };

  it('counts screening as connected once lists are configured', () => {
    expect(screeningRow({})?.missing).toContain('no sanctions list is configured');
    expect(screeningRow({ SCREENING_LISTS: `ofac_sdn=${sdnFile}` })?.missing).toBeNull();
  });

  it('refuses a list configuration it cannot load', () => {
    expect(() => production({ SCREENING_LISTS: `seco=${sdnFile}` })).toThrow(/SCREENING_LISTS entry "seco=/);
    expect(() => production({ SCREENING_LISTS: 'ofac_sdn=relative/sdn.xml' })).toThrow(/absolute path/);
    expect(() => production({ SCREENING_LISTS: `un=${sdnFile},un=${sdnFile}` })).toThrow(/names a source twice/);
  });
});
