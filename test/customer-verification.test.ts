// The customer verification lifecycle (SPEC 3.1) in the sandbox: every transition through the
// API and the workflow, the refused ones, verification details, events, and the hosted page.
import { workflowIds } from '../src/temporal/workflow-ids';
import { verificationStateQuery } from '../workflows/customer-verification';
import {
  businessCustomer,
  createCustomer,
  individualCustomer,
  uploadDocument,
  uploadIndividualDocuments,
} from './support/fixtures';
import { Harness, startHarness, TestPartner } from './support/harness';

const AUTO_APPROVAL_SECONDS = 3600;
let harness: Harness;
let partner: TestPartner;

beforeAll(async () => {
  harness = await startHarness({ SANDBOX_VERIFICATION_DELAY_SECONDS: String(AUTO_APPROVAL_SECONDS) });
  partner = await harness.createPartner();
});
afterAll(() => harness?.teardown());

const handleOf = (customerId: string) =>
  harness.env.client.workflow.getHandle(workflowIds.customerVerification(customerId));

async function eventTypes(customerId: string): Promise<string[]> {
  const events = await harness.prisma.event.findMany({
    where: { resourceId: customerId },
    orderBy: { sequence: 'asc' },
  });
  return events.map((event) => event.eventType);
}

async function details(customerId: string) {
  const response = await partner.api.get(`/v1/customers/${customerId}/verification-details`);
  expect(response.status).toBe(200);
  return response.body;
}

const check = (customerId: string) => partner.api.post(`/v1/customers/${customerId}/check`);
const setOutcome = (customerId: string, body: Record<string, unknown>) =>
  partner.api.post(`/v1/sandbox/customers/${customerId}/verification-outcome`).send(body);

const partialRejection = {
  outcome: 'partially_rejected',
  rejected_steps: [
    { name: 'PROOF_OF_ADDRESS', rejection_code: ['EXPIRED'], rejection_description: 'Older than 3 months' },
  ],
};

async function readyIndividual(): Promise<string> {
  const customer = await createCustomer(partner.api);
  await uploadIndividualDocuments(partner.api, customer.id);
  return customer.id;
}

describe('pending', () => {
  it('shows every step pending in verification details', async () => {
    const customer = await createCustomer(partner.api);
    expect(await details(customer.id)).toEqual({
      customer_id: customer.id,
      customer_status: 'pending',
      verification_steps: {
        pending: ['CUSTOMER_DATA', 'IDENTITY_DOCUMENT', 'PROOF_OF_ADDRESS'],
        under_review: [],
        approved: [],
        partially_rejected: [],
        rejected: [],
      },
    });
  });

  it('refuses check without the minimum documents, naming what is missing, and stays pending', async () => {
    const customer = await createCustomer(partner.api);
    await uploadDocument(partner.api, customer.id, { document_type: 'NATIONAL_ID', document_side: 'FRONT' });
    const response = await check(customer.id);
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('verification_documents_missing');
    expect(response.body.error.message).toContain('an identity document');
    expect(response.body.error.message).toContain('PROOF_OF_ADDRESS');
    expect((await partner.api.get(`/v1/customers/${customer.id}`)).body.status).toBe('pending');
    expect(await eventTypes(customer.id)).toEqual(['customer.created']);
  });

  it('names each missing company document and each beneficiary above 25% for a business', async () => {
    const business = await createCustomer(partner.api, businessCustomer());
    await uploadDocument(partner.api, business.id, { document_type: 'INCORPORATION_CERTIFICATE' });
    const response = await check(business.id);
    expect(response.status).toBe(422);
    const message: string = response.body.error.message;
    expect(message).toContain('INCORPORATION_ARTICLES');
    expect(message).toContain('SHAREHOLDER_REGISTRY');
    expect(message).not.toContain('INCORPORATION_CERTIFICATE');
    const [major, minor] = business.beneficiaries!;
    expect(message).toContain(major!.id); // 60%
    expect(message).not.toContain(minor!.id); // 20.5%
  });

  it('ignores a sandbox outcome as a decision until check: it only presets the next review', async () => {
    const customerId = await readyIndividual();
    const preset = await setOutcome(customerId, { outcome: 'approved' });
    expect(preset.status).toBe(200);
    expect(preset.body.customer_status).toBe('pending');
    expect((await check(customerId)).status).toBe(204);
    expect(await handleOf(customerId).result()).toBe('approved');
    expect(await eventTypes(customerId)).toEqual(['customer.created', 'customer.under_review', 'customer.approved']);
  });
});

