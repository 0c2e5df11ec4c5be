// The harness's workers run their workflows on the jest worker's one workflow thread
// (test/support/shared-workflow-threads.ts): a worker made beside the harness's takes it instead of starting one,
// and its shutdown leaves it running for the harness's worker.
import { Worker } from '@temporalio/worker';
import { workflowIds } from '../src/temporal/workflow-ids';
import { createCustomer, uploadIndividualDocuments } from './support/fixtures';
import { Harness, startHarness, TestPartner, workerOnTaskQueue } from './support/harness';

let harness: Harness;
let partner: TestPartner;

beforeAll(async () => {
  harness = await startHarness();
  partner = await harness.createPartner();
});
afterAll(() => harness?.teardown());

it("gives a second worker the harness worker's thread, and leaves it running after that worker's shutdown", async () => {
  const threadsMade = jest.spyOn(
    Worker as unknown as { createWorkflowCreator: (...args: unknown[]) => unknown },
    'createWorkflowCreator',
  );
  const second = await workerOnTaskQueue(harness, `${harness.config.temporal.taskQueue}-second`);
  await second.runUntil(new Promise((resolve) => setTimeout(resolve, 200)));
  expect(second.getState()).toBe('STOPPED');
  expect(threadsMade).not.toHaveBeenCalled();

  // The harness's worker still runs workflows on it: a customer's verification to its end.
  const customer = await createCustomer(partner.api);
  await uploadIndividualDocuments(partner.api, customer.id);
  expect((await partner.api.post(`/v1/customers/${customer.id}/check`)).status).toBe(204);
  const handle = harness.env.client.workflow.getHandle(workflowIds.customerVerification(customer.id));
  expect(await handle.result()).toBe('approved');
  expect(threadsMade).not.toHaveBeenCalled();
});
