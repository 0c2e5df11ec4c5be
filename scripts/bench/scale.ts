// The scale section of `npm run bench -- --only scale`: do the lists cost the same for a partner with a million
// transactions as for one with a thousand? Two partners on the same database, same shapes: each first makes real
// rows through the API (an approved customer with two wallets and an spei account, a webhook configuration, a
// fiat-to-fiat settlement, a virtual account, a wallet transfer, their events and webhook deliveries), then those
// rows are copied with bulk SQL (INSERT ... SELECT over generate_series), spread over the past year: 1,000
// transactions and events for the small partner, N for the large one (--rows; 1,000,000, --quick 100,000), and a
// tenth of that (at least 1,000) of each other listed table. Every list endpoint and filter is then timed for both
// partners side by side (A B A B ...) with the same page size (limit=100) and the same number of items, and the
// transaction list is compared with a bare route sending the same SQL with pg (the floor server). The slowest reads'
// plans (EXPLAIN (ANALYZE, BUFFERS) of the persistence layer's own statements) are printed and kept in the JSON.
import { Client as PgClient } from 'pg';
import type { CompiledQuery } from 'kysely';
import type { KeysetQuery, Position } from '../../src/domain/pages';
import { eventTypes } from '../../src/events';
import { expectStatus, HttpClient, OpStats, Recorder, sideBySide } from './load';
import { BenchPartner, createParty, Party } from './partners';
import type { Ratio } from './report';
import { settlementPhase } from './scenarios';
import type { BenchStack } from './stack';
import { waitUntil } from '../lib/wait';

export interface ScaleOptions {
  /** Transactions and events of the large partner. */
  rows: number;
  concurrency: number;
  durationMs: number;
  warmupMs: number;
  rounds: number;
}

/** What one read measured for each partner, and the ratio large / small. */
export interface ScaleRead {
  read: string;
  path: string;
  items: { small: number; large: number };
  small: OpStats;
  large: OpStats;
  p50_ratio: number;
  p99_ratio: number;
  /** CPU of the API and PostgreSQL per request, large / small: steadier than latency on a shared machine. */
  cpu_ratio: number;
}

export interface ScaleResult {
  rows: { small: Record<string, number>; large: Record<string, number> };
  seed_seconds: number;
  reads: ScaleRead[];
  list: OpStats[];
  ratios: Ratio[];
  /** EXPLAIN (ANALYZE, BUFFERS) of the slowest reads' statements on the large partner. */
  plans: Array<{ read: string; statements: string[] }>;
  notes: string[];
}

export const SMALL_ROWS = 1_000;
const PAGE = 100;

/** The real rows a partner made through the API: the templates of its copies and the targets of its filters. */
interface Made {
  partner: BenchPartner;
  party: Party;
  /** A second wallet of the customer: the destination of its wallet transfer. */
  secondWalletId: string;
  transactionId: string;
  virtualAccountId: string;
  walletTransferId: string;
}

function log(message: string): void {
  console.error(`[bench] ${new Date().toISOString().slice(11, 19)} scale: ${message}`);
}

