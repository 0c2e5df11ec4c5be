// How the code reaches PostgreSQL (docs/development.md "Reaching the database"): Prisma Client for rows outside a
// transaction; inside a transaction, and for what Prisma cannot say (locks, keyset pages, bulk statements, CTEs),
// typed SQL (Kysely, by the tables generated from schema.prisma, ../generated/tables.ts) on the same pg pool.
//
// This module is internal to src/persistence (dependency-cruiser rule `database-types-only-in-persistence`): it
// alone turns the opaque handles (Database, DatabaseClient, DatabaseTransaction) into Prisma's and Kysely's own
// objects (prismaOf, sqlOf). Code outside persistence imports ../database.ts, which hands out the handles only.
import { PrismaPg } from '@prisma/adapter-pg';
import { Prisma, PrismaClient } from '../generated/prisma/client';
import {
  CamelCasePlugin,
  type Compilable,
  type CompiledQuery,
  Kysely,
  type KyselyPlugin,
  NoResultError,
  type LogEvent,
  OperationNodeTransformer,
  PostgresDialect,
  type PrimitiveValueListNode,
  Transaction,
  type ValueNode,
} from 'kysely';
import pg, { DatabaseError, Pool, type PoolConfig } from 'pg';
import type { DB } from '../generated/tables';

export type { DB };

// A type-only key: the handles carry no property at run time, and nothing outside this module can name the key.
declare const handle: unique symbol;

/**
 * The client a process opens (createPrismaClient): opaque, no methods. Code outside persistence passes it to
 * persistence functions and to withDatabaseTransaction; persistence unwraps it (prismaOf, sqlOf, sqlPoolOf).
 */
export interface DatabaseClient {
  readonly [handle]: 'client';
}

/** A database transaction (withDatabaseTransaction), opaque like the client: persistence unwraps it with sqlOf. */
export interface DatabaseTransaction {
  readonly [handle]: 'transaction';
}

/**
 * The one database handle (docs/development.md "Reaching the database"): the client, or a database transaction opened
 * by withDatabaseTransaction. A function that writes with others, or that a transaction may call, takes it and
 * writes SQL on it (sqlOf); a function that reads or writes rows alone may take the client only and use Prisma
 * Client (prismaOf), which a transaction's handle does not carry.
 */
export type Database = DatabaseClient | DatabaseTransaction;

/**
 * The client with Prisma's own type as well: what persistence and the tests' assertions (harness.prisma) hold. It is
 * a DatabaseClient, so it goes wherever the opaque handle does.
 */
export type PrismaDatabaseClient = PrismaClient & DatabaseClient;

/** Bounds on every wait for the database, so an outage answers 503 instead of hanging (docs/write-path.md "Bounded waits"). */
export interface DatabaseTimeouts {
  /** Waiting for a free pool connection, or for a new connection to open. */
  connectMs: number;
  /** One SQL statement. */
  statementMs: number;
}

export const defaultDatabaseTimeouts: DatabaseTimeouts = { connectMs: 5_000, statementMs: 10_000 };

/** Where a client of createPrismaClient keeps its pg pool (a property, so a Proxy of the client finds it too). */
export const SQL_POOL = Symbol('sql pool');
/** Where it keeps the Kysely instance on that pool (configurable too). */
export const SQL_BUILDER = Symbol('sql builder');

/**
 * How often a backend checks, while it runs a statement (a lock wait included), that its client is still there
 * (PostgreSQL's client_connection_check_interval): a killed process's statement is cancelled and its locks are
 * released within this, instead of once the lock it waits for is granted.
 */
export const DEAD_CLIENT_CHECK_MS = 2_000;
/** TCP keepalives, for a client whose host vanished without closing its sockets (idle, interval in seconds). */
const KEEPALIVE = { idleSeconds: 10, intervalSeconds: 5, count: 3 } as const;
/**
 * The documented bound (docs/database.md): once a process of ours is killed on a live host, no backend of it holds a
 * lock or a transaction for longer than this. Two checks and a margin for the server to roll back.
 */
