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
import { evmSendMovements, settleEvmSend, unsettledEvmSends } from '../src/persistence/evm-sends';
import { Decimal, decimalsOf } from '../src/domain/money';
import type { Blockchain } from '../src/domain/rails';
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
   * Per watched chain, token and service address, what the service's records say the address holds against the node's
   * `balanceOf` at a block:
   * - a watched address (the collection): the watcher's credited transfers to it, at the block the watcher has read
   *   and credited up to;
   * - every other service address (the treasury, wallets; anything the service sent from or delivered to): its mined
   *   token sends, in minus out (mints, pay-ins delivered, the legs' coin, wallet transfers, sandbox faucet; gas is
   *   ether, not counted), at the deep block. Outside addresses (the off-ramp, a wallet transfer's destination) are
   *   not the service's to hold. Sends signed but not yet recorded as mined are looked up on the node first.
   * Service-wide, whatever the run's partners.
   */
  async function chainBalancesBatch(): Promise<
    { checked: number; discrepancies: Discrepancy[]; next: null } | { skipped: string }
  > {
    // No chain node configured: the service holds nothing on a chain it does not have (nothing to compare).
    const discrepancies: Discrepancy[] = [];
    let checked = 0;
    for (const watched of watchedChains) {
      const cursor = await chainCursor(prisma, watched.chain);
      const compared: Array<{ block: bigint; books: Map<string, Decimal>; addresses: string[] | undefined }> = [];
      try {
        const head = await watched.head();
        if (head.deep < 0n) continue;
        const recorded = [];
        for (const send of await unsettledEvmSends(prisma, watched.chain)) {
          for (const hash of send.hashes) {
            const receipt = await watched.receipt(hash);
            if (receipt) recorded.push({ idempotencyKey: send.idempotencyKey, txHash: hash, ...receipt });
          }
        }
        // What the node mined of them is their outcome (the sender records the same on its next attempt).
        for (const mined of recorded) await settleEvmSend(prisma, mined.idempotencyKey, mined);
        if (cursor !== null) {
          const block = cursor - 1n < head.deep ? cursor - 1n : head.deep;
          const books = new Map<string, Decimal>();
          for (const row of await chainBookBalances(prisma, watched.chain, block))
            books.set(`${row.address.toLowerCase()}|${row.currency}`, new Decimal(row.amount));
          // Less what the service swept from them (a payout's coin from the collection to the off-ramp).
          const watchedSet = new Set(watched.addresses.map((address) => address.toLowerCase()));
          for (const m of await evmSendMovements(prisma, watched.chain, block)) {
            if (m.kind !== 'transfer' || !watchedSet.has(m.fromAddress)) continue;
            const key = `${m.fromAddress}|${m.token}`;
            books.set(key, (books.get(key) ?? new Decimal(0)).minus(new Decimal(m.units.toString()).div(1_000_000)));
          }
          if (block >= 0n) compared.push({ block, books, addresses: undefined });
        }
        const sent = await sentBooks(
          watched.chain,
          new Set([...watched.addresses, ...(watched.outsideAddresses ?? [])]),
          head.deep,
          await watched.sendingAddresses(),
        );
        if (sent.addresses.length > 0) compared.push({ block: head.deep, ...sent });
        if (compared.length === 0) return { skipped: `the chain watcher has not read ${watched.chain} yet` };
        for (const group of compared) {
          for (const balance of await watched.balances(group.block, group.addresses)) {
            checked += 1;
            const bookAmount = group.books.get(`${balance.address}|${balance.currency}`) ?? new Decimal(0);
            const chainAmount = new Decimal(balance.amount);
            if (bookAmount.equals(chainAmount)) continue;
            const places = decimalsOf(balance.currency);
            discrepancies.push({
              kind: 'chain_balance_mismatch',
              subjectType: 'chain_address',
              subjectId: `${watched.chain}:${balance.currency}:${balance.address}`,
              detail:
                `the books say ${bookAmount.toFixed(places)} ${balance.currency} at ${balance.address} on ${watched.chain}, ` +
                `balanceOf says ${chainAmount.toFixed(places)} at block ${group.block} ` +
                `(${chainAmount.minus(bookAmount).toFixed(places)} unexplained)`,
            });
          }
        }
      } catch (error) {
        if (error instanceof ProviderUnavailableError)
          return { skipped: `the ${watched.chain} node: ${error.message}` };
        throw error;
      }
    }
    return { checked, discrepancies, next: null };
  }

  /**
   * The service's own mined token sends on `chain` up to `block`, per service address outside `watched` (the watched
   * ones, and the addresses that are not the service's).
   */
  async function sentBooks(
    chain: Blockchain,
    watched: ReadonlySet<string>,
    block: bigint,
    sending: readonly string[],
  ): Promise<{ books: Map<string, Decimal>; addresses: string[] }> {
    const movements = await evmSendMovements(prisma, chain, block);
    // Whoever the service sent from holds the key: a service address; and every hot treasury address, used or not.
    const ours = new Set([...sending, ...movements.filter((m) => m.kind === 'transfer').map((m) => m.fromAddress)]);
    for (const m of movements) if (m.kind === 'mint' || m.toServiceWallet) ours.add(m.toAddress);
    for (const address of watched) ours.delete(address.toLowerCase());
    const units = new Map<string, bigint>();
    const add = (address: string, token: string, amount: bigint) => {
      if (!ours.has(address)) return;
      units.set(`${address}|${token}`, (units.get(`${address}|${token}`) ?? 0n) + amount);
    };
    for (const m of movements) {
      if (m.kind === 'transfer') add(m.fromAddress, m.token, -m.units);
      add(m.toAddress, m.token, m.units);
    }
    const books = new Map<string, Decimal>();
    for (const [key, amount] of units) books.set(key, new Decimal(amount.toString()).div(1_000_000));
    return { books, addresses: [...ours] };
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
