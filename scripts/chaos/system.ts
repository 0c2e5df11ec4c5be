// The system under chaos, as real OS processes on loopback: a private PostgreSQL cluster of its own
// (.data/chaos/postgres, database payments_chaos, recreated empty), the Temporal dev server persisting to
// .data/chaos/temporal.db (so workflows survive its restarts), and the API (src/server.ts) and worker (src/worker.ts)
// each started with `node --import tsx` (one process each: a SIGKILL reaches the process itself, not a wrapper).
// Scenarios kill and restart any of them; every wait here is bounded.
import { Client, Connection } from '@temporalio/client';
import { ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, closeSync, mkdirSync, openSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { connectionName, createPrismaClient, DEAD_PROCESS_LOCKS_RELEASED_MS, PrismaClient } from '../../src/persistence/database';
import { createPartner } from '../../src/services/partners';
import { customSearchAttributes } from '../../src/temporal/search-attributes';
import { writeWorkflowBundle } from '../bundle-workflows';
import { prepareDatabase } from '../lib/database';
import { projectRoot } from '../lib/paths';
import type { LocalPostgres } from '../lib/postgres';
import { devServerSqliteArgs, temporalBinary } from '../lib/temporal';
import { HttpClient, pause } from './http';
import { freePort } from '../lib/ports';

export const chaosDataDir = path.join(projectRoot, '.data', 'chaos');
const logDir = path.join(chaosDataDir, 'logs');

/** The API's documented request deadline in these runs (REQUEST_TIMEOUT_SECONDS); outage scenarios hold it to this. */
export const REQUEST_TIMEOUT_SECONDS = 8;
/** Webhook backoff in these runs: an outage of hours shortened to minutes (WEBHOOK_RETRY_*). */
export const WEBHOOK_RETRY = { initialSeconds: 1, maximumIntervalSeconds: 4 };
/** A killed request's Idempotency-Key claim is taken over after this (IDEMPOTENCY_ABANDONED_CLAIM_SECONDS). */
export const ABANDONED_CLAIM_SECONDS = 6;

const START_LIMIT_MS = 120_000;
const STOP_LIMIT_MS = 30_000;

/** Waits for `probe` to return true, checking every `everyMs`, for at most `limitMs`; false when it never did. */
export async function waitUntil(probe: () => Promise<boolean>, limitMs: number, everyMs = 200): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    if (await probe().catch(() => false)) return true;
    if (Date.now() > deadline) return false;
    await pause(everyMs);
  }
}

/** One OS process the runner starts, kills and restarts; its output goes to .data/chaos/logs/<name>.log. */
export class ManagedProcess {
  private child: ChildProcess | null = null;
  private expectingExit = false;
  /** Where this start's output begins in the log file. */
  private outputOffset = 0;
  starts = 0;
  /** Exits nobody asked for (a crash): each is a failure of the run. */
  readonly unexpectedExits: string[] = [];

  constructor(
    readonly name: string,
    private readonly command: string,
    private readonly args: string[],
    private readonly env: NodeJS.ProcessEnv,
    /** Resolves true once the process serves; `recentOutput` is what it printed since its start. */
    private readonly ready: (recentOutput: () => string) => Promise<boolean>,
  ) {
    mkdirSync(logDir, { recursive: true });
    writeFileSync(this.logFile, '');
  }

  /** What the process printed since its start (at most 200 kB: only start-up output is searched). */
  private recentOutput(): string {
    const fd = openSync(this.logFile, 'r');
    try {
      const buffer = Buffer.alloc(Math.min(200_000, Math.max(0, statSync(this.logFile).size - this.outputOffset)));
      const read = readSync(fd, buffer, 0, buffer.length, this.outputOffset);
      return buffer.subarray(0, read).toString('utf8');
    } finally {
      closeSync(fd);
    }
  }

  get logFile(): string {
    return path.join(logDir, `${this.name}.log`);
  }