export const DEAD_PROCESS_LOCKS_RELEASED_MS = 2 * DEAD_CLIENT_CHECK_MS + 1_000;

/**
 * The application_name of a connection: `<role>-<pid>` and, for a connection of one component, `/<component>`
 * (e.g. `worker-4242/relay-lock`), so a lock holder or waiter in pg_stat_activity says whose it is.
 */
export function connectionName(role: string, component?: string, pid: number = process.pid): string {
  return component ? `${role}-${pid}/${component}` : `${role}-${pid}`;
}

const DATE = 1082;
const NUMERIC = 1700;
const NUMERIC_ARRAY = 1231;
const TEXT_ARRAY = 1009 as Parameters<typeof pg.types.getTypeParser>[0];
const parseTextArray = pg.types.getTypeParser(TEXT_ARRAY) as (value: string) => string[];
/**
 * Numerics read in SQL come back as Prisma's Decimal, as the model API gives them, never as floats. Prisma's own
 * queries bring their own parsers, so this reaches the statements run through Kysely only.
 */
const parserOf = ((oid: number, format?: 'text' | 'binary') => {
  if (oid === NUMERIC) return (value: string) => new Prisma.Decimal(value);
  // A date column is a calendar day: midnight UTC, as Prisma reads it (pg's default is the process's time zone).
  if (oid === DATE) return (value: string) => new Date(`${value}T00:00:00Z`);
  if (oid === NUMERIC_ARRAY) return (value: string) => parseTextArray(value).map((item) => new Prisma.Decimal(item));
  return pg.types.getTypeParser(oid, format ?? 'text');
}) as typeof pg.types.getTypeParser;

/** What every connection of ours is opened with: its name and the bounds on a dead peer on either side. */
export function connectionSettings(
  databaseUrl: string,
  applicationName: string,
  timeouts: DatabaseTimeouts,
): PoolConfig {
  return {
    connectionString: databaseUrl,
    application_name: applicationName,
    types: { getTypeParser: parserOf },
    connectionTimeoutMillis: timeouts.connectMs,
    statement_timeout: timeouts.statementMs,
    // A transaction left open by a stuck caller must not hold row locks forever.
    idle_in_transaction_session_timeout: timeouts.statementMs * 3,
    // The driver's own bound, a little above the server's, for a server that stopped answering.
    query_timeout: timeouts.statementMs + 2_000,
    // Our side notices a vanished server (failover, cut network) instead of waiting on a dead socket.
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE.idleSeconds * 1_000,
    // The server's side notices a vanished client: polled during statements, probed by keepalives when idle.
    options: [
      `-c client_connection_check_interval=${DEAD_CLIENT_CHECK_MS}`,
      `-c tcp_keepalives_idle=${KEEPALIVE.idleSeconds}`,
      `-c tcp_keepalives_interval=${KEEPALIVE.intervalSeconds}`,
      `-c tcp_keepalives_count=${KEEPALIVE.count}`,
    ].join(' '),
  };
}

/**
 * A pg pool whose connections never take the process down: PostgreSQL ending a session (restart, failover,
 * pg_terminate_backend) is an 'error' event on the pool for an idle connection and on the client for a checked-out
 * one; unhandled, either exits the process. The failed query itself still rejects (and answers 503).
 */
export function resilientPool(config: PoolConfig, onConnectionError: (error: Error) => void): Pool {
  const pool = new Pool(config);
  pool.on('error', onConnectionError);
  pool.on('connect', (client) => client.on('error', onConnectionError));
  return pool;
}

export interface DatabaseClientOptions {
  /** Who opens it (`api`, `worker`, `test`, ...): the connections' application_name, see connectionName. */
  role: string;
  poolSize?: number;
  timeouts?: DatabaseTimeouts;
  /** Told of every connection PostgreSQL ended (default: ignored; the failed query reports it). */
  onConnectionError?: (error: Error) => void;
}

