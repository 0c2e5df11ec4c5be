// What a settlement-shaped database transaction costs the Node process through each way this project could run it,
// side by side in one process (docs/benchmark.md "Transactions"):
//   npx tsx scripts/bench-transactions.ts [--transactions N] [--concurrency C] [--rounds R]
// Each transaction locks a transfer and its two accounts (SELECT ... FOR UPDATE), moves the transfer's status and
// both balances, inserts two ledger entries and an event, and wakes the outbox (pg_notify): the statements of one
// settlement step. The variants run in turns (A B C D A B C D ...) so a busy moment of a shared machine hits all
// alike; the table shows CPU of this process and wall time per transaction as ratios to the floor (pg alone), never
// absolute times. Tables of its own in the schema bench_tx of database payments_bench_tx (the private cluster's,
// or DATABASE_URL's).
import { parseArgs } from 'node:util';
import {
  CamelCasePlugin,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  sql,
  type Transaction,
} from 'kysely';
import type { Pool, PoolClient } from 'pg';
import { prepareDatabase } from './lib/database';
import { type DatabaseClient, withDatabaseTransaction } from '../src/persistence/database';
import { createPrismaClient, sqlOf, sqlPoolOf, prismaOf } from '../src/persistence/internal/database';
import type { Prisma } from '../src/persistence/generated/prisma/client';

const { values: options } = parseArgs({
  options: {
    transactions: { type: 'string', default: '400' },
    concurrency: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '5' },
  },
});
const transactions = Number(options.transactions);
const concurrency = Number(options.concurrency);
const rounds = Number(options.rounds);
const transfers = 64;

// The tables are not in schema.prisma: Kysely and the pool are untyped for them here.
type BenchTables = Record<string, Record<string, unknown>>;

/** The statements of one step, as text with parameters: what each variant sends. */
const statements = {
  lockTransfer: 'SELECT id, status, amount FROM bench_tx.transfers WHERE id = $1 FOR UPDATE',
  lockAccounts: 'SELECT id, balance FROM bench_tx.accounts WHERE id IN ($1, $2) ORDER BY id FOR UPDATE',
  moveTransfer: 'UPDATE bench_tx.transfers SET status = $2, updated_at = now() WHERE id = $1 AND status <> $2',
  debit: 'UPDATE bench_tx.accounts SET balance = balance - $2::numeric WHERE id = $1',
  credit: 'UPDATE bench_tx.accounts SET balance = balance + $2::numeric WHERE id = $1',
  entries:
    'INSERT INTO bench_tx.entries (transfer_id, account_id, amount) VALUES ($1, $2, $3::numeric), ($1, $4, $5::numeric)',
  event: 'INSERT INTO bench_tx.events (transfer_id, type, payload) VALUES ($1, $2, $3::jsonb) RETURNING id',
  wake: "SELECT 1 AS woke FROM pg_notify('bench_tx', $1)",
} as const;

interface Step {
  transfer: string;
  from: string;
  to: string;
  status: string;
}

function stepOf(index: number): Step {
  const n = index % transfers;
  return {
    transfer: `t${n}`,
    from: `a${n}`,
    to: `b${n}`,
    status: index % 2 === 0 ? 'completed' : 'processing',
  };
}

const amount = '12.345600';
const payload = (step: Step) => JSON.stringify({ status: step.status, amount });