async function madeThroughApi(partner: BenchPartner, index: number, floorUrl: string): Promise<Made> {
  const api = partner.api;
  // First, so that every event of the flow has a delivery to copy.
  const config = await api.request('POST', '/v1/webhook-configs', {
    body: { url: `${floorUrl}/webhook`, subscriptions: [...eventTypes], enabled: true },
    json: true,
  });
  expectStatus(config, 201, 'create webhook configuration');
  const party = await createParty(partner, 1000 + index);
  const second = await api.request('POST', '/v1/wallets', {
    body: { customer_id: party.customerId, name: 'Bench savings', chain: 'solana' },
    json: true,
  });
  const secondWalletId = expectStatus(second, 201, 'create wallet').body.id as string;
  const settled = await settlementPhase([party], { settlements: 1, concurrency: 1, pollMs: 100, timeoutMs: 120_000 });
  const transaction = settled.completed[0];
  if (!transaction)
    throw new Error(`the scale partner's settlement failed: ${settled.recorder.errorSamples.join(' | ')}`);
  const virtualAccount = await api.request('POST', '/v1/virtual-accounts', {
    body: {
      customer_id: party.customerId,
      name: 'Collections',
      sender: { currency: 'USD' },
      receiver: { currency: 'USDC', wallet_id: party.walletId },
    },
    json: true,
  });
  expectStatus(virtualAccount, 201, 'create virtual account');
  const funded = await api.request('POST', `/v1/sandbox/wallets/${party.walletId}/fund`, {
    body: { currency: 'USDC', amount: '100' },
    json: true,
  });
  expectStatus(funded, 200, 'fund wallet');
  const transfer = await api.request('POST', '/v1/wallet-transfer', {
    body: { currency: 'USDC', from_wallet_id: party.walletId, to_wallet_id: secondWalletId, amount: '10' },
    json: true,
  });
  const walletTransferId = expectStatus(transfer, 201, 'create wallet transfer').body.id as string;
  const transferDone = async () =>
    (await api.request('GET', `/v1/wallet-transfers/${walletTransferId}`, { json: true })).body?.status === 'completed';
  if (!(await waitUntil(transferDone, 60_000, 200)))
    throw new Error(`wallet transfer ${walletTransferId} not completed`);
  return {
    partner,
    party,
    secondWalletId,
    transactionId: transaction.id,
    virtualAccountId: virtualAccount.body.id as string,
    walletTransferId,
  };
}

/** Row counts of one partner: `rows` transactions and events, `side` of every other listed table. */
const countsOf = (rows: number) => ({ rows, side: Math.max(SMALL_ROWS, Math.floor(rows / 10)) });

/** Every `step`-th copy is given a rare value: at least 111 of them (a full page), about 1% at scale. */
const rareStep = (count: number) => Math.max(2, Math.min(100, Math.floor(count / 111)));

/** The filters' targets of one seeded partner (the reads' parameters). */
interface Seeded {
  made: Made;
  rows: number;
  side: number;
  /** The event type the `event_type` read asks for, and the event whose deliveries are listed. */
  eventType: string;
  eventId: string;
}

class Seeder {
  private readonly columns = new Map<string, string[]>();

  constructor(readonly client: PgClient) {}

  literal(value: string): string {
    return this.client.escapeLiteral(value);
  }

