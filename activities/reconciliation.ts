// The daily reconciliation's activities (workflows/reconciliation.ts): one bounded batch of one check per call, and
// the report kept in reconciliation_reports (docs/reconciliation.md).
import {
  type AnyReconciliationCheck,
  type CheckOutcomes,
  type Discrepancy,
  isSkipped,
  type ReportStatus,
  STATEMENT_POSTING_LAG_HOURS,
  statementWindow,
} from '../src/domain/reconciliation';
import {
  checkStatementLines,
  closeReconciliationReport,
  openReconciliationReport,
  reconcileBatch,
  reconciliationReportStart,
  recordDiscrepancies,
  recordStatementLines,
} from '../src/persistence/reconciliation';
import { isUnconnected, ProviderUnavailableError } from '../src/providers/unavailable';
import { chainBookBalances, chainCursor } from '../src/persistence/chain-watcher';
import { currencyOf, Money } from '../src/domain/money';
import type { ActivityServices } from './services';

export interface ReconciliationBatchInput {
  reportId: string;
  check: AnyReconciliationCheck;
  partnerIds: string[] | null;
  after: string | null;
  limit: number;
}

/** A batch's counts and where to go on; or, instead, why the check could not look (`skipped`). */
export interface ReconciliationBatchResult {
  checked: number;
  found: number;
  next: string | null;
  kinds: Discrepancy['kind'][];
  skipped?: string;
}

export interface ReconciliationSummary {
  reportId: string;
  status: Exclude<ReportStatus, 'running'>;
  discrepancyCount: number;
  checks: CheckOutcomes;
}

export function createReconciliationActivities({
  prisma,
  config,
  logger,
  providerStatements,
  watchedChains,
}: ActivityServices) {
  const { stuckBounds, statementLookbackHours } = config.reconciliation;
  const skipped = (reason: string): ReconciliationBatchResult => ({
    checked: 0,
    found: 0,
    next: null,
    kinds: [],
    skipped: reason,
  });

  /** A page of the provider's statement, kept under the report and matched with the postings. */
  async function statementBatch(input: ReconciliationBatchInput, startedAt: Date) {
    if (isUnconnected(providerStatements)) return { skipped: providerStatements.unconnected };
    try {
      const page = await providerStatements.statementFor(
        statementWindow(startedAt, statementLookbackHours),
        input.after,
        input.limit,
      );
      await recordStatementLines(prisma, input.reportId, page.lines);
      const compared = await checkStatementLines(prisma, page.lines, input.partnerIds);
      return { ...compared, next: page.next };
    } catch (error) {
      // Out of reach past the activity's own retries would fail the run; a statement that cannot be read is a
      // check that could not look, and says so in the report.
      if (error instanceof ProviderUnavailableError)
        return { skipped: `the statement cannot be read: ${error.message}` };
      throw error;
    }
  }

  /**
   * Per watched chain, token and service address: the books (the watcher's credited transfers) against the node's
   * `balanceOf` at the block the watcher has read and credited up to. Service-wide, whatever the run's partners.
   */
  async function chainBalancesBatch(): Promise<
    { checked: number; discrepancies: Discrepancy[]; next: null } | { skipped: string }
  > {
    // No chain node configured: the service holds nothing on a chain it does not have (nothing to compare).
    const discrepancies: Discrepancy[] = [];
    let checked = 0;
    for (const watched of watchedChains) {
      const cursor = await chainCursor(prisma, watched.chain);
      if (cursor === null) return { skipped: `the chain watcher has not read ${watched.chain} yet` };
      let head;
      let onChain;
      try {
        head = await watched.head();
        const block = cursor - 1n < head.deep ? cursor - 1n : head.deep;
        if (block < 0n) continue;
        onChain = { block, balances: await watched.balances(block) };
      } catch (error) {
        if (error instanceof ProviderUnavailableError)
          return { skipped: `the ${watched.chain} node: ${error.message}` };
        throw error;
      }
      const book = await chainBookBalances(prisma, watched.chain, onChain.block);
      for (const balance of onChain.balances) {
        checked += 1;
        const booked = book.find((row) => row.address === balance.address && row.currency === balance.currency);
        const bookAmount = Money.of(currencyOf(balance.currency), booked?.amount ?? '0');
        const chainAmount = Money.of(currencyOf(balance.currency), balance.amount);
        if (bookAmount.equals(chainAmount)) continue;
        discrepancies.push({
          kind: 'chain_balance_mismatch',
          subjectType: 'chain_address',
          subjectId: `${watched.chain}:${balance.currency}:${balance.address}`,
          detail:
            `the books say ${bookAmount.toString()} ${balance.currency} at ${balance.address} on ${watched.chain}, ` +
            `balanceOf says ${chainAmount.toString()} at block ${onChain.block} ` +
            `(${chainAmount.minus(bookAmount).toString()} unexplained)`,
        });
      }
    }
    return { checked, discrepancies, next: null };
  }

  return {
    async openReconciliationReport(reportId: string, partnerIds: string[] | null): Promise<void> {
      await openReconciliationReport(prisma, reportId, partnerIds);
    },

    /** Checks one batch and keeps what it found under the report; answers the counts and where to go on. */
    async reconcileBatch(input: ReconciliationBatchInput): Promise<ReconciliationBatchResult> {
      const startedAt = await reconciliationReportStart(prisma, input.reportId);
      const query = { partnerIds: input.partnerIds, after: input.after, limit: input.limit };
      const result =
        input.check === 'provider_statement'
          ? await statementBatch(input, startedAt)
          : input.check === 'chain_balances'
            ? await chainBalancesBatch()
            : await reconcileBatch(prisma, input.check, query, {
                reportId: input.reportId,
                asOf: startedAt,
                bounds: stuckBounds,
                postedFrom: new Date(
                  statementWindow(startedAt, statementLookbackHours).from.getTime() +
                    STATEMENT_POSTING_LAG_HOURS * 3_600_000,
                ),
              });
      if ('skipped' in result) return skipped(result.skipped);
      await recordDiscrepancies(prisma, input.reportId, result.discrepancies);
      return {
        checked: result.checked,
        found: result.discrepancies.length,
        next: result.next,
        kinds: [...new Set(result.discrepancies.map(({ kind }) => kind))],
      };
    },

    /**
     * Closes the report. Anything found, or any check skipped, is the alert: an error log line an operator's log
     * alerting watches, and the metrics the worker reads from the reports (payments_reconciliation_*).
     */
    async closeReconciliationReport(reportId: string, checks: CheckOutcomes): Promise<ReconciliationSummary> {
      const report = await closeReconciliationReport(prisma, reportId, checks);
      const status = report.status === 'running' ? 'discrepancies' : report.status;
      const skippedChecks = Object.entries(checks)
        .filter(([, outcome]) => isSkipped(outcome))
        .map(([check]) => check);
      if (status === 'discrepancies') {
        logger.error(
          { alert: 'reconciliation_discrepancies', reportId, discrepancies: report.discrepancyCount, checks },
          'reconciliation found discrepancies: npm run reconciliation -- show ' + reportId,
        );
      } else if (status === 'incomplete') {
        logger.error(
          { alert: 'reconciliation_incomplete', reportId, skipped: skippedChecks, checks },
          `reconciliation incomplete, skipped ${skippedChecks.join(', ')}: npm run reconciliation -- show ${reportId}`,
        );
      } else {
        logger.info({ reportId, checks }, 'reconciliation clean');
      }
      return { reportId, status, discrepancyCount: report.discrepancyCount, checks };
    },
  };
}
