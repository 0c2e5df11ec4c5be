// The daily reconciliation, for operators (docs/reconciliation.md). Reports are never shown to partners.
//   npm run reconciliation -- run [--partner <id>]...   runs it now (a workflow on the worker) and prints the report
//   npm run reconciliation -- show [<report id>|latest] the report and its discrepancies (JSON lines)
//   npm run reconciliation -- list [--limit <n>]        the latest reports, newest first
// TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and TEMPORAL_TASK_QUEUE as for the worker (defaults: the dev stack's).
import { parseArgs } from 'node:util';
import type { Client } from '@temporalio/client';
import { createPrismaClient, type Db } from '../src/persistence/database';
import {
  findReconciliationReport,
  listDiscrepancies,
  listReconciliationReports,
} from '../src/persistence/reconciliation';
import { connectTemporalClient } from '../src/temporal/client';
import { reconciliationWorkflow } from '../workflows/reconciliation';
import { prepareDatabase } from './lib/database';

const usage = [
  'usage: npm run reconciliation -- run [--partner <partner id>]...',
  '       npm run reconciliation -- show [<report id>|latest] [--limit <n>]',
  '       npm run reconciliation -- list [--limit <n>]',
].join('\n');

export class ReconciliationCommandError extends Error {}

/** A report and (up to `limit` of) its discrepancies, as JSON lines: the report first. */
export async function showReport(db: Db, id: string, limit: number): Promise<string[]> {
  const report = await findReconciliationReport(db, id);
  if (!report) throw new ReconciliationCommandError(`no reconciliation report ${id}`);
  const found = await listDiscrepancies(db, report.id, limit);
  return [JSON.stringify(report), ...found.map((item) => JSON.stringify(item))];
}

export async function reconciliationCommand(
  argv: string[],
  db: Db,
  temporal: () => Promise<{ client: Client; taskQueue: string; close(): Promise<void> }>,
): Promise<string[]> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { partner: { type: 'string', multiple: true }, limit: { type: 'string' } },
  });
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

async function main(): Promise<void> {
  const { url, localCluster } = await prepareDatabase({ localDatabase: 'payments', skipMigrations: true });
  const prisma = createPrismaClient(url, { role: 'reconciliation', poolSize: 1 });
  const temporal = async () => {
    const taskQueue = process.env.TEMPORAL_TASK_QUEUE || 'payments';
    const { client, connection } = await connectTemporalClient({
      address: process.env.TEMPORAL_ADDRESS || 'localhost:7233',
      namespace: process.env.TEMPORAL_NAMESPACE || 'default',
      taskQueue,
      callTimeoutMs: 5_000,
    });
    return { client, taskQueue, close: () => connection.close() };
  };
  try {
    for (const line of await reconciliationCommand(process.argv.slice(2), prisma, temporal))
      process.stdout.write(`${line}\n`);
  } catch (error) {
    if (!(error instanceof ReconciliationCommandError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exitCode = 2;
  } finally {
    await prisma.$disconnect();
    localCluster?.stopIfStartedHere();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