  private async columnsOf(table: string): Promise<string[]> {
    let columns = this.columns.get(table);
    if (!columns) {
      const { rows } = await this.client.query<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1
         ORDER BY ordinal_position`,
        [table],
      );
      columns = rows.map((row) => row.column_name);
      this.columns.set(table, columns);
    }
    return columns;
  }

  /**
   * Inserts `count` copies (g.i = 1..count) of template rows of `table` (those `where` selects, numbered s.k from 0
   * in creation order; copy i takes template `key`), each column as in its template unless `set` gives an
   * expression. Columns in `omit` take their default (sequences).
   */
  async copy(
    table: string,
    spec: { where: string; count: number; key?: string; set: Record<string, string>; omit?: string[] },
  ): Promise<void> {
    const columns = (await this.columnsOf(table)).filter((column) => !spec.omit?.includes(column));
    const unknown = Object.keys(spec.set).filter((column) => !columns.includes(column));
    if (unknown.length) throw new Error(`${table} has no column ${unknown.join(', ')}`);
    const quoted = (column: string) => `"${column}"`;
    await this.client.query(
      `INSERT INTO ${table} (${columns.map(quoted).join(', ')})
       SELECT ${columns.map((column) => spec.set[column] ?? `s.${quoted(column)}`).join(', ')}
       FROM generate_series(1, ${spec.count}) AS g(i)
       JOIN (SELECT row_number() OVER (ORDER BY created_at, id) - 1 AS k, * FROM ${table} WHERE ${spec.where}) s
         ON s.k = (${spec.key ?? '0'})`,
    );
  }
}

/** Copies one partner's real rows into `rows` transactions and events and `side` rows of each other table. */
async function seedPartner(seeder: Seeder, made: Made, rows: number): Promise<Seeded> {
  const { side } = countsOf(rows);
  const partnerId = made.partner.partnerId;
  const p = seeder.literal(partnerId);
  const lit = (value: string) => `${seeder.literal(value)}::uuid`;
  // Deterministic ids, so that copies can name copies (a transaction its customer, a delivery its event).
  const idOf = (kind: string, i: string) => `md5(${p} || ':${kind}:' || (${i}))::uuid`;
  // Copy 1 is the newest, a minute before the real rows; the last one a year ago.
  const ago = (count: number) => `now() - interval '1 minute' - (g.i - 1) * (interval '365 days' / ${count})`;
  const dated = (count: number) => ({ created_at: ago(count), updated_at: ago(count) });
  const customer = lit(made.party.customerId);
  const wallet = lit(made.party.walletId);

  await seeder.copy('customers', {
    where: `id = ${customer}`,
    count: side,
    set: {
      id: idOf('customer', 'g.i'),
      status: `CASE WHEN g.i % ${rareStep(side)} = 0 THEN 'rejected' ELSE s.status END`,
      verification_token_hash: `md5(${p} || ':token:' || g.i)`,
      ...dated(side),
    },
  });
  await seeder.copy('wallets', {
    where: `id = ${wallet}`,
    count: side,
    set: {
      id: idOf('wallet', 'g.i'),
      customer_id: idOf('customer', 'g.i'),
      address: `s.address || '-' || g.i`,
      ...dated(side),
    },
  });
  await seeder.copy('external_accounts', {
    where: `id = ${lit(made.party.externalAccountId)}`,
    count: side,
    set: {
      id: 'gen_random_uuid()',
      customer_id: idOf('customer', 'g.i'),
      account_identity: `s.account_identity || ':' || g.i`,
      ...dated(side),
    },
  });
  await seeder.copy('virtual_accounts', {
    where: `id = ${lit(made.virtualAccountId)}`,
    count: side,
    set: {
      id: 'gen_random_uuid()',
      customer_id: idOf('customer', 'g.i'),
      wallet_id: idOf('wallet', 'g.i'),
      ...dated(side),
    },
  });
  // The issue's shape: 100 in error, 50 awaiting a deposit, 1% payouts (at least a page); one busy customer holds a
  // tenth of the transactions and every error.
  const errorStep = Math.max(2, Math.floor(rows / 100));
  const isError = `g.i % ${errorStep} = 0`;
  await seeder.copy('transactions', {
    where: `id = ${lit(made.transactionId)}`,
    count: rows,
    set: {
      id: 'gen_random_uuid()',
      customer_id: `CASE WHEN g.i % 10 = 5 OR ${isError} THEN ${customer} ELSE ${idOf('customer', `1 + g.i % ${side}`)} END`,
      status:
        `CASE WHEN ${isError} THEN 'error' WHEN g.i % ${2 * errorStep} = ${Math.floor(errorStep / 2)} ` +
        `THEN 'awaiting_deposit' ELSE s.status END`,
      type: `CASE WHEN g.i % ${rareStep(rows)} = 1 THEN 'payout' ELSE s.type END`,
      quote_id: 'NULL',
      deposit_reference: 'NULL',
      ...dated(rows),
    },
  });
  await seeder.copy('wallet_transfers', {
    where: `id = ${lit(made.walletTransferId)}`,
    count: side,
    set: {
      id: 'gen_random_uuid()',
      customer_id: `CASE WHEN g.i % 9 = 0 THEN ${customer} ELSE ${idOf('customer', 'g.i')} END`,
      from_wallet_id: `CASE WHEN g.i % 9 = 0 THEN ${wallet} ELSE ${idOf('wallet', 'g.i')} END`,
      status: `CASE WHEN g.i % ${rareStep(side)} = 4 THEN 'failed' ELSE s.status END`,
      ...dated(side),
    },
  });

  // Events: copies of all the partner's real events in turn; every fifth is the settlement's completion (so its
  // type fills pages on both partners); 111 name the settlement as their resource.
  const { rows: templates } = await seeder.client.query<{ id: string; event_type: string; resource_id: string }>(
    'SELECT id, event_type, resource_id FROM events WHERE partner_id = $1 ORDER BY created_at, id',
    [partnerId],
  );
  const special = Math.max(
    0,
    templates.findIndex((event) => event.resource_id === made.transactionId && event.event_type.endsWith('.completed')),
  );
  const target = templates[special]!;
  await seeder.copy('events', {
    where: `partner_id = ${p}`,
    count: rows,
    key: `CASE WHEN g.i % 5 = 0 THEN ${special} ELSE g.i % ${templates.length} END`,
    omit: ['sequence'],
    set: {
      id: idOf('event', 'g.i'),
      resource_id: `CASE WHEN g.i % ${Math.max(2, Math.floor(rows / 111))} = 1 THEN ${lit(made.transactionId)} ELSE gen_random_uuid() END`,
      created_at: ago(rows),
    },
  });
  // Deliveries: copies of the completion event's delivery, 111 of them for that event, the others spread over the
  // copied events; one attempt each.
  // The real delivery of that event, whose attempt the copies' attempts copy (looked up before the copies exist).
  const { rows: realDeliveries } = await seeder.client.query<{ id: string }>(
    'SELECT id FROM webhook_deliveries WHERE event_id = $1 ORDER BY created_at, id LIMIT 1',
    [target.id],
  );
  const realDelivery = realDeliveries[0]?.id;
  if (!realDelivery) throw new Error(`event ${target.id} (${target.event_type}) has no webhook delivery to copy`);
  const toTarget = `g.i % ${Math.max(2, Math.floor(side / 111))} = 0`;
  await seeder.copy('webhook_deliveries', {
    where: `event_id = ${lit(target.id)}`,
    count: side,
    omit: ['sequence'],
    set: {
      id: idOf('delivery', 'g.i'),
      // One delivery per event is the event's own (a unique index); the completion event's others are redeliveries.
      trigger: `CASE WHEN ${toTarget} THEN 'redelivery' ELSE s.trigger END`,
      event_id: `CASE WHEN ${toTarget} THEN ${lit(target.id)} ELSE ${idOf('event', `1 + (g.i * 7919) % ${rows}`)} END`,
      ...dated(side),
    },
  });
  await seeder.copy('webhook_delivery_attempts', {
    where: `delivery_id = ${lit(realDelivery)}`,
    count: side,
    set: { id: 'gen_random_uuid()', delivery_id: idOf('delivery', 'g.i'), created_at: ago(side) },
  });
  return { made, rows, side, eventType: target.event_type, eventId: target.id };
}

const seededTables = [
  'customers',
  'wallets',
  'external_accounts',
  'virtual_accounts',
  'transactions',
  'wallet_transfers',
  'events',
  'webhook_deliveries',
  'webhook_delivery_attempts',
];

/** One read: its path for a partner, and the persistence call behind it (for EXPLAIN). */
interface Read {
  name: string;
  path: (partner: Seeded) => string;
  statements: (partner: Seeded, lists: Lists) => (db: any, keyset: KeysetQuery) => Promise<unknown>;
  keyset?: (partner: Seeded) => Partial<KeysetQuery>;
}

type Lists = typeof import('./scale-lists');

const day = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
/** A two-month window in the middle of the year of copies: more than a page on both partners. */
const window = { start: day(210), end: day(150) };

function reads(deep: Map<Seeded, { cursor: string; position: Position }>): Read[] {
  const t = (filter: (s: Seeded) => Record<string, string>) => (s: Seeded) =>
    `/v1/transactions?${new URLSearchParams({ limit: String(PAGE), ...filter(s) })}`;
  const e = (filter: (s: Seeded) => Record<string, string>) => (s: Seeded) =>
    `/v1/events?${new URLSearchParams({ limit: String(PAGE), ...filter(s) })}`;
  const q = `limit=${PAGE}`;
  const partnerId = (s: Seeded) => s.made.partner.partnerId;
  return [
    {
      name: 'transactions',
      path: t(() => ({})),
      statements: (s, l) => (db, k) => l.listTransactionRows(db, { partnerId: partnerId(s) }, k),
    },
    {
      name: 'transactions status=awaiting_deposit',
      path: t(() => ({ status: 'awaiting_deposit' })),
      statements: (s, l) => (db, k) =>
        l.listTransactionRows(db, { partnerId: partnerId(s), status: 'awaiting_deposit' }, k),
    },
    {
      name: 'transactions status=error',
      path: t(() => ({ status: 'error' })),
      statements: (s, l) => (db, k) => l.listTransactionRows(db, { partnerId: partnerId(s), status: 'error' }, k),
    },
    {
      name: 'transactions type=payout',
      path: t(() => ({ type: 'payout' })),
      statements: (s, l) => (db, k) => l.listTransactionRows(db, { partnerId: partnerId(s), type: 'payout' }, k),
    },
    {
      name: 'transactions customer_id',
      path: t((s) => ({ customer_id: s.made.party.customerId })),
      statements: (s, l) => (db, k) =>
        l.listTransactionRows(db, { partnerId: partnerId(s), customerId: s.made.party.customerId }, k),
    },
    {
      name: 'transactions customer_id+status=error',
      path: t((s) => ({ customer_id: s.made.party.customerId, status: 'error' })),
      statements: (s, l) => (db, k) =>
        l.listTransactionRows(db, { partnerId: partnerId(s), customerId: s.made.party.customerId, status: 'error' }, k),
    },
    {
      name: 'transactions start_date+end_date',
      path: t(() => ({ start_date: window.start, end_date: window.end })),
      statements: (s, l) => (db, k) => l.listTransactionRows(db, { partnerId: partnerId(s) }, k),
      keyset: () => ({
        createdFrom: new Date(`${window.start}T00:00:00.000Z`),
        createdTo: new Date(`${window.end}T23:59:59.999Z`),
      }),
    },
    {
      name: 'transactions deep page (after cursor)',
      path: t((s) => ({ after: deep.get(s)!.cursor })),
      statements: (s, l) => (db, k) => l.listTransactionRows(db, { partnerId: partnerId(s) }, k),
      keyset: (s) => ({ after: deep.get(s)!.position }),
    },
    {
      name: 'events',
      path: e(() => ({})),
      statements: (s, l) => (db, k) => l.listPartnerEvents(db, partnerId(s), {}, k),
    },
    {
      name: 'events event_type',
      path: e((s) => ({ event_type: s.eventType })),
      statements: (s, l) => (db, k) => l.listPartnerEvents(db, partnerId(s), { eventType: s.eventType }, k),
    },
    {
      name: 'events event_resource_id',
      path: e((s) => ({ event_resource_id: s.made.transactionId })),
      statements: (s, l) => (db, k) => l.listPartnerEvents(db, partnerId(s), { resourceId: s.made.transactionId }, k),
    },
    {
      name: 'customers',
      path: () => `/v1/customers?${q}`,
      statements: (s, l) => (db, k) => l.listCustomers(db, partnerId(s), {}, k),
    },
    {
      name: 'customers status=rejected',
      path: () => `/v1/customers?${q}&status=rejected`,
      statements: (s, l) => (db, k) => l.listCustomers(db, partnerId(s), { status: 'rejected' }, k),
    },
    {
      name: 'external accounts',
      path: () => `/v1/external-accounts?${q}`,
      statements: (s, l) => (db, k) => l.listExternalAccounts(db, partnerId(s), {}, k),
    },
    {
      name: 'wallets',
      path: () => `/v1/wallets?${q}`,
      statements: (s, l) => (db, k) => l.listWallets(db, { partnerId: partnerId(s) }, k),
    },
    {
      name: 'virtual accounts',
      path: () => `/v1/virtual-accounts?${q}`,
      statements: (s, l) => (db, k) => l.listVirtualAccounts(db, { partnerId: partnerId(s) }, k),
    },
    {
      name: 'wallet transfers',
      path: () => `/v1/wallet-transfers?${q}`,
      statements: (s, l) => (db, k) => l.listWalletTransfers(db, { partnerId: partnerId(s) }, k),
    },
    {
      name: 'wallet transfers status=failed',
      path: () => `/v1/wallet-transfers?${q}&status=failed`,
      statements: (s, l) => (db, k) => l.listWalletTransfers(db, { partnerId: partnerId(s), status: 'failed' }, k),
    },
    {
      name: 'wallet transfers wallet_id',
      path: (s) => `/v1/wallet-transfers?${q}&wallet_id=${s.made.party.walletId}`,
      statements: (s, l) => (db, k) =>
        l.listWalletTransfers(db, { partnerId: partnerId(s), walletId: s.made.party.walletId }, k),
    },
    {
      name: 'webhook deliveries of an event',
      path: (s) => `/v1/events/${s.eventId}/deliveries?${q}`,
      statements: (s, l) => (db, k) => l.listEventDeliveries(db, s.eventId, k),
    },
  ];
}

/** A cursor in the middle of a partner's history (from a page ending there), and the row it points after. */
async function middleCursor(s: Seeded): Promise<{ cursor: string; position: Position }> {
  const page = expectStatus(
    await s.made.partner.api.request('GET', `/v1/transactions?limit=${PAGE}&end_date=${day(182)}`, { json: true }),
    200,
    'middle page',
  ).body;
  const last = page.items[page.items.length - 1];
  if (!page.cursor.after || !last) throw new Error('no page in the middle of the history');
  return { cursor: page.cursor.after as string, position: { createdAt: new Date(last.created_at), id: last.id } };
}

/** The statements `run` sends through a client of its own, captured (and run: they only read). */
async function capturedStatements(
  databaseUrl: string,
  run: (db: unknown) => Promise<unknown>,
): Promise<CompiledQuery[]> {
  const { createPrismaClient, closeDatabaseClient } = await import('../../src/persistence/database');
  const { capturingClient } = await import('./capture');
  const base = createPrismaClient(databaseUrl, { role: 'bench-explain', poolSize: 1 });
  const statements: CompiledQuery[] = [];
  try {
    await run(capturingClient(base, (query) => statements.push(query)));
  } finally {
    await closeDatabaseClient(base);
  }
  return statements;
}

export async function scalePhase(
  stack: BenchStack,
  partners: BenchPartner[],
  options: ScaleOptions,
): Promise<ScaleResult> {
  const [smallPartner, largePartner] = partners;
  if (!smallPartner || !largePartner) throw new Error('the scale section needs two partners');
  const notes: string[] = [];
  log(
    'real rows through the API for both partners (webhook configuration, party, settlement, virtual account, transfer)',
  );
  const made = [
    await madeThroughApi(smallPartner, 0, stack.floorUrl),
    await madeThroughApi(largePartner, 1, stack.floorUrl),
  ];
  const client = new PgClient({ connectionString: stack.database.url, application_name: `bench-seed-${process.pid}` });
  await client.connect();
  let small: Seeded;
  let large: Seeded;
  const seedStarted = performance.now();
  try {
    // Their deliveries done, so the copies are of finished deliveries (none left for the outbox relay).
    const delivered = await waitUntil(
      async () =>
        Number(
          (
            await client.query<{ n: string }>(
              `SELECT count(*) AS n FROM webhook_deliveries WHERE partner_id = ANY($1) AND status = 'pending'`,
              [partners.map((partner) => partner.partnerId)],
            )
          ).rows[0]!.n,
        ) === 0,
      60_000,
      500,
    );
    if (!delivered) notes.push('some webhook deliveries were still pending when seeding began');
    await client.query('SET statement_timeout = 0');
    // The copies are consistent by construction: no foreign key checks per row (needs a superuser, as the bench's
    // private cluster gives; elsewhere the checks run).
    await client
      .query('SET session_replication_role = replica')
      .catch(() => notes.push('seeded with foreign key checks'));
    const seeder = new Seeder(client);
    log(`seeding the small partner: ${SMALL_ROWS} transactions and events`);
    small = await seedPartner(seeder, made[0]!, SMALL_ROWS);
    log(
      `seeding the large partner: ${options.rows} transactions and events, ${countsOf(options.rows).side} of the rest`,
    );
    large = await seedPartner(seeder, made[1]!, options.rows);
    await client.query('RESET session_replication_role');
    log('VACUUM ANALYZE of the seeded tables');
    for (const table of seededTables) await client.query(`VACUUM (ANALYZE) ${table}`);
    // The bulk load's dirty pages written now, not by the checkpointer while a read is measured (its CPU is
    // PostgreSQL's, charged to whichever read runs).
    await client.query('CHECKPOINT');
  } finally {
    await client.end();
  }
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  log(`seeded in ${seedSeconds.toFixed(0)} s`);

  const deep = new Map([
    [small, await middleCursor(small)],
    [large, await middleCursor(large)],
  ]);
  const readList = reads(deep);
  const measured: ScaleRead[] = [];
  for (const read of readList) {
    const paths = { small: read.path(small), large: read.path(large) };
    const items = { small: 0, large: 0 };
    for (const [which, seeded] of [
      ['small', small],
      ['large', large],
    ] as const) {
      const response = await seeded.made.partner.api.request('GET', paths[which], { json: true });
      items[which] = expectStatus(response, 200, `${read.name} (${which})`).body.items.length;
    }
    if (items.small !== items.large)
      notes.push(`${read.name}: ${items.small} items (small) against ${items.large} (large)`);
    log(
      `${read.name}: ${items.large} items a page, ${options.rounds} rounds of ${options.durationMs / 1000} s per partner`,
    );
    const target = (seeded: Seeded, path: string, op: string) => async (recorder: Recorder) => {
      await recorder.time(op, async () => expectStatus(await seeded.made.partner.api.request('GET', path), 200, op));
    };
    const recorders = await sideBySide(
      { small: target(small, paths.small, 'small'), large: target(large, paths.large, 'large') },
      options,
      { small: () => stack.cpu(['api', 'postgres']), large: () => stack.cpu(['api', 'postgres']) },
    );
    const smallStats = { ...recorders.small!.stats('small'), op: `${read.name} (small)` };
    const largeStats = { ...recorders.large!.stats('large'), op: `${read.name} (large)` };
    for (const recorder of Object.values(recorders)) {
      if (recorder.errorSamples.length) notes.push(`${read.name} errors: ${recorder.errorSamples.join(' | ')}`);
    }
    measured.push({
      read: read.name,
      path: paths.large,
      items,
      small: smallStats,
      large: largeStats,
      p50_ratio: largeStats.p50 / smallStats.p50,
      p99_ratio: largeStats.p99 / smallStats.p99,
      cpu_ratio: cpuPerRequest(largeStats) / cpuPerRequest(smallStats),
    });
  }

  log('GET /v1/transactions?limit=100 against the same statement with pg (floor), large partner');
  const floor = new HttpClient(stack.floorUrl);
  const listPath = `/v1/transactions?limit=${PAGE}`;
  const floorPath = `/pg-list/transactions?partner_id=${large.made.partner.partnerId}`;
  let list: OpStats[];
  try {
    const recorders = await sideBySide(
      {
        list_api: async (recorder) => {
          await recorder.time('list_api', async () =>
            expectStatus(await largePartner.api.request('GET', listPath), 200, 'list_api'),
          );
        },
        list_floor_pg: async (recorder) => {
          await recorder.time('list_floor_pg', async () =>
            expectStatus(await floor.request('GET', floorPath), 200, 'list_floor_pg'),
          );
        },
      },
      options,
      { list_api: () => stack.cpu(['api', 'postgres']), list_floor_pg: () => stack.cpu(['floor', 'postgres']) },
    );
    list = [recorders.list_api!.stats('list_api'), recorders.list_floor_pg!.stats('list_floor_pg')];
    for (const recorder of Object.values(recorders)) {
      if (recorder.errorSamples.length) notes.push(`list errors: ${recorder.errorSamples.join(' | ')}`);
    }
  } finally {
    floor.close();
  }

  const worst = [...measured].sort((a, b) => b.p99_ratio - a.p99_ratio);
  const ratios: Ratio[] = [
    {
      name: 'scale_worst_ratio',
      value: worst[0]?.p99_ratio ?? null,
      target: { op: '<=', value: 1.3 },
      formula: `largest p99 ratio of any list read, ${options.rows} rows / ${SMALL_ROWS} (${worst[0]?.read ?? '-'})`,
    },
    {
      name: 'list_rps_ratio',
      value: list[0]!.rps / list[1]!.rps,
      target: { op: '>=', value: 0.5 },
      formula: `GET ${listPath} per s / the same statement with pg per s (${options.rows} rows)`,
    },
  ];

  // The plans of the three slowest reads, and of any other over the target, on the large partner.
  const explained = worst.filter((read, index) => index < 3 || read.p99_ratio > 1.3);
  const plans: ScaleResult['plans'] = [];
  const lists: Lists = await import('./scale-lists');
  const explainer = new PgClient({
    connectionString: stack.database.url,
    application_name: `bench-explain-${process.pid}`,
  });
  await explainer.connect();
  try {
    for (const read of explained) {
      const spec = readList.find((candidate) => candidate.name === read.read)!;
      const keyset: KeysetQuery = { direction: 'desc', take: PAGE + 1, ...spec.keyset?.(large) };
      const statements = await capturedStatements(stack.database.url, (db) =>
        spec.statements(large, lists)(db, keyset),
      );
      const texts: string[] = [];
      for (const statement of statements) {
        const { rows } = await explainer.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN (ANALYZE, BUFFERS) ${statement.sql}`,
          statement.parameters as unknown[],
        );
        texts.push([statement.sql, ...rows.map((row) => row['QUERY PLAN'])].join('\n'));
      }
      plans.push({ read: read.read, statements: texts });
    }
  } finally {
    await explainer.end();
  }

  const rowsOf = (seeded: Seeded) => ({ transactions: seeded.rows, events: seeded.rows, others: seeded.side });
  return {
    rows: { small: rowsOf(small), large: rowsOf(large) },
    seed_seconds: seedSeconds,
    reads: measured,
    list,
    ratios,
    plans,
    notes,
  };
}

