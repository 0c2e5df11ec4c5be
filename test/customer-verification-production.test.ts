// Production verification: no automatic decision; an operator decides with the
// `verificationDecision` signal (README has the command). The sandbox-only endpoint does not exist.
import { workflowIds } from '../src/temporal/workflow-ids';
import { verificationDecisionSignal, verificationStateQuery } from '../workflows/customer-verification';
import { createCustomer, uploadIndividualDocuments } from './support/fixtures';
import { eventually } from './support/eventually';
import { Harness, startHarness, TestPartner } from './support/harness';

let harness: Harness;
let partner: TestPartner;

beforeAll(async () => {
  harness = await startHarness({ APP_ENV: 'production' });
  partner = await harness.createPartner();
});
afterAll(() => harness?.teardown());

const handleOf = (customerId: string) =>
  harness.env.client.workflow.getHandle(workflowIds.customerVerification(customerId));
const statusOf = async (customerId: string) => (await partner.api.get(`/v1/customers/${customerId}`)).body.status;

it('has no sandbox outcome endpoint', async () => {
  const customer = await createCustomer(partner.api);
  const response = await partner.api
    .post(`/v1/sandbox/customers/${customer.id}/verification-outcome`)
    .send({ outcome: 'approved' });
  expect(response.status).toBe(404);
  expect(response.body.error.code).toBe('not_found');
  const openapi = await harness.http.get('/openapi.json');
  expect(Object.keys(openapi.body.paths)).not.toContain('/v1/sandbox/customers/{customerId}/verification-outcome');
});

it('ignores an approval signalled while pending: approval needs a check first', async () => {
  const customer = await createCustomer(partner.api);
  await uploadIndividualDocuments(partner.api, customer.id);
  const handle = handleOf(customer.id);
  await handle.signal(verificationDecisionSignal, { outcome: 'approved', rejected_steps: [] });
  // The update is handled after the signal: had the signal approved, check would be refused.
  expect((await partner.api.post(`/v1/customers/${customer.id}/check`)).status).toBe(204);
  expect(await statusOf(customer.id)).toBe('under_review');
});

it('waits for the operator as long as it takes, then applies the signalled decision', async () => {
  const customer = await createCustomer(partner.api);
  await uploadIndividualDocuments(partner.api, customer.id);
  expect((await partner.api.post(`/v1/customers/${customer.id}/check`)).status).toBe(204);
  const handle = handleOf(customer.id);

  await harness.env.sleep('30 days');
  expect(await handle.query(verificationStateQuery)).toEqual({ status: 'under_review', decisionPending: false });
  expect(await statusOf(customer.id)).toBe('under_review');

  // An invalid decision (a business step for an individual) is ignored; the valid one applies.
  await handle.signal(verificationDecisionSignal, {
    outcome: 'rejected',
    rejected_steps: [{ name: 'INCORPORATION_CERT', rejection_code: ['FRAUDULENT'], rejection_description: 'x' }],
  });
  await handle.signal(verificationDecisionSignal, {
    outcome: 'partially_rejected',
    rejected_steps: [
      { name: 'IDENTITY_DOCUMENT', rejection_code: ['ILLEGIBLE'], rejection_description: 'Blurred photo' },
    ],
  });
  const details = await eventually(
    async () => (await partner.api.get(`/v1/customers/${customer.id}/verification-details`)).body,
    (body) => body.customer_status !== 'under_review',
  );
  expect(details.customer_status).toBe('partially_rejected');
  expect(details.verification_steps.partially_rejected).toEqual([
    { name: 'IDENTITY_DOCUMENT', rejection_code: ['ILLEGIBLE'], rejection_description: 'Blurred photo' },
  ]);
  // Resubmission after the partial rejection, then approval by the operator.
  await uploadIndividualDocuments(partner.api, customer.id);
  expect((await partner.api.post(`/v1/customers/${customer.id}/check`)).status).toBe(204);
  await handle.signal(verificationDecisionSignal, { outcome: 'approved', rejected_steps: [] });
  expect(await handle.result()).toBe('approved');
  expect(await statusOf(customer.id)).toBe('approved');

  const events = await harness.prisma.event.findMany({
    where: { resourceId: customer.id },
    orderBy: { sequence: 'asc' },
  });
  expect(events.map((event) => event.eventType)).toEqual([
    'customer.created',
    'customer.under_review',
    'customer.partially_rejected',
    'customer.under_review',
    'customer.approved',
  ]);
});