describe('under_review and its outcomes', () => {
  it('pending -> under_review on check, then approved automatically after the sandbox delay', async () => {
    const customerId = await readyIndividual();
    expect((await check(customerId)).status).toBe(204);
    const reviewing = await details(customerId);
    expect(reviewing.customer_status).toBe('under_review');
    expect(reviewing.verification_steps.under_review).toEqual([
      'CUSTOMER_DATA',
      'IDENTITY_DOCUMENT',
      'PROOF_OF_ADDRESS',
    ]);
    expect(await handleOf(customerId).query(verificationStateQuery)).toEqual({
      status: 'under_review',
      decisionPending: false,
    });

    const before = await harness.env.currentTimeMs();
    expect(await handleOf(customerId).result()).toBe('approved');
    expect((await harness.env.currentTimeMs()) - before).toBeGreaterThanOrEqual(AUTO_APPROVAL_SECONDS * 1000);

    const customer = (await partner.api.get(`/v1/customers/${customerId}`)).body;
    expect(customer.status).toBe('approved');
    expect(customer.verification.verification_link).toBeNull();
    // Operators find the workflow by customer and status in the Temporal UI.
    const { searchAttributes } = await handleOf(customerId).describe();
    expect(searchAttributes).toMatchObject({
      CustomerId: [customerId],
      PartnerId: [partner.partnerId],
      ResourceStatus: ['approved'],
    });
    expect((await details(customerId)).verification_steps.approved).toEqual([
      'CUSTOMER_DATA',
      'IDENTITY_DOCUMENT',
      'PROOF_OF_ADDRESS',
    ]);
    const events = await harness.prisma.event.findMany({
      where: { resourceId: customerId },
      orderBy: { sequence: 'asc' },
    });
    expect(events.map((e) => [e.eventType, e.resourceStatus])).toEqual([
      ['customer.created', 'pending'],
      ['customer.under_review', 'under_review'],
      ['customer.approved', 'approved'],
    ]);
    expect(events[2]!.resource).toMatchObject({ id: customerId, status: 'approved' });
    const list = (await partner.api.get('/v1/customers?limit=100')).body.items;
    expect(list.find((item: { id: string }) => item.id === customerId)).not.toHaveProperty('verification_link');
  });

  it('refuses check and uploads while under review', async () => {
    const customerId = await readyIndividual();
    expect((await check(customerId)).status).toBe(204);
    const again = await check(customerId);
    expect(again.status).toBe(422);
    expect(again.body.error.code).toBe('customer_verification_in_progress');
    const upload = await uploadDocument(partner.api, customerId, { document_type: 'SELFIE' });
    expect(upload.status).toBe(422);
    expect(upload.body.error.code).toBe('customer_verification_in_progress');
  });

  it('under_review -> partially_rejected -> (new document + check) -> under_review -> approved', async () => {
    const customerId = await readyIndividual();
    expect((await check(customerId)).status).toBe(204);
    const rejected = await setOutcome(customerId, partialRejection);
    expect(rejected.status).toBe(200);
    expect(rejected.body).toEqual({
      customer_id: customerId,
      customer_status: 'partially_rejected',
      verification_steps: {
        pending: [],
        under_review: [],
        approved: ['CUSTOMER_DATA', 'IDENTITY_DOCUMENT'],
        partially_rejected: [
          { name: 'PROOF_OF_ADDRESS', rejection_code: ['EXPIRED'], rejection_description: 'Older than 3 months' },
        ],
        rejected: [],
      },
    });
    const customer = (await partner.api.get(`/v1/customers/${customerId}`)).body;
    expect(customer.verification.verification_link).toEqual(expect.stringContaining('/verify/'));
    const listed = (await partner.api.get('/v1/customers?limit=100')).body.items.find(
      (item: { id: string }) => item.id === customerId,
    );
    expect(listed.verification_link).toBe(customer.verification.verification_link);

    const tooEarly = await check(customerId);
    expect(tooEarly.status).toBe(422);
    expect(tooEarly.body.error.code).toBe('verification_documents_missing');
    expect(tooEarly.body.error.message).toContain('PROOF_OF_ADDRESS');

    expect((await uploadDocument(partner.api, customerId, { document_type: 'PROOF_OF_ADDRESS' })).status).toBe(204);
    expect((await check(customerId)).status).toBe(204);
    const reviewing = await details(customerId);
    expect(reviewing.customer_status).toBe('under_review');
    expect(reviewing.verification_steps).toMatchObject({
      approved: ['CUSTOMER_DATA', 'IDENTITY_DOCUMENT'],
      under_review: ['PROOF_OF_ADDRESS'],
    });

    expect(await handleOf(customerId).result()).toBe('approved');
    expect(await eventTypes(customerId)).toEqual([
      'customer.created',
      'customer.under_review',
      'customer.partially_rejected',
      'customer.under_review',
      'customer.approved',
    ]);
  });

  it('partially_rejected -> rejected on the next review, which is final', async () => {
    const customerId = await readyIndividual();
    expect((await check(customerId)).status).toBe(204);
    expect((await setOutcome(customerId, partialRejection)).status).toBe(200);
    expect((await uploadDocument(partner.api, customerId, { document_type: 'PROOF_OF_ADDRESS' })).status).toBe(204);
    const fraud = {
      outcome: 'rejected',
      rejected_steps: [{ name: 'PROOF_OF_ADDRESS', rejection_code: ['FRAUDULENT'], rejection_description: 'Forged' }],
    };
    expect((await setOutcome(customerId, fraud)).body.customer_status).toBe('partially_rejected');
    expect((await check(customerId)).status).toBe(204);
    expect(await handleOf(customerId).result()).toBe('rejected');

    expect((await details(customerId)).verification_steps.rejected).toEqual([
      { name: 'PROOF_OF_ADDRESS', rejection_code: ['FRAUDULENT'], rejection_description: 'Forged' },
    ]);
    expect(await eventTypes(customerId)).toEqual([
      'customer.created',
      'customer.under_review',
      'customer.partially_rejected',
      'customer.under_review',
      'customer.rejected',
    ]);
  });

  it('under_review -> rejected; afterwards uploads, checks and outcomes answer customer_rejected', async () => {
    const customerId = await readyIndividual();
    expect((await check(customerId)).status).toBe(204);
    const rejection = {
      outcome: 'rejected',
      rejected_steps: [{ name: 'CUSTOMER_DATA', rejection_code: ['SANCTIONS_MATCH'], rejection_description: 'Listed' }],
    };
    expect((await setOutcome(customerId, rejection)).body.customer_status).toBe('rejected');
    const customer = (await partner.api.get(`/v1/customers/${customerId}`)).body;
    expect(customer.status).toBe('rejected');
    expect(customer.verification.verification_link).toBeNull();

    for (const response of [
      await check(customerId),
      await uploadDocument(partner.api, customerId, { document_type: 'SELFIE' }),
      await setOutcome(customerId, { outcome: 'approved' }),
    ]) {
      expect(response.status).toBe(422);
      expect(response.body.error.code).toBe('customer_rejected');
    }
    expect((await partner.api.get(`/v1/customers/${customerId}`)).body.status).toBe('rejected');
  });

  it('refuses check on an approved customer', async () => {
    const customerId = await readyIndividual();
    await setOutcome(customerId, { outcome: 'approved' });
    await check(customerId);
    await handleOf(customerId).result();
    const response = await check(customerId);
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('customer_already_approved');
  });

  it('verifies a business through its five steps', async () => {
    const business = await createCustomer(partner.api, businessCustomer());
    for (const document_type of ['INCORPORATION_CERTIFICATE', 'INCORPORATION_ARTICLES', 'SHAREHOLDER_REGISTRY']) {
      expect((await uploadDocument(partner.api, business.id, { document_type })).status).toBe(204);
    }
    expect(
      (
        await uploadDocument(partner.api, business.id, {
          document_type: 'PASSPORT',
          document_side: 'FRONT',
          beneficiary_id: business.beneficiaries![0]!.id,
        })
      ).status,
    ).toBe(204);
    expect((await check(business.id)).status).toBe(204);
    const outcome = await setOutcome(business.id, {
      outcome: 'partially_rejected',
      rejected_steps: [
        { name: 'SHAREHOLDER_REGISTRY', rejection_code: ['INCOMPLETE'], rejection_description: 'Missing page 2' },
        {
          name: 'CUSTOMER_BENEFICIARIES',
          rejection_code: ['EXPIRED', 'ILLEGIBLE'],
          rejection_description: 'Passport expired',
        },
      ],
    });
    expect(outcome.body.verification_steps).toEqual({
      pending: [],
      under_review: [],
      approved: ['CUSTOMER_DATA', 'INCORPORATION_CERT', 'INCORPORATION_ARTICLES'],
      partially_rejected: [
        { name: 'SHAREHOLDER_REGISTRY', rejection_code: ['INCOMPLETE'], rejection_description: 'Missing page 2' },
        {
          name: 'CUSTOMER_BENEFICIARIES',
          rejection_code: ['EXPIRED', 'ILLEGIBLE'],
          rejection_description: 'Passport expired',
        },
      ],
      rejected: [],
    });
  });
});