/**
 * The one way to open the database: the Prisma client on the pg driver adapter (no native engine).
 * The client compiles every query (WebAssembly) on every call (1-3 ms of CPU each under Prisma 6, `npm run bench`), except that
 * concurrent `findUnique` calls of one shape on a unique field alone are compiled and run as one. So: look a row
 * up with `findUnique` by its id alone and check its owner in code (ownedBy), never `findFirst` (a plan several
 * times dearer) nor a `{ id, partnerId }` filter (not merged); keep a request's queries few. The one lookup every
 * request makes (the API key) is plain SQL on the same pool, see sqlPoolOf.
 */
export function createPrismaClient(databaseUrl: string, options: DatabaseClientOptions): PrismaDatabaseClient {
  const timeouts = options.timeouts ?? defaultDatabaseTimeouts;
  const pool = resilientPool(
    { ...connectionSettings(databaseUrl, connectionName(options.role), timeouts), max: options.poolSize ?? 10 },
    options.onConnectionError ?? (() => undefined),
  );
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  // Configurable: a Proxy of the client (tests) may answer another pool.
  Object.defineProperty(prisma, SQL_POOL, { value: pool, configurable: true });
  Object.defineProperty(prisma, SQL_BUILDER, { value: sqlBuilderOn(pool), configurable: true });
  return prisma as PrismaDatabaseClient;
}

/** Closes the client's connections (its pool): the last call of a process or a test on it. */
export function closeDatabaseClient(db: DatabaseClient): Promise<void> {
  return prismaOf(db).$disconnect();
}

/** Decimals (money, rates) as statement parameters: their exact text, never JSON or a float. */
class DecimalParameters extends OperationNodeTransformer {
  private static exact(value: unknown): unknown {
    if (Prisma.Decimal.isDecimal(value)) return value.toFixed();
    return Array.isArray(value) && value.some((item) => Prisma.Decimal.isDecimal(item))
      ? value.map((item: unknown) => DecimalParameters.exact(item))
      : value;
  }
  protected override transformValue(node: ValueNode): ValueNode {
    return Object.freeze({ ...node, value: DecimalParameters.exact(node.value) });
  }
  protected override transformPrimitiveValueList(node: PrimitiveValueListNode): PrimitiveValueListNode {
    return Object.freeze({
      ...node,
      values: Object.freeze(node.values.map((value) => DecimalParameters.exact(value))),
    });
  }
}
const decimalParameters: KyselyPlugin = {
  transformQuery: ({ node }) => new DecimalParameters().transformNode(node),
  transformResult: ({ result }) => Promise.resolve(result),
};

/** Kysely on a pool: camelCase names in code, snake_case in the database (as schema.prisma maps them). */
export function sqlBuilderOn(pool: Pool, log?: (query: CompiledQuery) => void): Kysely<DB> {
  return new Kysely<DB>({
    dialect: new PostgresDialect({ pool }),
    ...(log && { log: (event: LogEvent) => log(event.query) }),
    // Column names only: the keys inside JSON values (addresses, rail details) are the API's and stay as stored.
    plugins: [new CamelCasePlugin({ maintainNestedObjectKeys: true }), decimalParameters],
  });
}

/** A decimal as given to a write: a Decimal, or its exact text. */
export type DecimalText = Prisma.Decimal | string;

/** The Decimal of a value given to a write. */
export function decimalOf(value: DecimalText): Prisma.Decimal {
  return typeof value === 'string' ? new Prisma.Decimal(value) : value;
}

/**
 * A related row read as JSON within the statement (kysely's jsonObjectFrom): its column names in camelCase and its
 * timestamps back as dates. Only for rows whose other columns JSON carries exactly (no decimals).
 */
export function relatedRow<Row>(
  value: unknown,
  dateFields: readonly string[] = ['createdAt', 'updatedAt'],
): Row | null {
  if (value === null || value === undefined) return null;
  const row: Record<string, unknown> = {};
  for (const [column, columnValue] of Object.entries(value as Record<string, unknown>)) {
    row[column.replace(/_([a-z0-9])/g, (_, next: string) => next.toUpperCase())] = columnValue;
  }
  for (const field of dateFields) if (typeof row[field] === 'string') row[field] = new Date(row[field]);
  return row as Row;
}