  get running(): boolean {
    return this.child !== null;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(): Promise<void> {
    if (this.child) throw new Error(`${this.name} is already running`);
    this.starts += 1;
    this.expectingExit = false;
    appendFileSync(this.logFile, `\n===== start #${this.starts} at ${new Date().toISOString()} =====\n`);
    this.outputOffset = statSync(this.logFile).size;
    // The child writes to the file itself: through a pipe, a runner slow to read (busy, or short of CPU) would
    // block the child's synchronous log writes, and an API blocked that way answered past its deadline.
    const logFd = openSync(this.logFile, 'a');
    let child: ChildProcess;
    try {
      child = spawn(this.command, this.args, { cwd: projectRoot, env: this.env, stdio: ['ignore', logFd, logFd] });
    } finally {
      closeSync(logFd);
    }
    this.child = child;
    let exited = false;
    child.once('exit', (code, signal) => {
      exited = true;
      appendFileSync(this.logFile, `\n===== exit code=${code} signal=${signal} =====\n`);
      if (this.child === child) this.child = null;
      if (!this.expectingExit)
        this.unexpectedExits.push(`${this.name} exited by itself (code ${code}, signal ${signal})`);
    });
    const ok = await waitUntil(
      async () => exited || (await this.ready(() => this.recentOutput())),
      START_LIMIT_MS,
      100,
    );
    if (exited || !ok) {
      if (!exited) await this.kill('SIGKILL');
      throw new Error(`${this.name} did not become ready within ${START_LIMIT_MS / 1000} s (log: ${this.logFile})`);
    }
  }

  /** Sends `signal` and waits for the exit (SIGKILL after STOP_LIMIT_MS if it ignores the signal). */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.expectingExit = true;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const late = setTimeout(() => child.kill('SIGKILL'), STOP_LIMIT_MS);
    await exited;
    clearTimeout(late);
  }

  async restart(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    await this.kill(signal);
    await this.start();
  }
}

export interface ChaosPartner {
  partnerId: string;
  apiKey: string;
  /** The API as this partner (Authorization header set). */
  api: HttpClient;
}

export class ChaosSystem {
  private constructor(
    readonly postgres: LocalPostgres,
    readonly databaseUrl: string,
    readonly prisma: PrismaClient,
    readonly temporalServer: ManagedProcess,
    readonly temporalConnection: Connection,
    readonly temporal: Client,
    readonly api: ManagedProcess,
    readonly worker: ManagedProcess,
    /** The API without credentials. */
    readonly http: HttpClient,
    readonly apiEnv: NodeJS.ProcessEnv,
  ) {}

  static async start(log: (message: string) => void): Promise<ChaosSystem> {
    rmSync(path.join(chaosDataDir, 'temporal.db'), { force: true });
    rmSync(path.join(chaosDataDir, 'documents'), { recursive: true, force: true });
    const database = await prepareDatabase({
      localDatabase: 'payments_chaos',
      recreate: true,
      ownClusterIn: chaosDataDir,
    });
    const postgres = database.localCluster as LocalPostgres;
    log(`PostgreSQL: private cluster on port ${postgres.port} (.data/chaos/postgres), database payments_chaos`);

    const bundle = path.join(projectRoot, '.cache', 'chaos', 'workflow-bundle.js');
    await writeWorkflowBundle(bundle);
    log('workflow code bundled');

    const cli = await temporalBinary('cli');
    if (!cli) throw new Error('no Temporal CLI: scripts/temporal-binaries.sh cli provides one');
    const [temporalPort, apiPort] = [await freePort(), await freePort()];
    const temporalAddress = `127.0.0.1:${temporalPort}`;
    const temporalConnection = Connection.lazy({ address: temporalAddress });
    const temporal = new Client({ connection: temporalConnection, namespace: 'default' });
    const temporalServer = new ManagedProcess(
      'temporal',
      cli,
      [
        'server',
        'start-dev',
        '--ip',
        '127.0.0.1',
        '--port',
        String(temporalPort),
        '--headless',
        '--db-filename',
        path.join(chaosDataDir, 'temporal.db'),
        '--log-level',
        'warn',
        ...devServerSqliteArgs,
        ...customSearchAttributes.flatMap((key) => ['--search-attribute', `${key.name}=Keyword`]),
      ],
      process.env,
      async () => {
        await temporalConnection.withDeadline(Date.now() + 1000, () =>
          temporal.workflowService.describeNamespace({ namespace: 'default' }),
        );
        return true;
      },
    );
    await temporalServer.start();
    log(`Temporal dev server on ${temporalAddress} (.data/chaos/temporal.db)`);

    const env: NodeJS.ProcessEnv = {
      ...process.env,
      APP_ENV: 'sandbox',
      PORT: String(apiPort),
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: 'payments',
      LOG_LEVEL: 'info',
      DOCUMENT_STORAGE_DIR: path.join(chaosDataDir, 'documents'),
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      REQUEST_TIMEOUT_SECONDS: String(REQUEST_TIMEOUT_SECONDS),
      TEMPORAL_CALL_TIMEOUT_SECONDS: '5',
      DATABASE_CONNECT_TIMEOUT_SECONDS: '3',
      DATABASE_STATEMENT_TIMEOUT_SECONDS: '5',
      WORKFLOW_START_SWEEP_SECONDS: '1',
      WEBHOOK_RELAY_SWEEP_SECONDS: '1',
      WEBHOOK_TIMEOUT_SECONDS: '2',
      WEBHOOK_RETRY_INITIAL_SECONDS: String(WEBHOOK_RETRY.initialSeconds),
      WEBHOOK_RETRY_MAX_INTERVAL_SECONDS: String(WEBHOOK_RETRY.maximumIntervalSeconds),
      IDEMPOTENCY_ABANDONED_CLAIM_SECONDS: String(ABANDONED_CLAIM_SECONDS),
      SANDBOX_VERIFICATION_DELAY_SECONDS: '2',
      WORKFLOW_BUNDLE_PATH: bundle,
      // One partner sends thousands of requests a minute here (fuzzing, load): limits would answer most with 429.
      RATE_LIMIT_PARTNER_REQUESTS: '1000000',
      RATE_LIMIT_PUBLIC_REQUESTS: '1000000',
      // The fuzzer sends bad keys from 127.0.0.1, as every other client of the run does.
      AUTH_FAILURE_LIMIT: '1000000',
    };
    const node = process.execPath;
    const http = new HttpClient(apiPort);
    const api = new ManagedProcess('api', node, ['--import', 'tsx', 'src/server.ts'], env, async () => {
      const live = await http.send({ method: 'GET', path: '/health/live', timeoutMs: 1000 });
      return live.kind === 'response' && live.status === 200;
    });
    const worker = new ManagedProcess('worker', node, ['--import', 'tsx', 'src/worker.ts'], env, async (output) =>
      output().includes('"msg":"worker running"'),
    );
    await Promise.all([api.start(), worker.start()]);
    log(`API on 127.0.0.1:${apiPort} (pid ${api.pid}), worker (pid ${worker.pid}); logs in .data/chaos/logs`);
    const prisma = createPrismaClient(database.url, { role: 'chaos', poolSize: 4 });
    return new ChaosSystem(
      postgres,
      database.url,
      prisma,
      temporalServer,
      temporalConnection,
      temporal,
      api,
      worker,
      http,
      env,
    );
  }

