import { PrismaPg } from '@prisma/adapter-pg';
import { Prisma, PrismaClient } from '@prisma/client';
import { DatabaseError, Pool, type PoolConfig } from 'pg';

export { Prisma, PrismaClient };

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

/** What every connection of ours is opened with: its name and the bounds on a dead peer on either side. */
export function connectionSettings(
  databaseUrl: string,
  applicationName: string,
  timeouts: DatabaseTimeouts,
): PoolConfig {
  return {
    connectionString: databaseUrl,
    application_name: applicationName,
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
 * Prisma 6 compiles every query (WebAssembly) on every call, 1-3 ms of CPU each (`npm run bench`), except that
 * concurrent `findUnique` calls of one shape on a unique field alone are compiled and run as one. So: look a row
 * up with `findUnique` by its id alone and check its owner in code (ownedBy), never `findFirst` (a plan several
 * times dearer) nor a `{ id, partnerId }` filter (not merged); keep a request's queries few. The one lookup every
 * request makes (the API key) is plain SQL on the same pool, see sqlPoolOf.
 */
export function createPrismaClient(databaseUrl: string, options: DatabaseClientOptions): PrismaClient {
  const timeouts = options.timeouts ?? defaultDatabaseTimeouts;
  const pool = resilientPool(
    { ...connectionSettings(databaseUrl, connectionName(options.role), timeouts), max: options.poolSize ?? 10 },
    options.onConnectionError ?? (() => undefined),
  );
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  // Configurable: a Proxy of the client (tests) may answer another pool.
  Object.defineProperty(prisma, SQL_POOL, { value: pool, configurable: true });
  return prisma;
}

/**
 * The pg pool under a client of createPrismaClient (same connections, same bounds), for the per-request lookups
 * written in SQL because Prisma's per-call compilation would cost them more than the query itself.
 */
export function sqlPoolOf(prisma: PrismaClient): Pool {
  const pool = (prisma as unknown as { [SQL_POOL]?: Pool })[SQL_POOL];
  if (!pool) throw new Error('sqlPoolOf: not a client made by createPrismaClient');
  return pool;
}

/** The row when it belongs to the partner, else null: partner scoping of rows read by id (see createPrismaClient). */
export function ownedBy<T extends { partnerId: string }>(row: T | null, partnerId: string): T | null {
  return row && row.partnerId === partnerId ? row : null;
}

/** A client or an interactive transaction: persistence helpers accept either. */
export type Db = PrismaClient | Prisma.TransactionClient;

/** A database transaction opened by withDatabaseTransaction: persistence functions that write together take it. */
export type DatabaseTransaction = Prisma.TransactionClient;

/**
 * Runs `work` in one database transaction (Prisma's interactive one) within the project's bounds: the way code
 * outside the persistence layer writes several rows at once (it passes `tx` to persistence functions).
 */
export function withDatabaseTransaction<T>(
  prisma: PrismaClient,
  work: (tx: DatabaseTransaction) => Promise<T>,
  timeouts: DatabaseTimeouts = defaultDatabaseTimeouts,
): Promise<T> {
  return prisma.$transaction(work, transactionOptions(timeouts));
}

/** Options of every interactive transaction made while serving a request (bounded waits). */
export function transactionOptions(timeouts: DatabaseTimeouts = defaultDatabaseTimeouts): {
  maxWait: number;
  timeout: number;
} {
  return { maxWait: timeouts.connectMs, timeout: timeouts.statementMs * 2 };
}

/**
 * True when a write failed on a unique index (Prisma P2002, or SQLSTATE 23505 from the pool), optionally one whose
 * name contains `constraint` (the driver adapter reports it in the error's meta, pg in `constraint`).
 */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (error instanceof DatabaseError) {
    // From sqlTransaction's statements: SQLSTATE 23505 with the index's name.
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

/**
 * What the statements written in SQL need of a transaction: Prisma's interactive transaction has it, and so has
 * sqlTransaction's. Values come back as pg or Prisma decode them (numeric as text or Decimal): read them through
 * `String(...)`/Decimal, or with sql-rows.ts.
 */
export interface SqlTransaction {
  $executeRaw(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): PromiseLike<number>;
  $queryRaw<T = unknown>(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): PromiseLike<T>;
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): PromiseLike<T>;
}

/** A tagged template (strings and values) or a ready Prisma.sql, as a statement with $n placeholders. */
function toSql(query: TemplateStringsArray | Prisma.Sql, values: unknown[]): Prisma.Sql {
  return Array.isArray(query) ? Prisma.sql(query as TemplateStringsArray, ...values) : (query as Prisma.Sql);
}

/**
 * A database transaction on one pooled connection, for work written wholly in SQL (the settlement steps): Prisma's
 * interactive transaction costs five times the CPU for the same statements (0.28 against 0.05 ms a statement,
 * `npm run bench`). Bounded like every query of the pool: statement_timeout per statement, and
 * idle_in_transaction_session_timeout should the caller stall.
 */
export async function sqlTransaction<T>(prisma: PrismaClient, work: (tx: SqlTransaction) => Promise<T>): Promise<T> {
  const client = await sqlPoolOf(prisma).connect();
  const run = async (text: string, values: unknown[]) => client.query(text, values);
  const tx: SqlTransaction = {
    $executeRaw: async (query, ...values) => {
      const sql = toSql(query, values);
      return (await run(sql.text, sql.values)).rowCount ?? 0;
    },
    $queryRaw: async <R>(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) => {
      const sql = toSql(query, values);
      return (await run(sql.text, sql.values)).rows as R;
    },
    $queryRawUnsafe: async <R>(query: string, ...values: unknown[]) => (await run(query, values)).rows as R,
  };
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await work(tx);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
    throw error;
  } finally {
    client.release(broken); // a connection that could not roll back is closed, not reused
  }
}
