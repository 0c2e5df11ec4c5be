// The stack `npm run bench` measures, each part a separate process as in production: PostgreSQL (the private
// cluster, database payments_bench recreated per run), the Temporal dev server (the CLI of
// scripts/temporal-binaries.sh), the API and the worker (the built dist, or the sources through tsx with --tsx),
// plus the bench's own floor server and engine-ceiling worker. Logs go to .data/bench/logs/ (written by the children directly,
// so relaying them costs the bench nothing).
import type { Client } from '@temporalio/client';
import { temporal as temporalProto } from '@temporalio/proto';
import { ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { writeWorkflowBundle } from '../bundle-workflows';
import { prepareDatabase, PreparedDatabase } from '../lib/database';
import { projectRoot } from '../lib/paths';
import { nodeArgsOf, serviceEnv } from '../lib/service-runtime';
import { devServerSqliteArgs, temporalBinary } from '../lib/temporal';
import { customSearchAttributes } from '../../src/temporal/search-attributes';
import { freePort } from '../lib/ports';

export const benchDir = path.join(projectRoot, '.data', 'bench');
export const logDir = path.join(benchDir, 'logs');
export const ENGINE_TASK_QUEUE = 'bench-engine';

export interface Runtime {
  /** `tsx`: sources through tsx, as `npm run dev`; `dist`: `npm run build` output, as production. */
  kind: 'tsx' | 'dist';
  /** V8 CPU profiles of the API and the workers, written to .data/bench/profiles/ when they stop. */
  profile?: boolean;
}

export const profileDir = path.join(benchDir, 'profiles');

interface Managed {
  name: string;
  child: ChildProcess;
  logFile: string;
}

async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number, child?: ChildProcess) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error(`${what}: the process exited (${child.exitCode})`);
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what} not ready after ${timeoutMs / 1000} s`);
}

function portAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

async function httpOk(url: string): Promise<boolean> {
  try {
    return (await fetch(url)).ok;
  } catch {
    return false;
  }
}

const logHas = (file: string, text: string) => () => existsSync(file) && readFileSync(file, 'utf8').includes(text);

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
export function cpuMsOf(pid: number): number | null {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** USER_HZ: 100 on Linux (the kernel reports CPU times in these ticks whatever its internal rate). */
const CLOCK_TICKS_PER_SECOND = 100;

export class Stack {
  readonly processes: Managed[] = [];
  database!: PreparedDatabase;
  temporalAddress = '';
  apiUrl = '';
  floorUrl = '';
  private childEnv: NodeJS.ProcessEnv = {};

  constructor(private readonly runtime: Runtime) {
    rmSync(logDir, { recursive: true, force: true });
    mkdirSync(logDir, { recursive: true });
    if (runtime.profile) rmSync(profileDir, { recursive: true, force: true });
  }

  private spawn(name: string, command: string, args: string[], env: NodeJS.ProcessEnv): Managed {
    const logFile = path.join(logDir, `${name}.log`);
    const fd = openSync(logFile, 'a');
    const child = spawn(command, args, { cwd: projectRoot, env, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    const managed = { name, child, logFile };
    this.processes.push(managed);
    return managed;
  }

  /** A TypeScript entry point of this repository (bench helpers always run from source). */
  private spawnTs(name: string, entry: string, env: NodeJS.ProcessEnv, nodeArgs: string[] = []): Managed {
    // `--import tsx` keeps the script in this very process (the tsx CLI would add a parent process to measure).
    return this.spawn(name, process.execPath, [...nodeArgs, '--import', 'tsx', entry], env);
  }

  /** The API or the worker, from source or from dist. */
  private spawnService(name: string, which: 'server' | 'worker', env: NodeJS.ProcessEnv): Managed {
    // One folder per process: with tsx's loader thread a process writes two profiles (the main thread's is the big one).
    const nodeArgs = [
      ...nodeArgsOf[which === 'server' ? 'api' : 'worker'],
      ...(this.runtime.profile ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, name)}`] : []),
    ];
    return this.runtime.kind === 'dist'
      ? this.spawn(name, process.execPath, [...nodeArgs, path.join('dist', 'src', `${which}.js`)], env)
      : this.spawnTs(name, path.join('src', `${which}.ts`), env, nodeArgs);
  }

  /** Uses a running stack (`--attach`): its database, Temporal and API; the bench adds only its own helpers. */
  attach(databaseUrl: string, temporalAddress: string, apiUrl: string): void {
    this.database = { url: databaseUrl, localCluster: null };
    this.temporalAddress = temporalAddress;
    this.apiUrl = apiUrl;
  }

  async startDatabase(): Promise<void> {
    this.database = await prepareDatabase({ localDatabase: 'payments_bench', recreate: true, privateCluster: true });
  }

  async startTemporal(): Promise<void> {
    const cli = await temporalBinary('cli');
    if (!cli) throw new Error('no Temporal CLI (scripts/temporal-binaries.sh cli provided none)');
    const port = await freePort();
    const dbFile = path.join(benchDir, 'temporal.db');
    rmSync(dbFile, { force: true });
    const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--headless'];
    args.push('--namespace', 'default', '--db-filename', dbFile, '--log-level', 'warn', ...devServerSqliteArgs);
    for (const key of customSearchAttributes) args.push('--search-attribute', `${key.name}=Keyword`);
    const managed = this.spawn('temporal', cli, args, process.env);
    await waitFor('Temporal', () => portAccepts(port), 60_000, managed.child);
    this.temporalAddress = `127.0.0.1:${port}`;
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
  private serviceEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    this.childEnv = {
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
      ...extra,
    };
    return this.childEnv;
  }

  async startApi(): Promise<Managed> {
    const port = await freePort();
    this.apiUrl = `http://127.0.0.1:${port}`;
    const managed = this.spawnService('api', 'server', this.serviceEnv({ PORT: String(port) }));
    await waitFor('API', () => httpOk(`${this.apiUrl}/health/live`), 120_000, managed.child);
    return managed;
  }

  /** Starts a worker and waits until it polls its task queue (whatever LOG_LEVEL says). */
  async startWorker(index: number, temporal: Client): Promise<Managed> {
    const bundle = await this.workflowBundlePath();
    const managed = this.spawnService(`worker-${index}`, 'worker', this.serviceEnv({ WORKFLOW_BUNDLE_PATH: bundle }));
    const identity = `${managed.child.pid}@`;
    const polling = async () => {
      const { pollers } = await temporal.workflowService.describeTaskQueue({
        namespace: 'default',
        taskQueue: { name: process.env.TEMPORAL_TASK_QUEUE ?? 'payments' },
        taskQueueType: temporalProto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      });
      return (pollers ?? []).some((poller) => poller.identity?.startsWith(identity));
    };
    await waitFor(`worker ${index}`, polling, 180_000, managed.child);
    return managed;
  }

  async startEngineWorker(): Promise<Managed> {
    const managed = this.spawnTs('engine-worker', path.join('scripts', 'bench', 'engine', 'worker.ts'), {
      ...process.env,
      TEMPORAL_ADDRESS: this.temporalAddress,
      TEMPORAL_NAMESPACE: 'default',
      BENCH_TASK_QUEUE: ENGINE_TASK_QUEUE,
    });
    await waitFor('engine worker', logHas(managed.logFile, 'engine worker running'), 180_000, managed.child);
    return managed;
  }

  /** (Re)starts the floor server on `table` (the table the API's GET reads). */
  async startFloor(table: 'customers' | 'transactions'): Promise<void> {
    await this.stopProcess('floor');
    const port = await freePort();
    this.floorUrl = `http://127.0.0.1:${port}`;
    const managed = this.spawnTs('floor', path.join('scripts', 'bench', 'floor-server.ts'), {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: this.database.url,
      FLOOR_TABLE: table,
      TEMPORAL_ADDRESS: this.temporalAddress,
      TEMPORAL_NAMESPACE: 'default',
      BENCH_TASK_QUEUE: ENGINE_TASK_QUEUE,
    });
    await waitFor('floor server', logHas(managed.logFile, 'floor server listening'), 60_000, managed.child);
  }

  /** Cumulative CPU ms of the named processes (those running). */
  cpu(names: string[]): Record<string, number> {
    const usage: Record<string, number> = {};
    for (const name of names) {
      const pid = this.pidOf(name);
      const ms = pid === undefined ? null : cpuMsOf(pid);
      if (ms !== null) usage[name] = ms;
    }
    return usage;
  }

  pidOf(name: string): number | undefined {
    return this.processes.find((managed) => managed.name === name && managed.child.exitCode === null)?.child.pid;
  }

  async stopProcess(name: string): Promise<void> {
    const managed = this.processes.find((candidate) => candidate.name === name);
    if (!managed) return;
    this.processes.splice(this.processes.indexOf(managed), 1);
    await stopChild(managed.child);
  }

  async stop(): Promise<void> {
    // Workers and API first (they drain), then the engine, then the database.
    for (const managed of [...this.processes].reverse()) await stopChild(managed.child);
    this.processes.length = 0;
    this.database?.localCluster?.stopIfStartedHere();
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

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