  async createPartner(name: string): Promise<ChaosPartner> {
    const created = await createPartner(this.prisma, name, 'sandbox');
    return {
      partnerId: created.partner_id,
      apiKey: created.api_key,
      api: this.http.with({ Authorization: created.api_key }),
    };
  }

  /** True when the API answers ready (database with migrations, and Temporal). */
  async isReady(): Promise<boolean> {
    const ready = await this.http.send({ method: 'GET', path: '/health/ready', timeoutMs: 5000 });
    return ready.kind === 'response' && ready.status === 200;
  }

  /** Crashes of the API, worker or Temporal that no scenario caused, since the last call. */
  takeUnexpectedExits(): string[] {
    return [this.temporalServer, this.api, this.worker].flatMap((process) => process.unexpectedExits.splice(0));
  }

  /**
   * SIGKILLs the API or the worker, then checks the documented bound (DEAD_PROCESS_LOCKS_RELEASED_MS): once it has
   * passed, no backend of the dead process (named `<role>-<pid>`, src/persistence/database.ts connectionName) holds a lock or a
   * transaction. Returns what was still held, or undefined.
   */
  async killAndCheckLocks(target: ManagedProcess): Promise<string | undefined> {
    const pid = target.pid;
    await target.kill('SIGKILL');
    if (pid === undefined) return undefined;
    const name = connectionName(target.name, undefined, pid);
    const leftovers = async () =>
      this.prisma.$queryRaw<Array<{ pid: number; application_name: string; state: string; locks: bigint }>>`
        SELECT * FROM (
          SELECT a.pid, a.application_name, a.state, a.xact_start,
                 (SELECT count(*) FROM pg_locks l
                  WHERE l.pid = a.pid AND l.granted AND l.locktype <> 'virtualxid') AS locks
          FROM pg_stat_activity a
          WHERE a.application_name = ${name} OR a.application_name LIKE ${`${name}/%`}) backend
        WHERE backend.xact_start IS NOT NULL OR backend.locks > 0`;
    let held: Awaited<ReturnType<typeof leftovers>> = [];
    const released = await waitUntil(
      async () => {
        held = await leftovers();
        return held.length === 0;
      },
      DEAD_PROCESS_LOCKS_RELEASED_MS,
      100,
    );
    if (released) return undefined;
    return `${DEAD_PROCESS_LOCKS_RELEASED_MS} ms after ${name} was killed, its backends still hold: ${held
      .map((row) => `${row.application_name} (backend ${row.pid}, ${row.state}, ${row.locks} lock(s))`)
      .join('; ')}`;
  }

  async stop(): Promise<void> {
    await Promise.all([this.api.kill('SIGTERM'), this.worker.kill('SIGTERM')]);
    await this.temporalServer.kill('SIGTERM');
    await this.temporalConnection.close().catch(() => undefined);
    await this.prisma.$disconnect();
    this.postgres.stopIfStartedHere();
  }
}
