// Checks several scenarios share: no resource half-made (every row whose lifecycle is a workflow has that workflow
// in Temporal), every Idempotency-Key settled to exactly one resource, and a reconciliation that looked at everything
// and found nothing.
import { WorkflowNotFoundError } from '@temporalio/client';
import type { ReconciliationSummary } from '../../activities/reconciliation';
import { reconciliationChecks } from '../../src/domain/reconciliation';
import { workflowIds } from '../../src/temporal/workflow-ids';
import { HttpClient, HttpOutcome, HttpRequest, HttpResponse } from './http';
import type { ScenarioReport } from './report';
import { ChaosSystem } from './system';
import { pause, waitUntil } from '../lib/wait';

/** How long the workflow-start relay may take to start what the API could not (it sweeps every second here). */
const RELAY_LIMIT_MS = 60_000;

/**
 * Every customer, quote and virtual account of the partner has its workflow (the write path's promise: a committed
 * resource always gets its lifecycle). Waits, bounded, for the relay; reports each resource still without one.
 * Returns how many resources were checked.
 */
export async function checkEveryResourceHasItsWorkflow(
  system: ChaosSystem,
  partnerId: string,
  report: ReportLike,
): Promise<number> {
  const [customers, quotes, virtualAccounts] = await Promise.all([
    system.prisma.customer.findMany({ where: { partnerId }, select: { id: true } }),
    system.prisma.quote.findMany({ where: { partnerId }, select: { id: true } }),
    system.prisma.virtualAccount.findMany({ where: { partnerId }, select: { id: true } }),
  ]);
  let missing = [
    ...customers.map((row) => workflowIds.customerVerification(row.id)),
    ...quotes.map((row) => workflowIds.quote(row.id)),
    ...virtualAccounts.map((row) => workflowIds.virtualAccount(row.id)),
  ];
  const total = missing.length;
  const deadline = Date.now() + RELAY_LIMIT_MS;
  while (missing.length > 0) {
    const stillMissing: string[] = [];
    for (let index = 0; index < missing.length; index += 20) {
      const batch = missing.slice(index, index + 20);
      const found = await Promise.all(batch.map((id) => workflowExists(system, id)));
      batch.forEach((id, at) => {
        if (!found[at]) stillMissing.push(id);
      });
    }
    missing = stillMissing;
    if (missing.length === 0 || Date.now() > deadline) break;
    await pause(500);
  }
  for (const id of missing)
    report.fail(
      `half-made: row committed but workflow ${id} does not exist (or cannot be described) ${RELAY_LIMIT_MS / 1000} s later`,
    );
  // An intent whose workflow the API started just before it was killed is marked by the relay's next sweep (it
  // leaves intents younger than the request deadline to the API): wait for it, bounded like the workflows above.
  const countUnstarted = () => system.prisma.workflowStart.count({ where: { partnerId, startedAt: null } });
  await waitUntil(async () => (await countUnstarted()) === 0, RELAY_LIMIT_MS, 500);
  const unstarted = await countUnstarted();
  report.check(unstarted === 0, () => `${unstarted} workflow start intent(s) never started by the relay`);
  return total;
}

async function workflowExists(system: ChaosSystem, workflowId: string): Promise<boolean> {
  try {
    await system.temporal.workflow.getHandle(workflowId).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    // An overloaded dev server answers describe with timeouts, even NamespaceNotFound while its namespace cache
    // cannot refresh: not an answer, so ask again at the next round (bounded by RELAY_LIMIT_MS).
    return false;
  }
}

/**
 * The partner's state, for "nothing changed" checks: its rows in every table (tables of customers' children through
 * their customer; other tables whole), and a digest of the content of the tables a write would touch.
 */
export async function partnerState(system: ChaosSystem, partnerId: string): Promise<Record<string, string>> {
  const columns = await system.prisma.$queryRaw<Array<{ table_name: string; column_name: string }>>`
    SELECT table_name::text AS table_name, column_name::text AS column_name FROM information_schema.columns
    WHERE table_schema = 'public' AND column_name IN ('partner_id', 'customer_id')`;
  const tables = await system.prisma.$queryRaw<Array<{ table_name: string }>>`
    SELECT table_name::text AS table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`;
  const has = (table: string, column: string) =>
    columns.some((row) => row.table_name === table && row.column_name === column);
  const state: Record<string, string> = {};
  // Idempotency keys store refusals (4xx) by design and rate_limits counts requests; quotes and deliveries change
  // status on their own (counted, not digested).
  const contentOf = [
    'customers',
    'beneficiaries',
    'customer_documents',
    'verification_steps',
    'external_accounts',
    'wallets',
    'virtual_accounts',
    'webhook_configs',
  ];
  for (const { table_name: table } of tables) {
    if (['_prisma_migrations', 'idempotency_keys', 'rate_limits'].includes(table)) continue;
    const scope = has(table, 'partner_id')
      ? `WHERE t.partner_id = '${partnerId}'`
      : has(table, 'customer_id')
        ? `WHERE t.customer_id IN (SELECT id FROM customers WHERE partner_id = '${partnerId}')`
        : '';
    const [row] = await system.prisma.$queryRawUnsafe<Array<{ count: bigint; digest: string | null }>>(
      `SELECT count(*) AS count, ${contentOf.includes(table) ? "md5(string_agg(t::text, ',' ORDER BY t::text))" : 'NULL'} AS digest FROM "${table}" t ${scope}`,
    );
    state[table] = `${row?.count ?? 0}${row?.digest ? ` ${row.digest}` : ''}`;
  }
  return state;
}