/** The floor: pg alone, BEGIN and COMMIT on one pooled client. */
async function viaPg(pool: Pool, step: Step): Promise<void> {
  const client: PoolClient = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(statements.lockTransfer, [step.transfer]);
    await client.query(statements.lockAccounts, [step.from, step.to]);
    await client.query(statements.moveTransfer, [step.transfer, step.status]);
    await client.query(statements.debit, [step.from, amount]);
    await client.query(statements.credit, [step.to, amount]);
    await client.query(statements.entries, [step.transfer, step.from, `-${amount}`, step.to, amount]);
    await client.query(statements.event, [step.transfer, 'transaction.updated', payload(step)]);
    await client.query(statements.wake, [step.transfer]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

/** The step as the persistence layer writes it: Kysely's builder, whichever connection it runs on. */
async function kyselyStep(db: Kysely<BenchTables> | Transaction<BenchTables>, step: Step): Promise<void> {
  await db
    .selectFrom('bench_tx.transfers')
    .select(['id', 'status', 'amount'])
    .where('id', '=', step.transfer)
    .forUpdate()
    .executeTakeFirstOrThrow();
  await db
    .selectFrom('bench_tx.accounts')
    .select(['id', 'balance'])
    .where('id', 'in', [step.from, step.to])
    .orderBy('id')
    .forUpdate()
    .execute();
  await db
    .updateTable('bench_tx.transfers')
    .set({ status: step.status, updatedAt: sql`now()` })
    .where('id', '=', step.transfer)
    .where('status', '<>', step.status)
    .executeTakeFirst();
  await db
    .updateTable('bench_tx.accounts')
    .set({ balance: sql`balance - ${amount}::numeric` })
    .where('id', '=', step.from)
    .execute();
  await db
    .updateTable('bench_tx.accounts')
    .set({ balance: sql`balance + ${amount}::numeric` })
    .where('id', '=', step.to)
    .execute();
  await db
    .insertInto('bench_tx.entries')
    .values([
      { transferId: step.transfer, accountId: step.from, amount: `-${amount}` },
      { transferId: step.transfer, accountId: step.to, amount },
    ])
    .execute();
  await db
    .insertInto('bench_tx.events')
    .values({ transferId: step.transfer, type: 'transaction.updated', payload: payload(step) })
    .returning('id')
    .executeTakeFirstOrThrow();
  await sql`SELECT 1 AS woke FROM pg_notify('bench_tx', ${step.transfer})`.execute(db);
}

/** Prisma 7's interactive transaction with the statements as text ($queryRawUnsafe/$executeRawUnsafe). */
async function viaPrismaInteractiveRaw(prisma: DatabaseClient, step: Step): Promise<void> {
  await prismaOf(prisma).$transaction(async (tx: Prisma.TransactionClient) => {
    await tx.$queryRawUnsafe(statements.lockTransfer, step.transfer);
    await tx.$queryRawUnsafe(statements.lockAccounts, step.from, step.to);
    await tx.$executeRawUnsafe(statements.moveTransfer, step.transfer, step.status);
    await tx.$executeRawUnsafe(statements.debit, step.from, amount);
    await tx.$executeRawUnsafe(statements.credit, step.to, amount);
    await tx.$executeRawUnsafe(statements.entries, step.transfer, step.from, `-${amount}`, step.to, amount);
    await tx.$queryRawUnsafe(statements.event, step.transfer, 'transaction.updated', payload(step));
    await tx.$queryRawUnsafe(statements.wake, step.transfer);
  });
}

interface Variant {
  name: string;
  what: string;
  run: (step: Step) => Promise<void>;
}

async function main(): Promise<void> {
  const { url, localCluster } = await prepareDatabase({ localDatabase: 'payments_bench_tx', skipMigrations: true });
  const prisma = createPrismaClient(url, { role: 'bench-tx', poolSize: concurrency });
  try {
    const pool = sqlPoolOf(prisma);
    await pool.query(`
      DROP SCHEMA IF EXISTS bench_tx CASCADE;
      CREATE SCHEMA bench_tx;
      CREATE TABLE bench_tx.transfers (id text PRIMARY KEY, status text NOT NULL, amount numeric(24, 6) NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now());
      CREATE TABLE bench_tx.accounts (id text PRIMARY KEY, balance numeric(24, 6) NOT NULL);
      CREATE TABLE bench_tx.entries (id bigserial PRIMARY KEY, transfer_id text NOT NULL REFERENCES bench_tx.transfers,
        account_id text NOT NULL REFERENCES bench_tx.accounts, amount numeric(24, 6) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now());
      CREATE TABLE bench_tx.events (id bigserial PRIMARY KEY, transfer_id text NOT NULL, type text NOT NULL,
        payload jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
      INSERT INTO bench_tx.transfers (id, status, amount) SELECT 't' || n, 'processing', 10 FROM generate_series(0, ${transfers - 1}) n;
      INSERT INTO bench_tx.accounts (id, balance) SELECT p || n, 0 FROM generate_series(0, ${transfers - 1}) n, (VALUES ('a'), ('b')) v(p);
    `);
    const kysely = sqlOf(prisma) as unknown as Kysely<BenchTables>;
    const variants: Variant[] = [
      { name: 'pg', what: 'pg alone: BEGIN, the statements as text, COMMIT (the floor)', run: (s) => viaPg(pool, s) },
      {
        name: 'kysely-pool',
        what: "a Kysely transaction on the pg pool (main's withDatabaseTransaction)",
        run: (s) => kysely.transaction().execute((tx) => kyselyStep(tx, s)),
      },
      {
        name: 'prisma-interactive+kysely',
        what: "Prisma 7's interactive transaction, Kysely driven through it (prisma7-merged)",
        run: (s) => withInteractive(prisma, (tx) => kyselyStep(tx as unknown as Kysely<BenchTables>, s)),
      },
      {
        name: 'prisma-interactive-raw',
        what: "Prisma 7's interactive transaction, the statements as text ($queryRawUnsafe)",
        run: (s) => viaPrismaInteractiveRaw(prisma, s),
      },
      {
        name: 'withDatabaseTransaction',
        what: "the persistence layer's helper (a Kysely transaction on the pool): the same as kysely-pool, so the gap between the two is the spread",
        run: (s) => withDatabaseTransaction(prisma, (tx) => kyselyStep(sqlOf(tx) as unknown as Kysely<BenchTables>, s)),
      },
    ];

    // Warm every path (JIT, prepared pool connections, Prisma's compiler) before measuring.
    for (const variant of variants) await runBatch(variant, Math.min(100, transactions));

    const totals = new Map(variants.map((variant) => [variant.name, { cpu: 0, wall: 0, count: 0 }]));
    for (let round = 0; round < rounds; round += 1) {
      for (const variant of variants) {
        const measured = await runBatch(variant, transactions);
        const total = totals.get(variant.name)!;
        total.cpu += measured.cpu;
        total.wall += measured.wall;
        total.count += transactions;
      }
    }
    const floor = totals.get('pg')!;
    const perFloor = (value: number, count: number, base: number) => (value / count / (base / floor.count)).toFixed(2);
    console.log(
      `${transactions} transactions x ${rounds} rounds per variant, concurrency ${concurrency}, ratios to pg alone`,
    );
    console.log('variant'.padEnd(26) + 'cpu/tx'.padStart(8) + 'wall/tx'.padStart(9) + '  what');
    for (const variant of variants) {
      const total = totals.get(variant.name)!;
      console.log(
        variant.name.padEnd(26) +
          perFloor(total.cpu, total.count, floor.cpu).padStart(8) +
          perFloor(total.wall, total.count, floor.wall).padStart(9) +
          `  ${variant.what}`,
      );
    }
    await pool.query('DROP SCHEMA bench_tx CASCADE');
  } finally {
    await prisma.$disconnect();
    localCluster?.stopIfStartedHere();
  }
}

/**
 * Prisma's interactive transaction with Kysely through it, as prisma7-merged's withDatabaseTransaction ran every
 * transaction: kept here only to measure it (the branch runs transactions on Kysely over the pool).
 */
async function withInteractive(prisma: DatabaseClient, work: (tx: Kysely<unknown>) => Promise<void>): Promise<void> {
  await prismaOf(prisma).$transaction(async (transaction: Prisma.TransactionClient) => {
    const kysely = new Kysely<unknown>({
      dialect: {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => ({
          init: async () => undefined,
          acquireConnection: async () => ({
            executeQuery: async (query: { sql: string; parameters: readonly unknown[] }) => {
              if (/^\s*select\b/i.test(query.sql) || /\breturning\b/i.test(query.sql))
                return { rows: await transaction.$queryRawUnsafe(query.sql, ...query.parameters) };
              const count = await transaction.$executeRawUnsafe(query.sql, ...query.parameters);
              return { rows: [], numAffectedRows: BigInt(count) };
            },
            streamQuery: () => {
              throw new Error('no streaming');
            },
          }),
          beginTransaction: async () => undefined,
          commitTransaction: async () => undefined,
          rollbackTransaction: async () => undefined,
          releaseConnection: async () => undefined,
          destroy: async () => undefined,
        }),
        createIntrospector: (db) => new PostgresIntrospector(db),
        createQueryCompiler: () => new PostgresQueryCompiler(),
      },
      plugins: [new CamelCasePlugin({ maintainNestedObjectKeys: true })],
    });
    await work(kysely);
  });
}

/** N transactions at the set concurrency: this process's CPU (user + system) and the wall time, in ms. */
async function runBatch(variant: Variant, count: number): Promise<{ cpu: number; wall: number }> {
  let next = 0;
  const startCpu = process.cpuUsage();
  const startWall = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await variant.run(stepOf(next++));
    }),
  );
  const cpu = process.cpuUsage(startCpu);
  return { cpu: (cpu.user + cpu.system) / 1_000, wall: performance.now() - startWall };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
