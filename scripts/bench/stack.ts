// The stack `npm run bench` measures, each part a separate process as in production: PostgreSQL (the private
// cluster, database payments_bench recreated per run), the Temporal dev server (the CLI of
// scripts/temporal-binaries.sh) or, with --engine server, the Temporal server on the same cluster (databases
// temporal_bench and temporal_bench_visibility, recreated per run; docs/production.md), the API and the worker (the built dist, or the sources through tsx with --tsx),
// plus the bench's own floor server and engine-ceiling worker. Logs go to .data/bench/logs/ (written by the children directly,
// so relaying them costs the bench nothing).
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { writeWorkflowBundle } from '../bundle-workflows';
import type { PreparedDatabase } from '../lib/database';
import { projectRoot } from '../lib/paths';
import { freePort } from '../lib/ports';
import { nodeArgsOf, serviceEnv } from '../lib/service-runtime';
import { temporalDatabaseOn } from '../lib/production';
import { tsEntry } from '../lib/entry-points';
import { httpOk, ProcessSpec, Stack, StackProcess } from '../lib/stack';

export const benchDir = path.join(projectRoot, '.data', 'bench');
export const logDir = path.join(benchDir, 'logs');
export const ENGINE_TASK_QUEUE = 'bench-engine';

export interface Runtime {
  /** `tsx`: sources through tsx, as `npm run dev`; `dist`: `npm run build` output, as production. */
  kind: 'tsx' | 'dist';
  /** V8 CPU profiles of the API and the workers, written to .data/bench/profiles/ when they stop. */
  profile?: boolean;
  engine?: 'dev' | 'server';
  /**
   * The API and the workers with telemetry on, as an operator runs them: metrics served (METRICS_PORT=0, any port) and
   * every span exported over OTLP to a receiver in the bench that counts and drops them.
   */
  telemetry?: boolean;
}

export const profileDir = path.join(benchDir, 'profiles');

/** Peak resident memory (VmHWM) and current (VmRSS) of a process, in MB; null once it is gone. */
export function memoryOf(pid: number): { peakMb: number; currentMb: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { peakMb: kb('VmHWM') / 1024, currentMb: kb('VmRSS') / 1024 };
  } catch {
    return null;
  }
}