const cpuPerRequest = (stats: OpStats) =>
  Object.values(stats.cpu_ms_per_op ?? {}).reduce((sum, ms) => sum + ms, 0) || Number.NaN;

const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : '-');

/** The scale table: per read, items a page, p50/p99 of each partner, and the ratios. */
export function formatScale(result: ScaleResult): string {
  const header = [
    'read',
    'items',
    'small p50',
    'small p99',
    'large p50',
    'large p99',
    'p50 ratio',
    'p99 ratio',
    'cpu ratio',
  ];
  const rows = result.reads.map((read) => [
    read.read,
    String(read.items.large),
    fixed(read.small.p50),
    fixed(read.small.p99),
    fixed(read.large.p50),
    fixed(read.large.p99),
    fixed(read.p50_ratio, 2),
    fixed(read.p99_ratio, 2),
    fixed(read.cpu_ratio, 2),
  ]);
  const widths = header.map((_, column) => Math.max(...[header, ...rows].map((row) => row[column]!.length)));
  const line = (row: string[]) =>
    row
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join('  ');
  const large = result.rows.large;
  return [
    `scale: ${result.rows.small.transactions} against ${large.transactions} transactions and events per partner ` +
      `(${result.rows.small.others} against ${large.others} of each other table; seeded in ${result.seed_seconds.toFixed(0)} s), ms`,
    line(header),
    ...rows.map(line),
  ].join('\n');
}
