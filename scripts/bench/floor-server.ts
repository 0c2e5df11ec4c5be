// The HTTP floor of `npm run bench`: bare Koa routes doing one query each on the table the API reads, and one
// starting a no-op workflow, with none of the service's layers (auth, logging, validation, idempotency). A
// separate process, like the API. Environment: PORT, DATABASE_URL, FLOOR_TABLE (customers | transactions),
// TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, BENCH_TASK_QUEUE.
import Router from '@koa/router';
import { Client, Connection } from '@temporalio/client';
import Koa from 'koa';
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { createPrismaClient } from '../../src/persistence/database';

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

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