/**
 * A JSON value as a statement parameter: its text (the driver would send a JS array as a PostgreSQL array), or NULL.
 */
export function jsonParameter(value: unknown): string | null {
  return value === null || value === undefined || value === Prisma.DbNull || value === Prisma.JsonNull
    ? null
    : JSON.stringify(value);
}

/**
 * The pg pool under a client of createPrismaClient (same connections, same bounds), for the per-request lookups
 * written in SQL because Prisma's per-call compilation would cost them more than the query itself.
 */
export function sqlPoolOf(prisma: DatabaseClient): Pool {
  const pool = (prisma as unknown as { [SQL_POOL]?: Pool })[SQL_POOL];
  if (!pool) throw new Error('sqlPoolOf: not a client made by createPrismaClient');
  return pool;
}

/** The row when it belongs to the partner, else null: partner scoping of rows read by id (see createPrismaClient). */
export function ownedBy<T extends { partnerId: string }>(row: T | null, partnerId: string): T | null {
  return row && row.partnerId === partnerId ? row : null;
}

/** True when `db` is a database transaction (a Kysely transaction on one connection of the client's pool). */
export function isDatabaseTransaction(db: Database): db is DatabaseTransaction {
  return (db as unknown) instanceof Transaction;
}

/**
 * Prisma Client, for rows read or written outside a transaction. It takes the client only: inside a transaction,
 * Prisma's interactive transaction would cost a settlement several times a Kysely transaction's CPU
 * (scripts/bench-transactions.ts), so there the statements are SQL (sqlOf) and this does not compile.
 */
export function prismaOf(db: DatabaseClient): PrismaClient {
  return db as unknown as PrismaClient;
}

/**
 * The Kysely instance a statement written in SQL runs on: the transaction itself, or, outside a transaction, Kysely
 * on the client's pool (the same pool Prisma uses, without the cost of Prisma's raw-query layer).
 */
export function sqlOf(db: Database): Kysely<DB> {
  if (isDatabaseTransaction(db)) return db as unknown as Transaction<DB>;
  const builder = (db as unknown as { [SQL_BUILDER]?: Kysely<DB> })[SQL_BUILDER];
  if (!builder) throw new Error('sqlOf: not a client made by createPrismaClient');
  return builder;
}

/**
 * A statement built and compiled once and then run with new values: for the hottest statements (the transaction read
 * partners poll and every settlement step locks), whose kysely build, plugins and compilation cost more CPU than
 * sending them (`npm run bench -- --profile`). `build` receives one placeholder per value and must pass each to the
 * statement as a parameter, unchanged.
 */
export function reusableStatement<Row, Values extends string[]>(
  build: (db: Kysely<DB>, ...values: Values) => Compilable<Row>,
  arity: Values['length'],
): (db: Database, ...values: Values) => Promise<Row[]> {
  const placeholders = Array.from({ length: arity }, (_, index) => `\u0000value ${index}`) as Values;
  let compiled: { query: CompiledQuery<Row>; positions: number[][] } | undefined;
  return async (db, ...values) => {
    const kysely = sqlOf(db);
    if (!compiled) {
      const query = build(kysely, ...placeholders).compile();
      const positions = placeholders.map((placeholder) =>
        query.parameters.flatMap((parameter, position) => (parameter === placeholder ? [position] : [])),
      );
      if (positions.some((found) => found.length === 0))
        throw new Error('reusableStatement: a value is not a parameter');
      compiled = { query, positions };
    }
    const parameters = [...compiled.query.parameters];
    compiled.positions.forEach((found, index) => found.forEach((position) => (parameters[position] = values[index])));
    return (await kysely.executeQuery<Row>({ ...compiled.query, parameters })).rows;
  };
}

/**
 * The one way to run several statements as one database transaction: a Kysely transaction on one connection of the
 * client's pool, bounded like every query of the pool (the pool's connect timeout to start, statement_timeout per
 * statement, idle_in_transaction_session_timeout for a caller that stalls). Code outside the persistence layer
 * passes `tx` to persistence functions.
 */
