// Housekeeping: the maintenance workflow purges expired idempotency keys, old workflow-start intents and expired
// rate-limit counters, and
// runs from a Temporal Schedule that every worker creates idempotently (visible and pausable in the UI).
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { devServerEnvironment } from './support/dev-server';
import { ensureMaintenanceSchedule, MAINTENANCE_SCHEDULE_ID } from '../src/temporal/client';
import { maintenanceWorkflow } from '../workflows/maintenance';
import { deleteEventsCreatedBefore } from '../src/persistence/events';
import { Harness, startHarness, TestPartner } from './support/harness';
import { holdFileLock } from './support/file-locks';

let harness: Harness;
let partner: TestPartner;
let releasePurgeLock: (() => Promise<void>) | undefined;

beforeAll(async () => {
  harness = await startHarness();
  partner = await harness.createPartner();
  // Its events of 29 to 35 days must outlive test/database-roles.test.ts's purge of everything older than two days,
  // and its own purges must not take that file's events.
  releasePurgeLock = await holdFileLock(harness.config.databaseUrl, 'events-purge');
});
afterAll(async () => {
  await releasePurgeLock?.();
  await harness?.teardown();
});

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

it('purges expired keys, intents started over a week ago and old rate-limit counters, keeping live ones', async () => {
  await storeKey('expired-1', new Date(Date.now() - 1000));
  const [oldCounter, liveCounter] = [`maintenance-old-${partner.partnerId}`, `maintenance-live-${partner.partnerId}`];
  await harness.prisma.$executeRaw`INSERT INTO rate_limits (key, points, expire) VALUES
    (${oldCounter}, 1, ${Date.now() - 2 * 3600_000}), (${liveCounter}, 1, ${Date.now() + 60_000})`;
  await storeKey('live', new Date(Date.now() + 3600_000 * 5));
  const old = `maintenance-old-${partner.partnerId}`;
  const recent = `maintenance-recent-${partner.partnerId}`;
  for (const [workflowId, startedAt] of [
    [old, new Date(Date.now() - 8 * 24 * 3600_000)],
    [recent, new Date()],
  ] as const) {
    await harness.prisma.workflowStart.create({
      data: { id: crypto.randomUUID(), workflowId, workflowType: 'x', args: [], searchAttributes: {}, startedAt },
    });
  }
  await harness.env.client.workflow.execute(maintenanceWorkflow, {
    workflowId: `maintenance-test-${partner.partnerId}`,
    taskQueue: harness.config.temporal.taskQueue,
  });
  expect(await keysOfPartner()).toEqual(['live']);
  const intents = await harness.prisma.workflowStart.findMany({ where: { workflowId: { in: [old, recent] } } });
  expect(intents.map((row) => row.workflowId)).toEqual([recent]);
  const counters = await harness.prisma.$queryRaw<Array<{ key: string }>>`
    SELECT key FROM rate_limits WHERE key IN (${oldCounter}, ${liveCounter})`;
  expect(counters.map((row) => row.key)).toEqual([liveCounter]);
});

describe('event retention', () => {
  const daysAgo = (days: number) => new Date(Date.now() - days * 24 * 3600_000);
  async function eventWithDelivery(createdAt: Date, configId: string): Promise<string> {
    const id = crypto.randomUUID();
    await harness.prisma.event.create({
      data: {
        id,
        partnerId: partner.partnerId,
        event: 'customer',
        eventType: 'customer.approved',
        resourceId: crypto.randomUUID(),
        resourceStatus: 'approved',
        resource: {},
        createdAt,
      },
    });
    const deliveryId = crypto.randomUUID();
    await harness.prisma.webhookDelivery.create({
      data: {
        id: deliveryId,
        partnerId: partner.partnerId,
        eventId: id,
        configId,
        trigger: 'event',
        status: 'succeeded',
      },
    });
    await harness.prisma.webhookDeliveryAttempt.create({
      data: {
        id: crypto.randomUUID(),
        deliveryId,
        attempt: 1,
        url: 'https://example.com',
        statusCode: 200,
        latencyMs: 5,
      },
    });
    return id;
  }
  const ofPartner = async () =>
    (await harness.prisma.event.findMany({ where: { partnerId: partner.partnerId }, select: { id: true } })).map(
      ({ id }) => id,
    );

  it('purges events older than EVENT_RETENTION_DAYS with their deliveries and attempts, in bounded batches', async () => {
    const config = await harness.prisma.webhookConfig.create({
      data: {
        id: crypto.randomUUID(),
        partnerId: partner.partnerId,
        url: 'https://example.com/hooks',
        subscriptions: ['customer.approved'],
        enabled: false,
        secretCiphertext: 'sealed',
      },
    });
    const old: string[] = [];
    for (let index = 0; index < 5; index += 1) old.push(await eventWithDelivery(daysAgo(31 + index), config.id));
    const recent = await eventWithDelivery(daysAgo(29), config.id);

    // Bounded: a run deletes at most its batches; the next run goes on.
    const cutoff = daysAgo(harness.config.eventRetentionDays);
    expect(await deleteEventsCreatedBefore(harness.prisma, cutoff, { batchSize: 2, maxBatches: 2 })).toBe(4);
    expect((await ofPartner()).filter((id) => old.includes(id))).toHaveLength(1);

    await harness.env.client.workflow.execute(maintenanceWorkflow, {
      workflowId: `maintenance-events-${partner.partnerId}`,
      taskQueue: harness.config.temporal.taskQueue,
    });
    expect(await ofPartner()).toEqual([recent]);
    const deliveries = await harness.prisma.webhookDelivery.findMany({
      where: { configId: config.id },
      include: { attempts: true },
    });
    expect(deliveries.map((delivery) => [delivery.eventId, delivery.attempts.length])).toEqual([[recent, 1]]);
  });
});

describe('the maintenance schedule (on a Temporal dev server: the test server has no schedules)', () => {
  let dev: TestWorkflowEnvironment;
  beforeAll(async () => {
    dev = await devServerEnvironment();
  });
  afterAll(() => dev?.teardown());

  it('is created once, hourly, and keeps an operator’s pause when a worker starts again', async () => {
    await ensureMaintenanceSchedule(dev.client, 'payments');
    const handle = dev.client.schedule.getHandle(MAINTENANCE_SCHEDULE_ID);
    const described = await handle.describe();
    expect(described.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: 'maintenanceWorkflow',
      taskQueue: 'payments',
    });
    expect(described.spec.intervals).toEqual([expect.objectContaining({ every: 3600_000 })]);
    expect(described.policies.overlap).toBe('SKIP');
    await handle.pause('operator pause');
    await ensureMaintenanceSchedule(dev.client, 'payments');
    const again = await handle.describe();
    expect(again.state.paused).toBe(true);
    const listed: string[] = [];
    for await (const schedule of dev.client.schedule.list()) listed.push(schedule.scheduleId);
    expect(listed.filter((id) => id === MAINTENANCE_SCHEDULE_ID)).toHaveLength(1);
  });
});
