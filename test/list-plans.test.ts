// Every list query the API makes has an index path whose cost does not depend on the partner's total rows: its
// PostgreSQL plan, with sequential scans and sorts disabled, never scans a large table in full nor sorts the page, and
// the listed table has an index whose columns are the list's equality filters then the keyset's (created_at, id).
// The queries are the persistence layer's own, captured as Kysely compiles them.
import type { CompiledQuery } from 'kysely';
import { Client } from 'pg';
import { randomUUID } from 'node:crypto';
import { connectionSettings, defaultDatabaseTimeouts, type DatabaseClient } from '../src/persistence/database';
import {
  createPrismaClient,
  SQL_BUILDER,
  sqlBuilderOn,
  sqlPoolOf,
  prismaOf,
} from '../src/persistence/internal/database';
import type { KeysetQuery } from '../src/domain/pages';
import { listBalanceTransactions } from '../src/persistence/balance-transactions';
import { listCustomers } from '../src/persistence/customers';
import { listPartnerEvents } from '../src/persistence/events';
import { listExternalAccounts } from '../src/persistence/external-accounts';
import { listTransactionRows } from '../src/persistence/transactions';
import { listVirtualAccounts } from '../src/persistence/virtual-accounts';
import { listWalletTransfers } from '../src/persistence/wallet-transfers';
import { listWallets } from '../src/persistence/wallets';
import { listEventDeliveries, listUndispatchedDeliveries } from '../src/persistence/webhooks';
import { readMonitoringSnapshot } from '../src/persistence/monitoring';

const largeTables = [
  'transactions',
  'events',
  'customers',
  'beneficiaries',
  'external_accounts',
  'wallets',
  'ledger_accounts',
  'ledger_entries',
  'virtual_accounts',
  'wallet_transfers',
  'webhook_deliveries',
  'webhook_delivery_attempts',
];

let prisma: DatabaseClient;
let captured: CompiledQuery[] = [];
let explainer: Client;

beforeAll(async () => {
  const base = createPrismaClient(process.env.DATABASE_URL!, { role: 'test', poolSize: 2 });
  const builder = sqlBuilderOn(sqlPoolOf(base), (query) => captured.push(query));
  prisma = new Proxy(base, {
    get: (target, property) => (property === SQL_BUILDER ? builder : Reflect.get(target, property)),
  });
  explainer = new Client(connectionSettings(process.env.DATABASE_URL!, 'test-plans', defaultDatabaseTimeouts));
  await explainer.connect();
  // Like sequential scans, sorts are only a last resort: a Sort left in a plan means no index gives the keyset order
  // (the tables here are too small for the costs alone to tell).
  await explainer.query('SET enable_seqscan = off');
  await explainer.query('SET enable_sort = off');
});
afterAll(async () => {
  await explainer?.end();
  await prismaOf(prisma)?.$disconnect();
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Filter?: string;
  Plans?: PlanNode[];
}

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

async function planOf(query: CompiledQuery): Promise<PlanNode[]> {
  const { rows } = await explainer.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
    `EXPLAIN (FORMAT JSON) ${query.sql}`,
    query.parameters as unknown[],
  );
  return nodesOf(rows[0]!['QUERY PLAN'][0]!.Plan);
}

/** The indexes of `table` (partial ones too) whose columns start with `columns`: the equality filters in any order, then (created_at, id). */
async function indexesLeadingWith(table: string, columns: string[]): Promise<string[]> {
  const { rows } = await explainer.query<{ name: string; columns: string[] }>(
    `SELECT i.relname AS name, array_agg(a.attname::text ORDER BY k.position) AS columns
     FROM pg_index x
     JOIN pg_class i ON i.oid = x.indexrelid
     JOIN pg_class t ON t.oid = x.indrelid
     CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, position)
     JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
     WHERE t.relname = $1
     GROUP BY i.relname`,
    [table],
  );
  const filters = columns.slice(0, -2).sort().join(',');
  return rows
    .filter((row) => {
      const leading = row.columns.slice(0, columns.length);
      return (
        leading.length === columns.length &&
        leading.slice(0, -2).sort().join(',') === filters &&
        leading.slice(-2).join(',') === 'created_at,id'
      );
    })
    .map((row) => row.name);
}

