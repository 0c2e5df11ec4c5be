// The system under chaos, as real OS processes on loopback: a private PostgreSQL cluster of its own
// (.data/chaos/postgres, database payments_chaos, recreated empty), the Temporal dev server persisting to
// .data/chaos/temporal.db (so workflows survive its restarts), and the API (src/server.ts) and worker (src/worker.ts)
// each started with `node --import tsx` (one process each: a SIGKILL reaches the process itself, not a wrapper).
// Scenarios kill and restart any of them; every wait here is bounded.
// `--engine server` (docs/production.md): the production topology's engine instead of the dev server, the Temporal
// server on the same PostgreSQL cluster (its databases recreated empty), and two worker processes (worker-kill
// and outages then kill one while the other keeps settling). The API and workers still run from source. As in
// `npm run stack -- --production`, the server takes mutual TLS only and operators' single sign-on on its public
// frontend: the API, the workers and this script's own clients connect to the internal frontend with their certificates.
import type { Client, Connection } from '@temporalio/client';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { connectionName, DEAD_PROCESS_LOCKS_RELEASED_MS } from '../../src/persistence/database';
// The invariants read rows and locks as the tests do (an exemption of database-types-only-in-persistence).
import { createPrismaClient, type PrismaDatabaseClient } from '../../src/persistence/internal/database';
import { createPartner } from '../../src/services/partners';
import { writeWorkflowBundle } from '../bundle-workflows';
import { projectRoot } from '../lib/paths';
import { freePort } from '../lib/ports';
import type { LocalPostgres } from '../lib/postgres';
import { startProductionEngine } from '../lib/production';
import { prepareEntryBundles, tsEntry } from '../lib/entry-points';
import { Stack, StackProcess } from '../lib/stack';
import { temporalClientTlsEnv } from '../lib/temporal-server';
import type { TemporalCertificates, TemporalClientName } from '../lib/tls';
import { waitUntil } from '../lib/wait';
import { HttpClient } from './http';

export const chaosDataDir = path.join(projectRoot, '.data', 'chaos');

/** The API's documented request deadline in these runs (REQUEST_TIMEOUT_SECONDS); outage scenarios hold it to this. */
export const REQUEST_TIMEOUT_SECONDS = 8;
/** Webhook backoff in these runs: an outage of hours shortened to minutes (WEBHOOK_RETRY_*). */
export const WEBHOOK_RETRY = { initialSeconds: 1, maximumIntervalSeconds: 4 };
/** A killed request's Idempotency-Key claim is taken over after this (IDEMPOTENCY_ABANDONED_CLAIM_SECONDS). */
export const ABANDONED_CLAIM_SECONDS = 6;

export interface ChaosPartner {
  partnerId: string;
  apiKey: string;
  /** The API as this partner (Authorization header set). */
  api: HttpClient;
}

/** The Temporal engine under chaos: the CLI's dev server (SQLite) or the Temporal server on PostgreSQL. */
export type ChaosEngine = 'dev' | 'server';

function clientTlsEnv(tls: TemporalCertificates | undefined, name: TemporalClientName): Record<string, string> {
  return tls ? temporalClientTlsEnv(tls, name) : {};
}

export class ChaosSystem {
  private constructor(
    /** The supervisor of every process below; a scenario kills and restarts them by name through it. */
    readonly stack: Stack,
    readonly postgres: LocalPostgres,
    readonly databaseUrl: string,
    readonly prisma: PrismaDatabaseClient,
    readonly temporalServer: StackProcess,
    readonly temporalConnection: Connection,
    readonly temporal: Client,
    readonly api: StackProcess,
    /** The first of `workers`. */
    readonly worker: StackProcess,
    /** One worker on the dev server, two on the Temporal server. */
    readonly workers: StackProcess[],
    /** The API without credentials. */
    readonly http: HttpClient,
    readonly apiEnv: NodeJS.ProcessEnv,
    /** The certificates of mutual TLS to Temporal (--engine server); undefined on the dev server (plaintext). */
    readonly temporalTls: TemporalCertificates | undefined,
  ) {}

  /** `name`'s TEMPORAL_TLS_* for a process (or an in-process worker) of the run; none on the dev server. */
  temporalTlsEnv(name: TemporalClientName): Record<string, string> {
    return clientTlsEnv(this.temporalTls, name);
  }