/** CPU time (user + system) a process has used so far, in ms; null once it is gone. */
export function cpuMsOf(pid: number, options: { withExitedChildren?: boolean } = {}): number | null {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th, cutime and
    // cstime (the children it has waited for) the 14th and 15th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks =
      Number(fields[11]) +
      Number(fields[12]) +
      (options.withExitedChildren ? Number(fields[13]) + Number(fields[14]) : 0);
    return (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** USER_HZ: 100 on Linux (the kernel reports CPU times in these ticks whatever its internal rate). */
const CLOCK_TICKS_PER_SECOND = 100;

/** The stack on the shared supervisor (scripts/lib/stack.ts), with the bench's own processes. */
export class BenchStack {
  private readonly stack: Stack;
  database!: PreparedDatabase;
  temporalAddress = '';
  apiUrl = '';
  floorUrl = '';

  constructor(private readonly runtime: Runtime) {
    this.stack = new Stack({ logs: logDir, stopLimitMs: 15_000 });
    if (runtime.profile) rmSync(profileDir, { recursive: true, force: true });
  }

  /** A TypeScript entry point of this repository (bench helpers always run from source). */
  private startTs(spec: Omit<ProcessSpec, 'command' | 'args'>, entry: string): Promise<StackProcess> {
    return this.stack.start({ ...spec, ...tsEntry(entry) });
  }

  /** The API or the worker, from source or from dist. */
  private startService(spec: Omit<ProcessSpec, 'command' | 'args'>, which: 'server' | 'worker'): Promise<StackProcess> {
    // One folder per process: with tsx's loader thread a process writes two profiles (the main thread's is the big one).
    const nodeArgs = [
      ...nodeArgsOf[which === 'server' ? 'api' : 'worker'],
      ...(this.runtime.profile ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, spec.name)}`] : []),
    ];
    const command =
      this.runtime.kind === 'dist'
        ? { command: process.execPath, args: [...nodeArgs, path.join('dist', 'src', `${which}.js`)] }
        : tsEntry(path.join('src', `${which}.ts`), nodeArgs);
    return this.stack.start({ ...spec, ...command });
  }

  /** Uses a running stack (`--attach`): its database, Temporal and API; the bench adds only its own helpers. */
  attach(databaseUrl: string, temporalAddress: string, apiUrl: string): void {
    this.database = { url: databaseUrl, localCluster: null };
    this.temporalAddress = temporalAddress;
    this.apiUrl = apiUrl;
  }

  private databaseStarted: Promise<void> | undefined;

  private otlp: Promise<{ server: http.Server; url: string; bytes: number }> | undefined;

  /** `--telemetry`: the OTLP/HTTP receiver the services export to (started once, before the first service). */
  private telemetrySink(): Promise<{ url: string } | undefined> {
    if (!this.runtime.telemetry) return Promise.resolve(undefined);
    this.otlp ??= new Promise((resolve) => {
      const sink = { server: http.createServer(), url: '', bytes: 0 };
      sink.server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
        request.on('error', () => undefined); // an exporter cut off as its service stops
        request.on('data', (chunk: Buffer) => (sink.bytes += chunk.length));
        request.on('end', () => response.writeHead(200, { 'Content-Type': 'application/json' }).end('{}'));
      });
      sink.server.listen(0, '127.0.0.1', () => {
        sink.url = `http://127.0.0.1:${(sink.server.address() as AddressInfo).port}`;
        resolve(sink);
      });
    });
    return this.otlp;
  }

  /** Megabytes of OTLP the services exported (`--telemetry`), or null without it. */
  async exportedTelemetryMb(): Promise<number | null> {
    return this.otlp ? (await this.otlp).bytes / 1e6 : null;
  }

  startDatabase(): Promise<void> {
    this.databaseStarted = this.stack
      .startDatabase({ localDatabase: 'payments_bench', recreate: true, privateCluster: true })
      .then((database) => {
        this.database = database;
      });
    return this.databaseStarted;
  }

  /** The sandbox chain's node (process `anvil`), a block per transaction: the settlement's sends go through it. */
  async startAnvil(): Promise<void> {
    await this.stack.startAnvil();
  }

  /** The bank simulator (process `bank-simulator`): the EUR and USD rails' ISO 20022 bank, as in `npm run dev`. */
  /** The bank simulator's address once startBankSimulator has run (the ISO 20022 settlements need it). */
  get bankSimulatorUrl(): string | undefined {
    return this.stack.bankSimulatorUrl;
  }

  async startBankSimulator(): Promise<void> {
    const stateDir = path.join(benchDir, 'bank-simulator');
    rmSync(stateDir, { recursive: true, force: true });
    await this.stack.startBankSimulator({ port: await freePort(), stateDir });
  }

  async startTemporal(): Promise<void> {
    if (this.runtime.engine === 'server') {
      // On the bench's PostgreSQL cluster, as the production topology shares one cluster.
      await this.databaseStarted;
      const cluster = this.database.localCluster;
      if (!cluster) throw new Error('--engine server needs the private cluster');
      await this.stack.startTemporalServer({
        database: {
          ...temporalDatabaseOn(cluster),
          database: 'temporal_bench',
          visibilityDatabase: 'temporal_bench_visibility',
        },
        fresh: true,
        readyWithinMs: 180_000,
      });
      this.temporalAddress = this.stack.temporal!.address;
      return;
    }
    const dbFile = path.join(benchDir, 'temporal.db');
    rmSync(dbFile, { force: true });
    await this.stack.startTemporal({ dbFile, readyWithinMs: 60_000 });
    this.temporalAddress = this.stack.temporal!.address;
  }

  private workflowBundle: Promise<string> | undefined;

  /**
   * The workflow code for workers run from source, bundled once here (as `npm run build` does for dist): a worker
   * left to bundle it itself runs webpack in its own process, and its resident memory keeps that peak.
   */
  private workflowBundlePath(): Promise<string> {
    if (this.runtime.kind === 'dist') return Promise.resolve(path.join(projectRoot, 'dist', 'workflow-bundle.js'));
    const target = path.join(benchDir, 'workflow-bundle.js');
    this.workflowBundle ??= writeWorkflowBundle(target).then(() => target);
    return this.workflowBundle;
  }

  /** Environment of the API and the worker: `npm run dev`'s, on this stack. */
  private async serviceEnv(extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> {
    const sink = await this.telemetrySink();
    return {
      ...process.env,
      ...serviceEnv,
      APP_ENV: 'sandbox',
      DATABASE_URL: this.database.url,
      TEMPORAL_ADDRESS: this.temporalAddress,
      TEMPORAL_NAMESPACE: 'default',
      DOCUMENT_STORAGE_DIR: path.join(benchDir, 'documents'),
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
      // The per-partner limit is still checked on every request (its cost is measured), never reached.
      RATE_LIMIT_PARTNER_REQUESTS: '1000000',
      // The scale section's webhook configurations point at the floor server on loopback.
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      // The real EVM adapter on this stack's node.
      ...this.stack.chainEnv(1),
      ...this.stack.bankEnv(),
      ...(sink ? { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' } : {}),
      ...extra,
    };
  }

  async startApi(): Promise<StackProcess> {
    const port = await freePort();
    this.apiUrl = `http://127.0.0.1:${port}`;
    return this.startService(
      {
        name: 'api',
        env: await this.serviceEnv({ PORT: String(port) }),
        ready: () => httpOk(`${this.apiUrl}/health/live`),
      },
      'server',
    );
  }

  /** Starts a worker and waits until it polls its task queue (whatever LOG_LEVEL says). */
  async startWorker(index: number): Promise<StackProcess> {
    const bundle = await this.workflowBundlePath();
    return this.startService(
      {
        name: `worker-${index}`,
        env: await this.serviceEnv({ WORKFLOW_BUNDLE_PATH: bundle }),
        ready: this.stack.pollsTaskQueue(process.env.TEMPORAL_TASK_QUEUE ?? 'payments'),
        readyWithinMs: 180_000,
      },
      'worker',
    );
  }

  startEngineWorker(): Promise<StackProcess> {
    const env = {
      ...process.env,
      TEMPORAL_ADDRESS: this.temporalAddress,
      TEMPORAL_NAMESPACE: 'default',
      BENCH_TASK_QUEUE: ENGINE_TASK_QUEUE,
    };
    return this.startTs(
      { name: 'engine-worker', env, ready: logHas('engine worker running'), readyWithinMs: 180_000 },
      path.join('scripts', 'bench', 'engine', 'worker.ts'),
    );
  }

  /** (Re)starts the floor server on `table` (the table the API's GET reads). */
  async startFloor(table: 'customers' | 'transactions'): Promise<void> {
    await this.stack.remove('floor');
    const port = await freePort();
    this.floorUrl = `http://127.0.0.1:${port}`;
    const env = {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: this.database.url,
      FLOOR_TABLE: table,
      TEMPORAL_ADDRESS: this.temporalAddress,
      TEMPORAL_NAMESPACE: 'default',
      BENCH_TASK_QUEUE: ENGINE_TASK_QUEUE,
    };
    await this.startTs(
      { name: 'floor', env, ready: logHas('floor server listening'), readyWithinMs: 60_000 },
      path.join('scripts', 'bench', 'floor-server.ts'),
    );
  }

  /**
   * Cumulative CPU ms of the named processes (those running). `postgres`: the private cluster's processes together
   * (its postmaster and every backend; on --engine server they serve the Temporal server too).
   */
  cpu(names: string[]): Record<string, number> {
    const usage: Record<string, number> = {};
    for (const name of names) {
      if (name === 'postgres') {
        const ms = this.postgresCpuMs();
        if (ms !== null) usage[name] = ms;
        continue;
      }
      const pid = this.pidOf(name);
      const ms = pid === undefined ? null : cpuMsOf(pid);
      if (ms !== null) usage[name] = ms;
    }
    return usage;
  }

  /**
   * CPU ms of the cluster's postmaster and its backends so far: the live ones, and those that have exited through the
   * postmaster's count of its reaped children. Without the exited ones the total fell whenever a backend exited
   * during a section (the pool closing idle connections), which showed as negative CPU per operation.
   */
  private postgresCpuMs(): number | null {
    const dataDir = this.database?.localCluster?.dataDir;
    if (!dataDir) return null;
    try {
      const postmaster = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      let total = cpuMsOf(postmaster, { withExitedChildren: true }) ?? 0;
      for (const entry of readdirSync('/proc')) {
        if (!/^\d+$/.test(entry)) continue;
        try {
          const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
          const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
          if (parent === postmaster) total += cpuMsOf(Number(entry)) ?? 0;
        } catch {
          // The process has exited meanwhile.
        }
      }
      return total;
    } catch {
      return null;
    }
  }

  pidOf(name: string): number | undefined {
    return this.stack.pidOf(name);
  }

  /** The services first (they drain), then Temporal, then the database. */
  async stop(): Promise<void> {
    await this.stack.stop();
    const sink = await this.otlp;
    if (sink) await new Promise((resolve) => sink.server.close(resolve));
  }
}

const logHas = (text: string) => (process: StackProcess) => process.recentOutput().includes(text);

/** Samples the resident memory of named processes while the load runs (the peak under load, start-up aside). */
export class MemorySampler {
  private readonly maxima = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly pids: () => Record<string, number | undefined>) {}

  start(intervalMs = 500): void {
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  sample(): void {
    for (const [name, pid] of Object.entries(this.pids())) {
      if (pid === undefined) continue;
      const memory = memoryOf(pid);
      if (memory) this.maxima.set(name, Math.max(this.maxima.get(name) ?? 0, memory.currentMb));
    }
  }

  stop(): Record<string, number> {
    clearInterval(this.timer);
    this.sample();
    return Object.fromEntries(this.maxima);
  }
}