/** The statements `list` runs, for a first page and for a page after a cursor (both keyset shapes). */
async function statementsOf(list: (keyset: KeysetQuery) => Promise<unknown>): Promise<CompiledQuery[]> {
  captured = [];
  const cursor = { createdAt: new Date(), id: randomUUID() };
  await list({ direction: 'desc', take: 101 });
  await list({ direction: 'desc', take: 101, after: cursor, createdFrom: new Date(0), createdTo: new Date() });
  await list({ direction: 'asc', take: 101, before: cursor });
  return captured;
}

const partnerId = randomUUID();
const customerId = randomUUID();
const walletId = randomUUID();
const eventId = randomUUID();

// Each list shape: the table it pages, and the columns its equality filters name.
const shapes: Array<{
  name: string;
  table: string;
  filters: string[];
  list: (keyset: KeysetQuery) => Promise<unknown>;
}> = [
  {
    name: 'transactions',
    table: 'transactions',
    filters: ['partner_id'],
    list: (k) => listTransactionRows(prisma, { partnerId }, k),
  },
  ...(['status', 'type'] as const).flatMap((filter) => [
    {
      name: `transactions by ${filter}`,
      table: 'transactions',
      filters: ['partner_id', filter],
      list: (k: KeysetQuery) =>
        listTransactionRows(
          prisma,
          { partnerId, ...(filter === 'status' ? { status: 'error' } : { type: 'payout' }) },
          k,
        ),
    },
    {
      name: `transactions by customer and ${filter}`,
      table: 'transactions',
      filters: ['customer_id', filter],
      list: (k: KeysetQuery) =>
        listTransactionRows(
          prisma,
          { partnerId, customerId, ...(filter === 'status' ? { status: 'awaiting_deposit' } : { type: 'payin' }) },
          k,
        ),
    },
  ]),
  {
    name: 'transactions by customer',
    table: 'transactions',
    filters: ['customer_id'],
    list: (k) => listTransactionRows(prisma, { partnerId, customerId }, k),
  },
  {
    name: 'events',
    table: 'events',
    filters: ['partner_id'],
    list: (k) => listPartnerEvents(prisma, partnerId, {}, k),
  },
  {
    name: 'events by type',
    table: 'events',
    filters: ['partner_id', 'event_type'],
    list: (k) => listPartnerEvents(prisma, partnerId, { eventType: 'payin.completed' }, k),
  },
  {
    name: 'events by resource',
    table: 'events',
    filters: ['partner_id', 'resource_id'],
    list: (k) => listPartnerEvents(prisma, partnerId, { resourceId: randomUUID() }, k),
  },
  {
    name: 'customers',
    table: 'customers',
    filters: ['partner_id'],
    list: (k) => listCustomers(prisma, partnerId, {}, k),
  },
  {
    name: 'customers by status',
    table: 'customers',
    filters: ['partner_id', 'status'],
    list: (k) => listCustomers(prisma, partnerId, { status: 'under_review' }, k),
  },
  {
    name: 'external accounts',
    table: 'external_accounts',
    filters: ['partner_id'],
    list: (k) => listExternalAccounts(prisma, partnerId, {}, k),
  },
  {
    name: 'external accounts of a customer',
    table: 'external_accounts',
    filters: ['customer_id'],
    list: (k) => listExternalAccounts(prisma, partnerId, { customerId }, k),
  },
  { name: 'wallets', table: 'wallets', filters: ['partner_id'], list: (k) => listWallets(prisma, { partnerId }, k) },
  {
    name: 'wallets of a customer',
    table: 'wallets',
    filters: ['customer_id'],
    list: (k) => listWallets(prisma, { partnerId, customerId }, k),
  },
  {
    name: 'virtual accounts',
    table: 'virtual_accounts',
    filters: ['partner_id'],
    list: (k) => listVirtualAccounts(prisma, { partnerId }, k),
  },
  {
    name: 'virtual accounts of a customer',
    table: 'virtual_accounts',
    filters: ['customer_id'],
    list: (k) => listVirtualAccounts(prisma, { partnerId, customerId }, k),
  },
  {
    name: 'wallet transfers',
    table: 'wallet_transfers',
    filters: ['partner_id'],
    list: (k) => listWalletTransfers(prisma, { partnerId }, k),
  },
  {
    name: 'wallet transfers by status',
    table: 'wallet_transfers',
    filters: ['partner_id', 'status'],
    list: (k) => listWalletTransfers(prisma, { partnerId, status: 'processing' }, k),
  },
  {
    name: 'balance transactions',
    table: 'ledger_entries',
    filters: ['partner_id'],
    list: (k) => listBalanceTransactions(prisma, { partnerId }, k),
  },
  {
    name: 'balance transactions by currency',
    table: 'ledger_entries',
    filters: ['partner_id', 'currency'],
    list: (k) => listBalanceTransactions(prisma, { partnerId, currency: 'USDC' }, k),
  },
  {
    name: 'webhook deliveries of an event',
    table: 'webhook_deliveries',
    filters: ['event_id'],
    list: (k) => listEventDeliveries(prisma, eventId, k),
  },
];

