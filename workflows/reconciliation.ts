// The daily reconciliation: proves the ledger, the provider operations and the transactions agree
// (docs/reconciliation.md). One run per firing of the `reconciliation` Temporal Schedule; each check reads its
// table in bounded batches (one activity each), keeps what it finds under the run's report, and the run ends with
// the report closed: clean, discrepancies, or incomplete when a check could not look (both an alert). The report id and status are the run's ResourceId and
// ResourceStatus search attributes, so the Temporal UI lists runs that found something.
import {
  continueAsNew,
  patched,
  proxyActivities,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ReconciliationSummary } from '../activities/reconciliation';
import {
  type AnyReconciliationCheck,
  type CheckOutcomes,
  chainReconciliationChecks,
  checkNeeds,
  isSkipped,
  legacyReconciliationChecks,
  reconciliationChecks,
} from '../src/domain/reconciliation';
import { ResourceIdAttribute, ResourceStatusAttribute } from '../src/temporal/search-attributes';

export interface ReconciliationInput {
  /** Only what belongs to these partners (tests, an operator's recheck of one partner); default the whole ledger. */
  partnerIds?: string[];
  /** Rows per batch (default 1000). */
  batchSize?: number;
  /** Carried over continue-as-new: the run's report and how far it got. */
  progress?: {
    reportId: string;
    check: AnyReconciliationCheck;
    after: string | null;
    counts: CheckOutcomes;
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
  // Runs begun before the statement checks keep the checks they started with (their histories replay with them).
  const continuesLegacyRun =
    input.progress !== undefined && !(reconciliationChecks as readonly string[]).includes(input.progress.check);
  const checks: readonly AnyReconciliationCheck[] =
    !continuesLegacyRun && patched('reconciliation-statement-checks')
      ? reconciliationChecks
      : legacyReconciliationChecks;
  // Runs begun before the chain check existed keep the checks they started with too.
  const allChecks: readonly AnyReconciliationCheck[] = patched('reconciliation-chain-balances')
    ? [...checks, ...chainReconciliationChecks]
    : checks;
  const firstCheck = input.progress ? Math.max(0, allChecks.indexOf(input.progress.check)) : 0;
  for (const check of allChecks.slice(firstCheck)) {
    let after = input.progress?.check === check ? input.progress.after : null;
    const needed = checkNeeds[check];
    if (needed && isSkipped(counts[needed])) {
      counts[check] = { skipped: `${needed} was skipped: there is no statement to compare with` };
      continue;
    }
    do {
      const batch = await reconcileBatch({ reportId, check, partnerIds, after, limit });
      if (batch.skipped !== undefined) {
        counts[check] = { skipped: batch.skipped };
        break;
      }
      const total = counts[check];
      const sofar = total && !isSkipped(total) ? total : { checked: 0, found: 0 };
      counts[check] = { checked: sofar.checked + batch.checked, found: sofar.found + batch.found };
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