export type ReportLike = Pick<ScenarioReport, 'fail' | 'check'>;

/** One create sent with an Idempotency-Key, and every answer it got. */
export interface KeyedRequest {
  key: string;
  kind: string;
  request: HttpRequest;
  answers: HttpOutcome[];
}

/** Is this answer final for the partner (a resource or a refusal to keep), rather than "retry"? */
export function isFinal(outcome: HttpOutcome): boolean {
  return outcome.kind === 'response' && outcome.status !== 503 && outcome.status !== 409 && outcome.status < 500;
}

/**
 * Sends every request again with its key until it has a final answer, as a partner's retrying client would
 * (honouring Retry-After; each key bounded by `limitMs` from its first retry). Returns the final answers by key.
 */
export async function retryUntilFinal(
  api: HttpClient,
  requests: KeyedRequest[],
  limitMs: number,
  concurrency = 8,
): Promise<Map<string, HttpResponse>> {
  const finals = new Map<string, HttpResponse>();
  let next = 0;
  const workerLoop = async () => {
    while (next < requests.length) {
      const keyed = requests[next++] as KeyedRequest;
      // Each key is retried for limitMs from its own first retry, as a partner's client would: with hundreds of
      // keys one shared deadline ran out while a slow machine was still working through the queue.
      const deadline = Date.now() + limitMs;
      for (;;) {
        const outcome = await api.send({
          ...keyed.request,
          headers: { ...keyed.request.headers, 'Idempotency-Key': keyed.key },
        });
        keyed.answers.push(outcome);
        if (isFinal(outcome)) {
          finals.set(keyed.key, outcome as HttpResponse);
          break;
        }
        if (Date.now() > deadline) break;
        const retryAfter = outcome.kind === 'response' ? Number(outcome.headers['retry-after'] ?? 0) : 0;
        await pause(Math.min(Math.max(retryAfter * 1000, 200), 2000));
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, workerLoop));
  return finals;
}

/**
 * Each key yields exactly one resource: its final answer is a 201, every 2xx it ever got names the same resource,
 * and no two keys name the same one. Returns the resource id of each key.
 */
export function checkOneResourcePerKey(
  requests: KeyedRequest[],
  finals: Map<string, HttpResponse>,
  report: ReportLike,
): Map<string, string> {
  const resourceOfKey = new Map<string, string>();
  const keyOfResource = new Map<string, string>();
  for (const keyed of requests) {
    const final = finals.get(keyed.key);
    if (
      !report.check(
        final?.status === 201,
        () =>
          `key ${keyed.key} (${keyed.kind}) never got its 201: ${final ? `${final.status} ${final.text.slice(0, 200)}` : 'still retrying at the limit'}`,
      )
    )
      continue;
    const id = (final?.body as { id?: string }).id as string;
    for (const answer of keyed.answers) {
      if (answer.kind !== 'response' || answer.status >= 300) continue;
      const answeredId = (answer.body as { id?: string } | undefined)?.id;
      report.check(answeredId === id, () => `key ${keyed.key} answered two resources: ${answeredId} and ${id}`);
    }
    const other = keyOfResource.get(id);
    report.check(other === undefined, () => `keys ${other} and ${keyed.key} both answered resource ${id}`);
    keyOfResource.set(id, keyed.key);
    resourceOfKey.set(keyed.key, id);
  }
  return resourceOfKey;
}

/**
 * A reconciliation after the chaos (docs/chaos.md): clean, which also means no check was skipped; every check ran,
 * and the provider-statement checks compared lines (a sandbox statement that read nothing would prove nothing).
 * Stuck-money findings are not excused: their bounds are hours and a run lasts minutes, and the scenarios wait for
 * every transaction to end before it, so anything found is a real failure.
 */
export function checkReconciliation(report: ReportLike, summary: ReconciliationSummary): void {
  const name = `reconciliation ${summary.reportId} (npm run reconciliation -- show ${summary.reportId})`;
  report.check(
    summary.status === 'clean',
    () =>
      `${name} is ${summary.status}, with ${summary.discrepancyCount} discrepancies: ${JSON.stringify(summary.checks)}`,
  );
  for (const check of reconciliationChecks) {
    const outcome = summary.checks[check];
    report.check(outcome !== undefined && 'checked' in outcome, () => `${name}: ${check} ${JSON.stringify(outcome)}`);
  }
  for (const check of ['provider_statement', 'statement_postings'] as const) {
    const outcome = summary.checks[check];
    report.check(
      outcome !== undefined && 'checked' in outcome && outcome.checked > 0,
      () => `${name}: ${check} compared nothing (${JSON.stringify(outcome)})`,
    );
  }
}
