// The daily reconciliation's activities (workflows/reconciliation.ts): one bounded batch of one check per call, and
// the report kept in reconciliation_reports (docs/reconciliation.md).
import type { Discrepancy, ReconciliationCheck } from '../src/domain/reconciliation';
import {
  type CheckCounts,
  closeReconciliationReport,
  openReconciliationReport,
  reconcileBatch,
  recordDiscrepancies,
} from '../src/persistence/reconciliation';
import type { ActivityServices } from './services';

export interface ReconciliationBatchInput {
  reportId: string;
  check: ReconciliationCheck;
  partnerIds: string[] | null;
  after: string | null;
  limit: number;
}

export interface ReconciliationSummary {
  reportId: string;
  status: 'clean' | 'discrepancies';
  discrepancyCount: number;
  checks: CheckCounts;
}

export function createReconciliationActivities({ prisma, config, logger }: ActivityServices) {
  return {
    async openReconciliationReport(reportId: string, partnerIds: string[] | null): Promise<void> {
      await openReconciliationReport(prisma, reportId, partnerIds);
    },

    /** Checks one batch and keeps what it found under the report; answers the counts and where to go on. */
    async reconcileBatch(
      input: ReconciliationBatchInput,
    ): Promise<{ checked: number; found: number; next: string | null; kinds: Discrepancy['kind'][] }> {
      const result = await reconcileBatch(
        prisma,
        input.check,
        { partnerIds: input.partnerIds, after: input.after, limit: input.limit },
        // Provider operations are recorded where they can be read: the sandbox's simulated providers.
        { providerOperations: config.appEnv === 'sandbox' },
      );
      await recordDiscrepancies(prisma, input.reportId, result.discrepancies);
      return {
        checked: result.checked,
        found: result.discrepancies.length,
        next: result.next,
        kinds: [...new Set(result.discrepancies.map(({ kind }) => kind))],
      };
    },

    /** Closes the report; anything found is the alert: an error log line an operator's log alerting watches. */
    async closeReconciliationReport(reportId: string, checks: CheckCounts): Promise<ReconciliationSummary> {
      const report = await closeReconciliationReport(prisma, reportId, checks);
      const status = report.status === 'clean' ? 'clean' : 'discrepancies';
      // Metrics hook (branch observability): set the reconciliation_discrepancies gauge to report.discrepancyCount here.
      if (status === 'discrepancies') {
        logger.error(
          { alert: 'reconciliation_discrepancies', reportId, discrepancies: report.discrepancyCount, checks },
          'reconciliation found discrepancies: npm run reconciliation -- show ' + reportId,
        );
      } else {
        logger.info({ reportId, checks }, 'reconciliation clean');
      }
      return { reportId, status, discrepancyCount: report.discrepancyCount, checks };
    },
  };
}
