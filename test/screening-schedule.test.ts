// The `screening-lists` Schedule (docs/screening.md "Lists as configuration"): a worker creates it at start-up when
// lists are configured, once, every SCREENING_REFRESH_MINUTES with a first run at once, and keeps an operator's pause
// when it starts again; without lists it creates none. And the open reviews' gauges, read from Temporal's visibility
// (alert PaymentsScreeningReviewWaiting). On a Temporal dev server: the test server has no schedules.
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { devServerEnvironment } from './support/dev-server';
import { ensureScreeningScheduleAtStart, SCREENING_LISTS_SCHEDULE_ID } from '../src/temporal/screening-schedule';
import { loadConfig } from '../src/config';
import { openScreeningReviews, registerScreeningReviewGauges } from '../src/temporal/screening-reviews';
import { registry } from '../src/observability/metrics';

let dev: TestWorkflowEnvironment;
beforeAll(async () => {
  dev = await devServerEnvironment();
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

describe('the open reviews gauges', () => {
  it('count the open reviews and the age of the oldest', async () => {
    expect(await openScreeningReviews(dev.client)).toEqual({ open: 0, oldestAgeSeconds: 0 });
    // No worker polls here: the reviews stay open, as an operator queue does.
    for (const id of ['older', 'newer']) {
      await dev.client.workflow.start('screeningReviewWorkflow', {
        workflowId: `screening-review-${id}`,
        taskQueue: 'payments',
        args: [{ subjectType: 'payout', resourceId: id, partnerId: id, screeningIds: [], opening: 'payout' }],
      });
    }
    const startedAt = Date.now();
    let reviews = await openScreeningReviews(dev.client);
    for (let attempt = 0; reviews.open < 2 && attempt < 50; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      reviews = await openScreeningReviews(dev.client);
    }
    expect(reviews.open).toBe(2);
    const dayLater = await openScreeningReviews(dev.client, startedAt + 86_400_000);
    expect(dayLater.oldestAgeSeconds).toBeGreaterThanOrEqual(86_400);
    expect(dayLater.oldestAgeSeconds).toBeLessThan(86_400 + 60);

    registerScreeningReviewGauges(dev.client);
    const scraped = await registry.getSingleMetricAsString('payments_screening_reviews_open');
    expect(scraped).toMatch(/^payments_screening_reviews_open 2$/m);
    expect(await registry.getSingleMetricAsString('payments_screening_review_oldest_age_seconds')).toMatch(
      /^payments_screening_review_oldest_age_seconds \d+$/m,
    );
  });
});