export function withDatabaseTransaction<T>(
  prisma: DatabaseClient,
  work: (tx: DatabaseTransaction) => Promise<T>,
): Promise<T> {
  return sqlOf(prisma)
    .transaction()
    .execute((tx) => work(tx as unknown as DatabaseTransaction));
}

/**
 * True when a read or write needed a row that does not exist: Prisma's P2025 (findUniqueOrThrow, update) or Kysely's
 * NoResultError (executeTakeFirstOrThrow). The one "not found" of the persistence layer: activities fail for good on
 * it, since retrying cannot make the row appear.
 */
export function isMissingRow(error: unknown): boolean {
  return (
    error instanceof NoResultError || (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2025')
  );
}

/**
 * True when a write failed on a unique index (Prisma P2002, or SQLSTATE 23505 from the pool), optionally one whose
 * name contains `constraint` (the driver adapter reports it in the error's meta, pg in `constraint`).
 */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (error instanceof DatabaseError) {
    // From statements run through Kysely: SQLSTATE 23505 with the index's name.
    return error.code === '23505' && (constraint === undefined || (error.constraint ?? '').includes(constraint));
  }
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return false;
  const meta = JSON.stringify(error.meta ?? {});
  // P2002 from the model API; P2010 carrying SQLSTATE 23505 from a statement written in SQL (sql-rows.ts).
  const unique = error.code === 'P2002' || (error.code === 'P2010' && meta.includes('"originalCode":"23505"'));
  return unique && (constraint === undefined || meta.includes(constraint));
}

// SQLSTATE classes and codes that mean "the database cannot serve now; the same request may succeed later".
const unavailableSqlStates = new Set(['57P01', '57P02', '57P03', '53300', '57014', '55P03', '40001', '40P01']);
const unavailableMessages = [
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN/,
  /Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /Query read timeout/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
  /terminating connection/i,
  /Unable to start a transaction in the given time/i,
  /Transaction already closed|Transaction not found/i,
  /Can't reach database server/i,
  /Client has encountered a connection error/i,
];
const unavailablePrismaCodes = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2028', 'P2034']);
// What the pg driver adapter reports under Prisma's P2010 (meta.driverAdapterError.cause.kind) when the connection,
// not the statement, failed: e.g. `ConnectionClosed` ("Server has closed the connection.") when PostgreSQL ended the
// session a query was about to use.
const unavailableAdapterKinds = new Set([
  'ConnectionClosed',
  'DatabaseNotReachable',
  'SocketTimeout',
  'TlsConnectionError',
  'TooManyConnections',
  'TransactionAlreadyClosed',
]);

/**
 * True when an error means the database is unreachable, overloaded or timed out (as opposed to a fault of the
 * request or of our code): the API answers such errors 503 service_unavailable with Retry-After.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 6; depth += 1) {
    const candidate = current as {
      code?: unknown;
      message?: unknown;
      cause?: unknown;
      meta?: unknown;
      originalCode?: unknown;
    };
    if (typeof candidate.code === 'string') {
      if (unavailablePrismaCodes.has(candidate.code) || unavailableSqlStates.has(candidate.code)) return true;
      if (candidate.code.startsWith('08')) return true; // connection exceptions
    }
    if (typeof candidate.originalCode === 'string' && unavailableSqlStates.has(candidate.originalCode)) return true;
    const adapterKind = (candidate.meta as { driverAdapterError?: { cause?: { kind?: unknown } } } | undefined)
      ?.driverAdapterError?.cause?.kind;
    if (typeof adapterKind === 'string' && unavailableAdapterKinds.has(adapterKind)) return true;
    const text = `${typeof candidate.message === 'string' ? candidate.message : ''} ${JSON.stringify(candidate.meta ?? '')}`;
    if (unavailableMessages.some((pattern) => pattern.test(text))) return true;
    current = candidate.cause;
  }
  return false;
}