describe('sandbox verification outcome endpoint', () => {
  it.each([
    [{ outcome: 'maybe' }, 'outcome'],
    [{ outcome: 'partially_rejected' }, 'rejected_steps'],
    [{ outcome: 'approved', rejected_steps: partialRejection.rejected_steps }, 'rejected_steps'],
    [
      {
        outcome: 'rejected',
        rejected_steps: [{ name: 'PROOF_OF_ADDRESS', rejection_code: ['BAD'], rejection_description: 'x' }],
      },
      'rejected_steps.0.rejection_code.0',
    ],
  ])('rejects %j', async (body, param) => {
    const customer = await createCustomer(partner.api);
    const response = await setOutcome(customer.id, body);
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([expect.objectContaining({ code: 'invalid_param', param })]);
  });

  it('rejects a step of the other customer type', async () => {
    const customerId = await readyIndividual();
    await check(customerId);
    const response = await setOutcome(customerId, {
      outcome: 'partially_rejected',
      rejected_steps: [{ name: 'INCORPORATION_CERT', rejection_code: ['EXPIRED'], rejection_description: 'x' }],
    });
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('invalid_verification_outcome');
    expect(response.body.error.message).toContain('not a individual step');
    expect((await details(customerId)).customer_status).toBe('under_review');
  });

  it("answers 404 for another partner's customer", async () => {
    const customer = await createCustomer(partner.api);
    const other = await harness.createPartner('Other');
    const response = await other.api
      .post(`/v1/sandbox/customers/${customer.id}/verification-outcome`)
      .send({ outcome: 'approved' });
    expect(response.status).toBe(404);
  });
});

