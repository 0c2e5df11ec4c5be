// The daily reconciliation, for operators (docs/reconciliation.md). Reports are never shown to partners.
//   npm run reconciliation -- run [--partner <id>]...   runs it now (a workflow on the worker) and prints the report
//   npm run reconciliation -- show [<report id>|latest] the report and its discrepancies (JSON lines)
//   npm run reconciliation -- list [--limit <n>]        the latest reports, newest first
//   npm run reconciliation -- sandbox-statement drop <key> | amount <key> <amount> |
//        extra <key> <kind> <currency> <amount> | clear [<key>] | list
//                                                        sandbox: make its provider statement disagree (or agree again)
// TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and TEMPORAL_TASK_QUEUE as for the worker (defaults: the dev stack's).
import { parseArgs } from 'node:util';
import type { Client } from '@temporalio/client';
import type { Database, DatabaseClient } from '../src/persistence/database';
import {
  findReconciliationReport,
  listDiscrepancies,
  listReconciliationReports,
} from '../src/persistence/reconciliation';
import {
  adjustSandboxStatement,
  clearSandboxStatementAdjustments,
  listSandboxStatementAdjustments,
} from '../src/persistence/sandbox-statements';
import { loadTemporalTls } from '../src/config';
import { connectTemporalClient } from '../src/temporal/client';
import { reconciliationWorkflow } from '../workflows/reconciliation';
import { CommandUsageError, runOperatorCommand } from './lib/operator-command';

const usage = [
  'usage: npm run reconciliation -- run [--partner <partner id>]...',
  '       npm run reconciliation -- show [<report id>|latest] [--limit <n>]',
  '       npm run reconciliation -- list [--limit <n>]',
  '       npm run reconciliation -- sandbox-statement drop <idempotency key>',
  '       npm run reconciliation -- sandbox-statement amount <idempotency key> <amount>',
  '       npm run reconciliation -- sandbox-statement extra <idempotency key> <kind> <currency> <amount>',
  '       npm run reconciliation -- sandbox-statement clear [<idempotency key>]',
  '       npm run reconciliation -- sandbox-statement list',
].join('\n');

/** A positive decimal of at most 6 places, as the statement's amounts are kept (numeric(24, 6)). */
const amountText = /^(0|[1-9]\d{0,17})(\.\d{1,6})?$/;

/**
 * The sandbox statement's disagreements (docs/reconciliation.md): the operation under a key left off it, shown with
 * another amount, or a line the service never asked for; `clear` makes it agree again. Read by the sandbox's
 * provider statement only (a production worker never reads this table).
 */
export async function sandboxStatementCommand(args: string[], db: DatabaseClient): Promise<string[]> {
  const [action, key, ...rest] = args;
  const positive = (text: string | undefined) => {
    if (!text || !amountText.test(text) || /^0(\.0*)?$/.test(text)) throw new ReconciliationCommandError(usage);
    return text;
  };
  switch (action) {
    case 'drop':
      if (!key || rest.length > 0) throw new ReconciliationCommandError(usage);
      await adjustSandboxStatement(db, { action, idempotencyKey: key });
      break;
    case 'amount':
      if (!key || rest.length !== 1) throw new ReconciliationCommandError(usage);
      await adjustSandboxStatement(db, { action, idempotencyKey: key, amount: positive(rest[0]) });
      break;
    case 'extra': {
      const [kind, currency, amount] = rest;
      if (!key || rest.length !== 3 || !kind || !currency) throw new ReconciliationCommandError(usage);
      await adjustSandboxStatement(db, { action, idempotencyKey: key, kind, currency, amount: positive(amount) });
      break;
    }
    case 'clear':
      if (rest.length > 0) throw new ReconciliationCommandError(usage);
      return [JSON.stringify({ cleared: await clearSandboxStatementAdjustments(db, key ?? null) })];
    case 'list':
      if (key !== undefined) throw new ReconciliationCommandError(usage);
      break;
    default:
      throw new ReconciliationCommandError(usage);
  }
  return (await listSandboxStatementAdjustments(db)).map((adjustment) => JSON.stringify(adjustment));
}

export class ReconciliationCommandError extends CommandUsageError {}

/** A report and (up to `limit` of) its discrepancies, as JSON lines: the report first. */
export async function showReport(db: DatabaseClient, id: string, limit: number): Promise<string[]> {
  const report = await findReconciliationReport(db, id);
  if (!report) throw new ReconciliationCommandError(`no reconciliation report ${id}`);
  const found = await listDiscrepancies(db, report.id, limit);
  return [JSON.stringify(report), ...found.map((item) => JSON.stringify(item))];
}

export async function reconciliationCommand(
  argv: string[],
  db: DatabaseClient,
  temporal: () => Promise<{ client: Client; taskQueue: string; close(): Promise<void> }>,
): Promise<string[]> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { partner: { type: 'string', multiple: true }, limit: { type: 'string' } },
  });
  if (positionals[0] === 'sandbox-statement') return sandboxStatementCommand(positionals.slice(1), db);
  const [command, id, ...extra] = positionals;
  const limit = Number(values.limit ?? 100);
  if (extra.length > 0 || !Number.isInteger(limit) || limit < 1) throw new ReconciliationCommandError(usage);
  switch (command) {
    case 'run': {
      if (id !== undefined) throw new ReconciliationCommandError(usage);
      const connection = await temporal();
      try {
        const summary = await connection.client.workflow.execute(reconciliationWorkflow, {
          workflowId: `reconciliation-manual-${new Date().toISOString()}`,
          taskQueue: connection.taskQueue,
          args: [{ ...(values.partner && { partnerIds: values.partner }) }],
        });
        return showReport(db, summary.reportId, limit);
      } finally {
        await connection.close();
      }
    }
    case 'show':
      return showReport(db, id ?? 'latest', limit);
    case 'list':
      if (id !== undefined) throw new ReconciliationCommandError(usage);
      return (await listReconciliationReports(db, limit)).map((report) => JSON.stringify(report));
    default:
      throw new ReconciliationCommandError(usage);
  }
}

if (require.main === module) {
  runOperatorCommand('reconciliation', (prisma) => {
    const temporal = async () => {
      const taskQueue = process.env.TEMPORAL_TASK_QUEUE || 'payments';
      const { client, connection } = await connectTemporalClient({
        address: process.env.TEMPORAL_ADDRESS || 'localhost:7233',
        namespace: process.env.TEMPORAL_NAMESPACE || 'default',
        taskQueue,
        callTimeoutMs: 5_000,
        tls: loadTemporalTls(process.env),
      });
      return { client, taskQueue, close: () => connection.close() };
    };
    return reconciliationCommand(process.argv.slice(2), prisma, temporal);
  });
}
