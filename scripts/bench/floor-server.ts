// The HTTP floor of `npm run bench`: bare Koa routes doing one query each on the table the API reads, the API's
// transaction list statement run with pg, and one starting a no-op workflow, with none of the service's layers
// (auth, logging, validation, idempotency, presenters). Also a webhook receiver that answers 204, so the scale
// section's partners have real deliveries to copy. A separate process, like the API. Environment: PORT,
// DATABASE_URL, FLOOR_TABLE (customers | transactions), TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, BENCH_TASK_QUEUE.
import Router from '@koa/router';
import { Client, Connection } from '@temporalio/client';
import Koa from 'koa';
import { randomUUID } from 'node:crypto';
import type { CompiledQuery } from 'kysely';
import { Pool } from 'pg';
import { createPrismaClient } from '../../src/persistence/internal/database';
import { listTransactionRows } from '../../src/persistence/transactions';
import { capturingClient } from './capture';

const table = process.env.FLOOR_TABLE === 'transactions' ? 'transactions' : 'customers';

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL!;
  // The API's pool settings (createPrismaClient), so only the layers above the query differ.
  const prisma = createPrismaClient(databaseUrl, { role: 'bench-floor' });
  const pool = new Pool({ connectionString: databaseUrl, max: 10 });
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233' });
  const temporal = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' });
  const taskQueue = process.env.BENCH_TASK_QUEUE ?? 'bench-engine';
  const delegate = (prisma as unknown as Record<string, { findUnique(args: object): Promise<unknown> }>)[
    table === 'customers' ? 'customer' : 'transaction'
  ]!;

  const listStatement = await transactionListStatement(prisma);

  const router = new Router();
  router.get('/prisma/:id', async (ctx) => {
    const row = await delegate.findUnique({ where: { id: ctx.params.id } });
    if (!row) ctx.throw(404);
    ctx.body = row;
  });
  router.get('/pg/:id', async (ctx) => {
    const { rows } = await pool.query(`SELECT * FROM ${table} WHERE id = $1`, [ctx.params.id]);
    if (rows.length === 0) ctx.throw(404);
    ctx.body = rows[0];
  });
  router.get('/pg-list/transactions', async (ctx) => {
    const { rows } = await pool.query(listStatement.sql, listStatement.parameters(String(ctx.query.partner_id)));
    ctx.body = rows;
  });
  router.post('/webhook', (ctx) => {
    ctx.status = 204;
  });
  router.post('/noop-start', async (ctx) => {
    const handle = await temporal.workflow.start('noopWorkflow', { taskQueue, workflowId: `noop-${randomUUID()}` });
    ctx.status = 201;
    ctx.body = { workflow_id: handle.workflowId };
  });
  const app = new Koa();
  app.use(router.routes());
  const port = Number(process.env.PORT ?? 3999);
  app.listen(port, '127.0.0.1', () => console.error(`floor server listening on ${port} (${table})`));
}

const placeholderPartner = '00000000-0000-4000-8000-000000000000';

/**
 * The statement GET /v1/transactions?limit=100 runs (a first page of a partner's transactions with their accounts),
 * as the persistence layer compiles it: captured once by running it for a partner that has no rows, so the route
 * sends the very same SQL text with only the partner id changed.
 */
async function transactionListStatement(
  prisma: ReturnType<typeof createPrismaClient>,
): Promise<{ sql: string; parameters: (partnerId: string) => unknown[] }> {
  const captured: CompiledQuery[] = [];
  await listTransactionRows(
    capturingClient(prisma, (query) => captured.push(query)),
    { partnerId: placeholderPartner },
    { direction: 'desc', take: 101 },
  );
  const [query] = captured;
  if (!query || captured.length !== 1) throw new Error(`expected one list statement, got ${captured.length}`);
  const at = query.parameters.indexOf(placeholderPartner);
  if (at < 0) throw new Error('the list statement does not take the partner id as a parameter');
  return {
    sql: query.sql,
    parameters: (partnerId) => query.parameters.map((value, index) => (index === at ? partnerId : value)),
  };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