  static async start(log: (message: string) => void, engine: ChaosEngine = 'dev'): Promise<ChaosSystem> {
    rmSync(path.join(chaosDataDir, 'temporal.db'), { force: true });
    rmSync(path.join(chaosDataDir, 'documents'), { recursive: true, force: true });
    const stack = new Stack({ logs: path.join(chaosDataDir, 'logs') });
    const bundle = path.join(projectRoot, '.cache', 'chaos', 'workflow-bundle.js');
    // The API, workers and simulator start from bundles: scenarios restart them dozens of times (entry-points.ts).
    await prepareEntryBundles(path.join(projectRoot, '.cache', 'chaos', 'entry-bundles'));
    let database: Awaited<ReturnType<Stack['startDatabase']>>;
    let temporalServer: StackProcess;
    let temporalTls: TemporalCertificates | undefined;
    if (engine === 'server') {
      const bundled = writeWorkflowBundle(bundle);
      const production = await startProductionEngine(stack, {
        dataDir: chaosDataDir,
        database: 'payments_chaos',
        fresh: true,
        // As the production stack runs it (scripts/stack.ts): `temporalAddress` is then the internal frontend. The UI
        // is the provider's client (the sign-on needs one), signing in through it as in production.
        uiPort: await freePort(),
        tls: true,
        signOn: true,
        log,
      });
      ({ database, temporal: temporalServer, tls: temporalTls } = production);
      await bundled;
      log('workflow code bundled');
    } else {
      database = await stack.startDatabase({
        localDatabase: 'payments_chaos',
        recreate: true,
        ownClusterIn: chaosDataDir,
      });
      log(
        `PostgreSQL: private cluster on port ${database.localCluster!.port} (.data/chaos/postgres), database payments_chaos`,
      );
      await writeWorkflowBundle(bundle);
      log('workflow code bundled');
      temporalServer = await stack.startTemporal({ dbFile: path.join(chaosDataDir, 'temporal.db') });
      log(`Temporal dev server on ${stack.temporal!.address} (.data/chaos/temporal.db)`);
    }
    const postgres = database.localCluster as LocalPostgres;
    const temporal = stack.temporal!;
    // The chain's node keeps its state in a file so that a restart (an Anvil outage scenario) keeps its blocks.
    rmSync(path.join(chaosDataDir, 'anvil'), { recursive: true, force: true });
    mkdirSync(path.join(chaosDataDir, 'anvil'), { recursive: true });
    await stack.startAnvil({ stateFile: path.join(chaosDataDir, 'anvil', 'state.json') });
    log(`Anvil on ${stack.chain!.rpcUrl} (USDC ${stack.chain!.tokens.USDC}, USDT ${stack.chain!.tokens.USDT})`);
    // The bank simulator: EUR and USD rails and deposits over its ISO 20022 channel, its state kept across a restart.
    rmSync(path.join(chaosDataDir, 'bank-simulator'), { recursive: true, force: true });
    await stack.startBankSimulator({ port: await freePort(), stateDir: path.join(chaosDataDir, 'bank-simulator') });
    log(`bank simulator on ${stack.bankSimulatorUrl} (.data/chaos/bank-simulator)`);

    const apiPort = await freePort();
    // Its API Pix and liquidity provider: the fx and pix scenarios run an API and a worker of their own against them
    // (scripts/chaos/scenarios/fx.ts), so the others keep the sandbox rails whose operations they count.
    process.env.BANK_SIMULATOR_URL = stack.bankSimulatorUrl;
    const tlsEnv = (name: TemporalClientName) => clientTlsEnv(temporalTls, name);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      APP_ENV: 'sandbox',
      PORT: String(apiPort),
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: temporal.address,
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
      ...stack.chainEnv(1),
      // The stack's chain watcher keeps up with a run of minutes (the final reconciliation needs its readings).
      ETHEREUM_WATCH_POLL_SECONDS: '2',
      ...stack.bankEnv(1),
      ISO20022_SETTLE_WAIT_SECONDS: '5',
      // Where the chain-legs scenario holds a send after signing or broadcasting (src/providers/evm/sender.ts).
      EVM_SEND_HOLD_DIR: path.join(chaosDataDir, 'evm-holds'),
      // Mutual TLS to the Temporal server (--engine server): the API's certificate; the workers get their own below.
      ...tlsEnv('api'),
    };
    const http = new HttpClient(apiPort);
    const workerCount = engine === 'server' ? 2 : 1;
    const [api, ...workers] = await Promise.all([
      stack.start({
        name: 'api',
        ...tsEntry('src/server.ts'),
        env,
        ready: async () => {
          const live = await http.send({ method: 'GET', path: '/health/live', timeoutMs: 1000 });
          return live.kind === 'response' && live.status === 200;
        },
      }),
      ...Array.from({ length: workerCount }, (_, index) =>
        stack.start({
          name: index === 0 ? 'worker' : `worker-${index + 1}`,
          ...tsEntry('src/worker.ts'),
          env: { ...env, ...tlsEnv('worker') },
          ready: (worker) => worker.recentOutput().includes('"msg":"worker running"'),
        }),
      ),
    ]);
    log(
      `API on 127.0.0.1:${apiPort} (pid ${api.pid}), worker(s) (pid ${workers.map((worker) => worker.pid).join(', ')}); logs in .data/chaos/logs`,
    );
    const prisma = createPrismaClient(database.url, { role: 'chaos', poolSize: 4 });
    return new ChaosSystem(
      stack,
      postgres,
      database.url,
      prisma,
      temporalServer,
      temporal.connection,
      temporal.client,
      api,
      workers[0]!,
      workers,
      http,
      env,
      temporalTls,
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
    return this.stack.takeUnexpectedExits();
  }

  /**
   * SIGKILLs the API or the worker, then checks the documented bound (DEAD_PROCESS_LOCKS_RELEASED_MS): once it has
   * passed, no backend of the dead process (named `<role>-<pid>`, src/persistence/database.ts connectionName) holds a lock or a
   * transaction. Returns what was still held, or undefined.
   */
  async killAndCheckLocks(target: StackProcess): Promise<string | undefined> {
    const pid = target.pid;
    await target.kill('SIGKILL');
    if (pid === undefined) return undefined;
    // A second worker (worker-2) names its connections by its role, as the first does.
    const name = connectionName(target.name.replace(/-\d+$/, ''), undefined, pid);
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
    await this.prisma.$disconnect();
    await this.stack.stop();
  }
}
