// The daily reconciliation: proves the ledger, the provider operations and the transactions agree
// (docs/reconciliation.md). One run per firing of the `reconciliation` Temporal Schedule; each check reads its
// table in bounded batches (one activity each), keeps what it finds under the run's report, and the run ends with
// the report closed: clean, or discrepancies (the alert). The report id and status are the run's ResourceId and
// ResourceStatus search attributes, so the Temporal UI lists runs that found something.
import { continueAsNew, proxyActivities, upsertSearchAttributes, uuid4, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ReconciliationSummary } from '../activities/reconciliation';
import { reconciliationChecks, type ReconciliationCheck } from '../src/domain/reconciliation';
import { ResourceIdAttribute, ResourceStatusAttribute } from '../src/temporal/search-attributes';

export interface ReconciliationInput {
  /** Only what belongs to these partners (tests, an operator's recheck of one partner); default the whole ledger. */
  partnerIds?: string[];
  /** Rows per batch (default 1000). */
  batchSize?: number;
  /** Carried over continue-as-new: the run's report and how far it got. */
  progress?: {
    reportId: string;
    check: ReconciliationCheck;
    after: string | null;
    counts: Partial<Record<ReconciliationCheck, { checked: number; found: number }>>;
  };
}

const { openReconciliationReport, reconcileBatch, closeReconciliationReport } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  // Bounded: a run that keeps failing gives up; the next firing starts again.
  retry: { initialInterval: '10 seconds', maximumInterval: '5 minutes', maximumAttempts: 10 },
});

export async function reconciliationWorkflow(input: ReconciliationInput = {}): Promise<ReconciliationSummary> {
  const partnerIds = input.partnerIds ?? null;
  const limit = input.batchSize ?? 1000;
  const reportId = input.progress?.reportId ?? uuid4();
  const counts = { ...(input.progress?.counts ?? {}) };
  upsertSearchAttributes([
    { key: ResourceIdAttribute, value: reportId },
    { key: ResourceStatusAttribute, value: 'running' },
  ]);
  if (!input.progress) await openReconciliationReport(reportId, partnerIds);
  const firstCheck = input.progress ? reconciliationChecks.indexOf(input.progress.check) : 0;
  for (const check of reconciliationChecks.slice(firstCheck)) {
    let after = input.progress?.check === check ? input.progress.after : null;
    do {
      const batch = await reconcileBatch({ reportId, check, partnerIds, after, limit });
      const total = counts[check] ?? { checked: 0, found: 0 };
      counts[check] = { checked: total.checked + batch.checked, found: total.found + batch.found };
      after = batch.next;
      if (after !== null && workflowInfo().continueAsNewSuggested) {
        await continueAsNew<typeof reconciliationWorkflow>({ ...input, progress: { reportId, check, after, counts } });
      }
    } while (after !== null);
  }
  const summary = await closeReconciliationReport(reportId, counts);
  upsertSearchAttributes([{ key: ResourceStatusAttribute, value: summary.status }]);
  return summary;
}
