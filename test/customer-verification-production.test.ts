// Production verification: no automatic decision; an operator decides with the
// `verificationDecision` signal (docs/operations.md has the command). The sandbox-only endpoint does not exist.
import { workflowIds } from '../src/temporal/workflow-ids';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { verificationDecisionUpdate, verificationStateQuery } from '../workflows/customer-verification';
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

it('refuses an approval while pending, telling the operator why: approval needs a check first', async () => {
  const customer = await createCustomer(partner.api);
  await uploadIndividualDocuments(partner.api, customer.id);
  const handle = handleOf(customer.id);
  const refused = handle.executeUpdate(verificationDecisionUpdate, {
    args: [{ outcome: 'approved', rejected_steps: [] }],
  });
  await expect(refused).rejects.toThrow(WorkflowUpdateFailedError);
  await expect(refused).rejects.toMatchObject({ cause: { type: 'CustomerNotUnderReview' } });
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

  // An invalid decision (a business step for an individual) is refused with its reason; the valid one applies.
  const invalid = handle.executeUpdate(verificationDecisionUpdate, {
    args: [
      {
        outcome: 'rejected',
        rejected_steps: [{ name: 'INCORPORATION_CERT', rejection_code: ['FRAUDULENT'], rejection_description: 'x' }],
      } as never,
    ],
  });
  await expect(invalid).rejects.toMatchObject({ cause: { type: 'InvalidVerificationDecision' } });
  expect(
    await handle.executeUpdate(verificationDecisionUpdate, {
      args: [
        {
          outcome: 'partially_rejected',
          rejected_steps: [
            { name: 'IDENTITY_DOCUMENT', rejection_code: ['ILLEGIBLE'], rejection_description: 'Blurred photo' },
          ],
        } as never,
      ],
    }),
  ).toBe('partially_rejected');
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
  expect(
    await handle.executeUpdate(verificationDecisionUpdate, { args: [{ outcome: 'approved', rejected_steps: [] }] }),
  ).toBe('approved');
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
