// The maintenance workflow purges idempotency keys past their 24-hour retention, hourly.
import { maintenanceWorkflow } from '../workflows/maintenance';
import { eventually } from './support/eventually';
import { Harness, startHarness, TestPartner } from './support/harness';

let harness: Harness;
let partner: TestPartner;

beforeAll(async () => {
  harness = await startHarness();
  partner = await harness.createPartner();
});
afterAll(() => harness?.teardown());

async function storeKey(key: string, expiresAt: Date): Promise<void> {
  await harness.prisma.idempotencyKey.create({
    data: {
      partnerId: partner.partnerId,
      key,
      fingerprint: 'f',
      method: 'POST',
      path: '/v1/customers',
      state: 'completed',
      responseStatus: 201,
      responseBody: {},
      expiresAt,
    },
  });
}

const keysOfPartner = async () =>
  (await harness.prisma.idempotencyKey.findMany({ where: { partnerId: partner.partnerId } }))
    .map((row) => row.key)
    .sort();

it('purges expired keys at once and then every hour, keeping live ones', async () => {
  await storeKey('expired-1', new Date(Date.now() - 1000));
  await storeKey('live', new Date(Date.now() + 3600_000 * 5));
  const handle = await harness.env.client.workflow.start(maintenanceWorkflow, {
    workflowId: `maintenance-test-${partner.partnerId}`,
    taskQueue: harness.config.temporal.taskQueue,
  });
  expect(await eventually(keysOfPartner, (keys) => keys.length === 1)).toEqual(['live']);

  await storeKey('expired-2', new Date(Date.now() - 1000));
  await harness.env.sleep('1 hour');
  expect(await eventually(keysOfPartner, (keys) => keys.length === 1)).toEqual(['live']);
  await handle.terminate('test finished');
});