describe('hosted verification page', () => {
  it('lets the end user upload documents and submit them without an API key', async () => {
    const customer = await createCustomer(partner.api, individualCustomer());
    const link = new URL(customer.verification.verification_link as string);
    const page = await harness.http.get(link.pathname);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.text).toContain('<strong id="status" data-status="pending">Waiting for your documents</strong>');

    const upload = await harness.http
      .post(`${link.pathname}/documents`)
      .field('document_type', 'PASSPORT')
      .field('document_side', 'FRONT')
      .attach('file', Buffer.from('%PDF-1.4 passport'), 'passport.pdf');
    expect(upload.status).toBe(303);
    expect(upload.headers.location).toBe(`${link.pathname}?notice=document_uploaded`);

    const early = await harness.http.post(`${link.pathname}/submit`);
    expect(early.status).toBe(303);
    expect(early.headers.location).toBe(`${link.pathname}?error=documents_missing`);
    expect((await harness.http.get(early.headers.location as string)).text).toContain(
      'Upload the missing documents before submitting: Proof of address.',
    );

    const wrong = await harness.http
      .post(`${link.pathname}/documents`)
      .field('document_type', 'SHAREHOLDER_REGISTRY')
      .attach('file', Buffer.from('%PDF-1.4 x'), 'x.pdf');
    expect(wrong.headers.location).toBe(`${link.pathname}?error=document_invalid`);

    await harness.http
      .post(`${link.pathname}/documents`)
      .field('document_type', 'PROOF_OF_ADDRESS')
      .attach('file', Buffer.from('%PDF-1.4 bill'), 'bill.pdf');
    const submit = await harness.http.post(`${link.pathname}/submit`);
    expect(submit.status).toBe(303);
    expect((await partner.api.get(`/v1/customers/${customer.id}`)).body.status).toBe('under_review');
    expect(await harness.prisma.customerDocument.count({ where: { customerId: customer.id } })).toBe(2);
  });

  it('answers 404 for an unknown link', async () => {
    const response = await harness.http.get('/verify/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa');
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('not_found');
  });
});
