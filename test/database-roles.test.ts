// Least privilege in PostgreSQL (prisma/migrations/20261126204800_service_roles, docs/operations.md "Database
// roles"): the API's and the worker's roles write rows but cannot rewrite the books. Each refusal is asked of the
// database itself, connected as that role, as the production stack connects the services.
import { Client } from 'pg';
import { randomUUID } from 'node:crypto';
import { serviceRoles, serviceRoleUrl } from '../scripts/lib/database';
import { createPrismaClient } from '../src/persistence/internal/database';
import { deleteEventsCreatedBefore } from '../src/persistence/events';
import { createPartner } from '../src/services/partners';
import { holdFileLock } from './support/file-locks';

const ownerUrl = process.env.DATABASE_URL!;

async function connectAs(which: keyof typeof serviceRoles): Promise<Client> {
  const client = new Client({ connectionString: serviceRoleUrl(ownerUrl, which) });
  await client.connect();
  return client;
}

/** The error PostgreSQL answers `statement` with, or 'accepted'. */
async function answer(client: Client, statement: string, values: unknown[] = []): Promise<string> {
  try {
    const result = await client.query(statement, values);
    return `accepted (${result.rowCount} rows)`;
  } catch (error) {
    return (error as Error).message;
  }
}

describe('the service roles', () => {
  let owner: Client;
  let api: Client;
  let worker: Client;
  let partnerId: string;
  const recentEvent = randomUUID();
  const oldEvent = randomUUID();
  let releasePurgeLock: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    // Its purge below deletes every event older than two days: not while test/maintenance.test.ts has its own.
    releasePurgeLock = await holdFileLock(ownerUrl, 'events-purge');
    owner = new Client({ connectionString: ownerUrl });
    await owner.connect();
    const prisma = createPrismaClient(ownerUrl, { role: 'test', poolSize: 1 });
    try {
      partnerId = (await createPartner(prisma, 'Roles test partner', 'sandbox')).partner_id;
    } finally {
      await prisma.$disconnect();
    }
    for (const [id, age] of [
      [recentEvent, '1 minute'],
      [oldEvent, '3 days'],
    ] as const)
      await owner.query(
        `INSERT INTO events (id, partner_id, event, event_type, resource_id, resource_status, resource, created_at)
         VALUES ($1, $2, 'transaction.updated', 'transaction', $1, 'completed', '{}', now() - $3::interval)`,
        [id, partnerId, age],
      );
    [api, worker] = await Promise.all([connectAs('api'), connectAs('worker')]);
  });

  afterAll(async () => {
    await Promise.all([api?.end(), worker?.end(), owner?.end()]);
    await releasePurgeLock?.();
  });

  it('connect as themselves, read and write rows', async () => {
    expect((await api.query('SELECT current_user AS role')).rows[0].role).toBe(serviceRoles.api);
    expect((await worker.query('SELECT current_user AS role')).rows[0].role).toBe(serviceRoles.worker);
    expect(await answer(api, 'SELECT count(*) FROM ledger_entries')).toMatch(/^accepted/);
    expect(await answer(api, 'UPDATE partners SET name = name WHERE id = $1', [partnerId])).toBe('accepted (1 rows)');
  });

  it.each(['api', 'worker'] as const)('%s: cannot update or delete ledger entries', async (which) => {
    const client = which === 'api' ? api : worker;
    expect(await answer(client, 'UPDATE ledger_entries SET amount = amount')).toBe(
      'permission denied for table ledger_entries',
    );
    expect(await answer(client, 'DELETE FROM ledger_entries')).toBe('permission denied for table ledger_entries');
  });

  it.each(['api', 'worker'] as const)('%s: cannot update or delete the audit trail', async (which) => {
    const client = which === 'api' ? api : worker;
    expect(await answer(client, "UPDATE operator_actions SET operator = 'someone else'")).toBe(
      'permission denied for table operator_actions',
    );
    expect(await answer(client, 'DELETE FROM operator_actions')).toBe('permission denied for table operator_actions');
  });

  // Per table (prisma/migrations/20261126233600_service_role_table_grants): each role loses what its process never uses.
  it('api: neither writes nor reads the audit trail (the worker records it)', async () => {
    const row = [randomUUID(), 'transaction-x', 'forged', 'transaction', randomUUID(), 'refund', 'mallory'];
    const insert = `INSERT INTO operator_actions (id, workflow_id, update_id, resource_type, resource_id, action, operator, details, recorded_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, '{}', now())`;
    expect(await answer(api, insert, row)).toBe('permission denied for table operator_actions');
    expect(await answer(api, 'SELECT count(*) FROM operator_actions')).toBe(
      'permission denied for table operator_actions',
    );
    expect(await answer(worker, 'SELECT count(*) FROM operator_actions')).toMatch(/^accepted/);
    expect(await answer(worker, insert, [randomUUID(), `transaction-${randomUUID()}`, ...row.slice(2)])).toBe(
      'accepted (1 rows)',
    );
  });

  it("worker: no access to partners' credentials and rate limits, partners read-only", async () => {
    expect(await answer(worker, 'SELECT count(*) FROM api_keys')).toBe('permission denied for table api_keys');
    expect(await answer(worker, 'SELECT count(*) FROM rate_limits')).toBe('permission denied for table rate_limits');
    expect(await answer(worker, 'DELETE FROM rate_limits')).toBe('permission denied for table rate_limits');
    expect(await answer(worker, 'SELECT name FROM partners WHERE id = $1', [partnerId])).toBe('accepted (1 rows)');
    expect(await answer(worker, 'UPDATE partners SET name = name WHERE id = $1', [partnerId])).toBe(
      'permission denied for table partners',
    );
    expect(await answer(api, 'SELECT count(*) FROM api_keys')).toMatch(/^accepted/);
  });

  it('api: cannot update or delete events', async () => {
    expect(await answer(api, "UPDATE events SET resource_status = 'failed'")).toBe(
      'permission denied for table events',
    );
    expect(await answer(api, 'DELETE FROM events')).toBe('permission denied for table events');
  });

  it('worker: cannot rewrite an event, nor delete one younger than a day', async () => {
    expect(await answer(worker, "UPDATE events SET resource_status = 'failed'")).toBe(
      'permission denied for table events',
    );
    expect(await answer(worker, 'UPDATE events SET id = id WHERE id = $1', [oldEvent])).toBe(
      'new row violates row-level security policy for table "events"',
    );
    await answer(worker, 'DELETE FROM events WHERE id = $1', [recentEvent]);
    expect((await owner.query('SELECT id FROM events WHERE id = $1', [recentEvent])).rowCount).toBe(1);
  });

  it('worker: the retention purge still removes old events', async () => {
    const prisma = createPrismaClient(serviceRoleUrl(ownerUrl, 'worker'), { role: 'worker', poolSize: 1 });
    try {
      await deleteEventsCreatedBefore(prisma, new Date(Date.now() - 2 * 86_400_000));
    } finally {
      await prisma.$disconnect();
    }
    expect((await owner.query('SELECT id FROM events WHERE id = $1', [oldEvent])).rowCount).toBe(0);
    expect((await owner.query('SELECT id FROM events WHERE id = $1', [recentEvent])).rowCount).toBe(1);
  });

  it.each(['api', 'worker'] as const)('%s: no schema changes, no TRUNCATE, no migration records', async (which) => {
    const client = which === 'api' ? api : worker;
    expect(await answer(client, 'CREATE TABLE intruder (id int)')).toBe('permission denied for schema public');
    expect(await answer(client, 'ALTER TABLE ledger_entries DISABLE TRIGGER ALL')).toBe(
      'must be owner of table ledger_entries',
    );
    expect(await answer(client, 'TRUNCATE events')).toBe('permission denied for table events');
    expect(await answer(client, 'DELETE FROM _prisma_migrations')).toBe(
      'permission denied for table _prisma_migrations',
    );
    expect(await answer(client, 'SELECT count(*) FROM _prisma_migrations')).toMatch(/^accepted/);
  });
});