describe('list queries have an index path (plans with sequential scans disabled)', () => {
  it.each(shapes.map((shape) => [shape.name, shape] as const))('%s', async (_name, shape) => {
    const statements = await statementsOf(shape.list);
    expect(statements.length).toBeGreaterThanOrEqual(3);
    for (const statement of statements) {
      const nodes = await planOf(statement);
      const problems = nodes.flatMap((node) => {
        const found: string[] = [];
        if (node['Node Type'] === 'Seq Scan' && largeTables.includes(node['Relation Name'] ?? '')) {
          found.push(`sequential scan of ${node['Relation Name']}`);
        }
        return found;
      });
      // The page comes in index order: its statement never sorts the listed table's rows.
      const first = statement.sql.includes(`from "${shape.table}"`);
      if (first && nodes.some((node) => node['Node Type'] === 'Sort')) problems.push('sorted after the scan');
      expect({ sql: statement.sql, problems }).toEqual({ sql: statement.sql, problems: [] });
    }
    // Which index a plan picks depends on the data at hand (an empty range is cheapest on any index): that the right
    // one exists is read from the catalog, its columns the filters then the keyset's.
    expect(await indexesLeadingWith(shape.table, [...shape.filters, 'created_at', 'id'])).not.toEqual([]);
  });

  it('wallet transfers of a wallet (from or to it) page each wallet index in order, not the partner history', async () => {
    const statements = await statementsOf((k) => listWalletTransfers(prisma, { partnerId, walletId }, k));
    // A page from each side: the statements name one side each.
    expect(statements.filter((statement) => statement.sql.includes('"from_wallet_id" = $'))).toHaveLength(3);
    expect(statements.filter((statement) => statement.sql.includes('"to_wallet_id" = $'))).toHaveLength(3);
    for (const statement of statements) {
      const nodes = await planOf(statement);
      expect(nodes.filter((node) => node['Node Type'] === 'Seq Scan').map((node) => node['Relation Name'])).toEqual([]);
      expect(nodes.some((node) => node['Node Type'] === 'Sort')).toBe(false);
    }
    for (const side of ['from_wallet_id', 'to_wallet_id']) {
      expect(await indexesLeadingWith('wallet_transfers', [side, 'created_at', 'id'])).not.toEqual([]);
    }
  });

  it('the metrics snapshot and the outbox relay read only the few rows they count, through partial indexes', async () => {
    captured = [];
    await readMonitoringSnapshot(prisma);
    await listUndispatchedDeliveries(prisma, { limit: 100 });
    const nodes = (await Promise.all(captured.map(planOf))).flat();
    expect(nodes.filter((node) => node['Node Type'] === 'Seq Scan').map((node) => node['Relation Name'])).toEqual([]);
    const indexes = new Set(nodes.flatMap((node) => node['Index Name'] ?? []));
    expect([...indexes].filter((name) => /^(transactions|webhook_deliveries)_/.test(name)).sort()).toEqual([
      'transactions_in_error_updated_at_idx', // count and oldest of the operator queue
      'webhook_deliveries_pending_created_at_idx', // count and oldest of the pending deliveries
      'webhook_deliveries_undispatched_idx', // the relay's batch, in sequence order
    ]);
  });
});
