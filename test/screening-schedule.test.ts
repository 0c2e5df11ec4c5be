// The `screening-lists` Schedule (docs/screening.md "Lists as configuration"): a worker creates it at start-up when
// lists are configured, once, every SCREENING_REFRESH_MINUTES with a first run at once, and keeps an operator's pause
// when it starts again; without lists it creates none. On a Temporal dev server: the test server has no schedules.
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { ensureScreeningScheduleAtStart, SCREENING_LISTS_SCHEDULE_ID } from '../src/temporal/screening-schedule';
import { loadConfig } from '../src/config';

let dev: TestWorkflowEnvironment;
beforeAll(async () => {
  const cli = process.env.TEMPORAL_CLI_PATH;
  dev = await TestWorkflowEnvironment.createLocal(
    cli ? { server: { executable: { type: 'existing-path', path: cli } } } : {},
  );
});
afterAll(() => dev?.teardown());

async function scheduleIds(): Promise<string[]> {
  const ids: string[] = [];
  for await (const schedule of dev.client.schedule.list()) ids.push(schedule.scheduleId);
  return ids;
}

describe('the screening-lists schedule at worker start', () => {
  it('is not created without lists', async () => {
    const config = loadConfig({ ...process.env, APP_ENV: 'sandbox', SCREENING_LISTS: '' });
    expect(config.screening ?? null).toBeNull();
    expect(await ensureScreeningScheduleAtStart(dev.client, 'payments', config.screening)).toBe(false);
    expect(await scheduleIds()).not.toContain(SCREENING_LISTS_SCHEDULE_ID);
  });

  it('is created once with lists, runs at once, and keeps an operator’s pause when a worker starts again', async () => {
    const config = loadConfig({
      ...process.env,
      APP_ENV: 'sandbox',
      SCREENING_LISTS: 'ofac_sdn=file:///var/lib/sanctions/sdn.xml',
      SCREENING_REFRESH_MINUTES: '360',
    });
    expect(await ensureScreeningScheduleAtStart(dev.client, 'payments', config.screening)).toBe(true);
    const handle = dev.client.schedule.getHandle(SCREENING_LISTS_SCHEDULE_ID);
    const described = await handle.describe();
    expect(described.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: 'screeningListRefreshWorkflow',
      taskQueue: 'payments',
    });
    expect(described.spec.intervals).toEqual([expect.objectContaining({ every: 360 * 60_000 })]);
    expect(described.policies.overlap).toBe('SKIP');
    // triggerImmediately: the first refresh was started at creation (no worker polls here, so it stays open).
    expect(described.info.numActionsTaken).toBeGreaterThanOrEqual(1);
    expect(described.info.recentActions[0]?.action.workflow.workflowId).toMatch(/^screening-lists/);

    await handle.pause('operator pause: publisher maintenance');
    expect(await ensureScreeningScheduleAtStart(dev.client, 'payments', config.screening)).toBe(true);
    const again = await handle.describe();
    expect(again.state.paused).toBe(true);
    expect(again.state.note).toBe('operator pause: publisher maintenance');
    expect((await scheduleIds()).filter((id) => id === SCREENING_LISTS_SCHEDULE_ID)).toHaveLength(1);
  });
});
