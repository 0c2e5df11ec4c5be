// The open screening reviews as operators see them in the Temporal UI (workflows/screening.ts screeningReviewWorkflow,
// docs/screening.md "Review"): how many are open and how long the oldest has waited. Every potential match waits
// there, a held payout included, so the age of the oldest is the queue's alert (PaymentsScreeningReviewWaiting).
import type { Client } from '@temporalio/client';
import { scrapedGauge } from '../observability/metrics';

/** Past this many open reviews the count stops (the alert is on the oldest; the list is in start order). */
const MAX_LISTED = 5000;

export interface OpenReviews {
  open: number;
  /** 0 when none is open. */
  oldestAgeSeconds: number;
}

export async function openScreeningReviews(client: Client, now: number = Date.now()): Promise<OpenReviews> {
  let open = 0;
  let oldest = now;
  for await (const execution of client.workflow.list({
    query: `WorkflowType = 'screeningReviewWorkflow' AND ExecutionStatus = 'Running'`,
  })) {
    open += 1;
    oldest = Math.min(oldest, execution.startTime.getTime());
    if (open >= MAX_LISTED) break;
  }
  return { open, oldestAgeSeconds: Math.max(0, Math.round((now - oldest) / 1000)) };
}

/** The worker's gauges of the review queue, read from Temporal's visibility when Prometheus scrapes (one read). */
export function registerScreeningReviewGauges(client: Client): void {
  let pending: Promise<OpenReviews> | null = null;
  // Visibility unreachable (or a server without it): NaN, "unknown", rather than failing the process's whole scrape.
  const unknown: OpenReviews = { open: Number.NaN, oldestAgeSeconds: Number.NaN };
  const read = () => {
    pending ??= openScreeningReviews(client)
      .catch(() => unknown)
      .finally(() => setTimeout(() => (pending = null), 1000).unref());
    return pending;
  };
  scrapedGauge('payments_screening_reviews_open', 'Screening reviews waiting for an operator.', [], async (gauge) =>
    gauge.set((await read()).open),
  );
  scrapedGauge(
    'payments_screening_review_oldest_age_seconds',
    'Seconds the oldest open screening review has waited for an operator (0: none, NaN: Temporal could not say).',
    [],
    async (gauge) => gauge.set((await read()).oldestAgeSeconds),
  );
}
