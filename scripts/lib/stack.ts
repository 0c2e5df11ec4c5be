// The one supervisor of the local stack, shared by `npm run dev` (scripts/dev.ts), `npm run stack` (scripts/stack.ts),
// `npm run chaos` (scripts/chaos/) and `npm run bench` (scripts/bench/): PostgreSQL (scripts/lib/database.ts), the
// Temporal engine (the CLI's dev server, or the production topology's Temporal server on PostgreSQL and its Web UI:
// scripts/lib/temporal-server.ts) and the services (the API, the worker(s), the bench's helpers), each a child
// process on loopback. It starts each and
// waits until it is ready, kills or restarts one by name (chaos), notices exits nobody asked for, and stops them
// all. Every wait is bounded.
import { Client, Connection } from '@temporalio/client';
import { temporal as temporalProto } from '@temporalio/proto';
import { ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, closeSync, mkdirSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { customSearchAttributes } from '../../src/temporal/search-attributes';
import { deploySandboxTokens, type SandboxToken } from '../../src/providers/evm/sandbox-chain';
import { anvilAnswers, anvilArgs, anvilBinary, type AnvilOptions, SANDBOX_CHAIN_ID } from './anvil';
import { prepareDatabase, PreparedDatabase } from './database';
import { tsEntry } from './entry-points';
import { projectRoot } from './paths';
import { freePort } from './ports';
import { devServerSqliteArgs, temporalBinary } from './temporal';
import {
  ensureNamespace,
  NAMESPACE,
  setUpTemporalSchemas,
  TemporalDatabase,
  temporalServerBinaries,
  TemporalServerBinaries,
  temporalClientTls,
  temporalServerEnv,
  temporalServerTlsEnv,
  temporalServerArgs,
  temporalServerAuthEnv,
  temporalUiAuthEnv,
  temporalUiEnv,
  temporalUiTlsEnv,
  type TemporalUiSignOn,
} from './temporal-server';
import { oidcProviderEnv, type OidcProviderSettings } from './oidc';
import type { TemporalCertificates } from './tls';
import { temporalTlsOptions } from '../../src/temporal/tls';
import { waitUntil } from './wait';
import { SIMULATOR_ACCOUNTS_SETTING } from '../../simulators/bank/iso20022/accounts';

const DEFAULT_START_LIMIT_MS = 120_000;
const DEFAULT_STOP_LIMIT_MS = 30_000;

export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** Resolves true once the process serves (a probe that throws counts as not yet). */
  ready: (process: StackProcess) => Promise<boolean> | boolean;
  /** How long it may take to become ready (default 120 s). */
  readyWithinMs?: number;
  /** Its log file, instead of <logs>/<name>.log (or the terminal) the stack gives. */
  logFile?: string;
}

/**
 * What the API and workers need to use the bank simulator's API Pix and liquidity channels (docs/pix.md,
 * docs/liquidity-provider.md): its OAuth2 client, the service's collection key, and the service's own `pix` webhook
 * (a fixed development secret; the simulator posts to the API at `apiUrl`). Plain HTTP: the simulator of dev, tests
 * and chaos serves no TLS (test/api-pix.test.ts covers mutual TLS).
 */
export function bankSimulatorServiceEnv(simulatorUrl: string, apiUrl: string): Record<string, string> {
  return {
    PIX_API_URL: `${simulatorUrl}/pix`,
    PIX_CLIENT_ID: 'payments-api-dev',
    PIX_CLIENT_SECRET: 'dev-pix-secret',
    PIX_COLLECTION_KEY: '11222333000181',
    PIX_WEBHOOK_SECRET: 'dev-pix-webhook-secret-not-for-production',
    PIX_WEBHOOK_BASE_URL: apiUrl,
    LIQUIDITY_PROVIDER_URL: `${simulatorUrl}/liquidity`,
  };
}

/** True when `url` answers 2xx within `timeoutMs`. */
export async function httpOk(url: string, timeoutMs = 1000): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(timeoutMs) })).ok;
  } catch {
    return false;
  }
}

/** One child process the stack starts, kills and restarts; its output goes to its log file (or the terminal). */
export class StackProcess {
  private child: ChildProcess | null = null;
  private expectingExit = false;
  /** Where this start's output begins in the log file. */
  private outputOffset = 0;
  starts = 0;
  /** Exits nobody asked for (a crash). */
  readonly unexpectedExits: string[] = [];

  constructor(
    readonly spec: ProcessSpec,
    /** undefined: the process prints to this process's terminal. */
    readonly logFile: string | undefined,
    private readonly stopLimitMs: number,
    private readonly onUnexpectedExit: (process: StackProcess, code: number | null) => void,
  ) {
    // Appended to, never emptied: a process started again under the same name (the bench's floor server) keeps
    // its earlier output; the stack empties its log folder once, when it is created.
    if (logFile) mkdirSync(path.dirname(logFile), { recursive: true });
  }

  get name(): string {
    return this.spec.name;
  }

  get running(): boolean {
    return this.child !== null;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** What the process printed since its start (at most 200 kB: only start-up output is searched); '' on a terminal. */
  recentOutput(): string {
    if (!this.logFile) return '';
    const fd = openSync(this.logFile, 'r');
    try {
      const buffer = Buffer.alloc(Math.min(200_000, Math.max(0, statSync(this.logFile).size - this.outputOffset)));
      const read = readSync(fd, buffer, 0, buffer.length, this.outputOffset);
      return buffer.subarray(0, read).toString('utf8');
    } finally {
      closeSync(fd);
    }
  }

  /** Starts the process and waits until it is ready; kills it and throws when it exits first or takes too long. */
  async start(): Promise<void> {
    if (this.child) throw new Error(`${this.name} is already running`);
    this.starts += 1;
    this.expectingExit = false;
    const { command, args, env } = this.spec;
    let child: ChildProcess;
    if (this.logFile) {
      appendFileSync(this.logFile, `\n===== start #${this.starts} at ${new Date().toISOString()} =====\n`);
      this.outputOffset = statSync(this.logFile).size;
      // The child writes to the file itself: through a pipe, a parent slow to read (busy, or short of CPU) would
      // block the child's synchronous log writes (an API blocked that way answered past its deadline), and
      // relaying them would cost the bench's measurements.
      const logFd = openSync(this.logFile, 'a');
      try {
        child = spawn(command, args, { cwd: projectRoot, env, stdio: ['ignore', logFd, logFd] });
      } finally {
        closeSync(logFd);
      }
    } else {
      child = spawn(command, args, { cwd: projectRoot, env, stdio: 'inherit' });
    }
    this.child = child;
    let exited = false;
    child.once('exit', (code, signal) => {
      exited = true;
      if (this.logFile) appendFileSync(this.logFile, `\n===== exit code=${code} signal=${signal} =====\n`);
      if (this.child === child) this.child = null;
      if (!this.expectingExit) {
        this.unexpectedExits.push(`${this.name} exited by itself (code ${code}, signal ${signal})`);
        this.onUnexpectedExit(this, code);
      }
    });
    const limitMs = this.spec.readyWithinMs ?? DEFAULT_START_LIMIT_MS;
    const ok = await waitUntil(async () => exited || (await this.spec.ready(this)), limitMs, 100);
    if (exited || !ok) {
      if (!exited) await this.kill('SIGKILL');
      const where = this.logFile ? ` (log: ${this.logFile})` : '';
      throw new Error(
        exited
          ? `${this.name} exited before it was ready${where}`
          : `${this.name} did not become ready within ${limitMs / 1000} s${where}`,
      );
    }
  }

  /** Sends `signal` and waits for the exit (SIGKILL after the stack's stop limit if it ignores the signal). */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.expectingExit = true;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const late = setTimeout(() => child.kill('SIGKILL'), this.stopLimitMs);
    await exited;
    clearTimeout(late);
  }

  async restart(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    await this.kill(signal);
    await this.start();
  }
}

export interface StackOptions {
  /** Folder of the children's logs (<name>.log; emptied first), or 'terminal': they print here (npm run dev). */
  logs: string | 'terminal';
  /** How long a stopped process may take before it is SIGKILLed (default 30 s). */
  stopLimitMs?: number;
  /** Called when a process exits without being asked to (after its unexpectedExits entry). */
  onUnexpectedExit?: (process: StackProcess, code: number | null) => void;
}

export interface TemporalOptions {
  /** Its SQLite file (kept across its restarts, so workflows survive them). */
  dbFile: string;
  /** Default: a free one. */
  port?: number;
  /** The Web UI's port; default none (headless). */
  uiPort?: number;
  /** The CLI's path, when the caller started looking it up early (default: scripts/temporal-binaries.sh cli). */
  cli?: Promise<string | undefined>;
  readyWithinMs?: number;
  logFile?: string;
}

export interface TemporalServerOptions {
  /** The PostgreSQL databases it stores to (created and migrated by scripts/production/temporal-schema.sh). */
  database: TemporalDatabase;
  /** Drop its databases first (a run that starts from nothing, like the dev server's deleted SQLite file). */
  fresh?: boolean;
  /** The frontend's gRPC port; default a free one. */
  port?: number;
  /** From temporalServerBinaries(), when the caller looked them up early. */
  binaries?: Promise<TemporalServerBinaries | undefined>;
  /** Mutual TLS (scripts/lib/tls.ts): the server takes only clients with a certificate; the stack's own is `admin`. */
  tls?: TemporalCertificates;
  /**
   * Operators' single sign-on (needs `tls`): the public frontend takes only tokens signed by a key of `jwksUrl`
   * (temporalServerAuthEnv); the stack's client, the API and the workers use the internal frontend (`temporal.address`).
   */
  signOn?: { jwksUrl: string };
  readyWithinMs?: number;
  logFile?: string;
}

export class Stack {
  private readonly processes = new Map<string, StackProcess>();
  database: PreparedDatabase | undefined;
  /** The Temporal dev server's address and a client on it, once startTemporal has run. */
  temporal: { address: string; connection: Connection; client: Client } | undefined;
  private readonly stopLimitMs: number;

  constructor(private readonly options: StackOptions) {
    this.stopLimitMs = options.stopLimitMs ?? DEFAULT_STOP_LIMIT_MS;
    if (options.logs !== 'terminal') {
      rmSync(options.logs, { recursive: true, force: true });
      mkdirSync(options.logs, { recursive: true });
    }
  }

  /** PostgreSQL: DATABASE_URL or a private cluster, with the database created and migrated (prepareDatabase). */
  async startDatabase(options: Parameters<typeof prepareDatabase>[0]): Promise<PreparedDatabase> {
    this.database = await prepareDatabase(options);
    return this.database;
  }

  /** The Temporal dev server (process `temporal`), ready once it describes the default namespace. */
  async startTemporal(options: TemporalOptions): Promise<StackProcess> {
    const cli = await (options.cli ?? temporalBinary('cli'));
    if (!cli) throw new Error('no Temporal CLI: scripts/temporal-binaries.sh cli provides one (or TEMPORAL_CLI_PATH)');
    const port = options.port ?? (await freePort());
    const address = `127.0.0.1:${port}`;
    const connection = Connection.lazy({ address });
    const client = new Client({ connection, namespace: 'default' });
    this.temporal = { address, connection, client };
    const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port)];
    args.push(...(options.uiPort === undefined ? ['--headless'] : ['--ui-port', String(options.uiPort)]));
    args.push('--namespace', 'default', '--db-filename', options.dbFile, '--log-level', 'warn', ...devServerSqliteArgs);
    for (const key of customSearchAttributes) args.push('--search-attribute', `${key.name}=Keyword`);
    return this.start({
      name: 'temporal',
      command: cli,
      args,
      env: process.env,
      readyWithinMs: options.readyWithinMs,
      logFile: options.logFile,
      ready: async () => {
        await connection.withDeadline(Date.now() + 1000, () =>
          client.workflowService.describeNamespace({ namespace: 'default' }),
        );
        return true;
      },
    });
  }

  /**
   * The Temporal server on PostgreSQL (process `temporal`, as the dev server's, so that a scenario stops and starts
   * either alike): its schemas set up or updated, then the server, then the namespace and its search attributes.
   * Ready (also on a restart) once the frontend describes the namespace.
   */
  async startTemporalServer(options: TemporalServerOptions): Promise<StackProcess> {
    const binaries = await (options.binaries ?? temporalServerBinaries());
    if (!binaries)
      throw new Error(
        'no Temporal server: scripts/temporal-binaries.sh server builds it (needs Go; docs/production.md)',
      );
    this.temporalServerBinaries = binaries;
    if (options.fresh) await dropDatabases(options.database);
    await setUpTemporalSchemas(binaries.sqlTool, options.database);
    const port = options.port ?? (await freePort());
    if (options.signOn && !options.tls) throw new Error('single sign-on needs mutual TLS (the internal frontend)');
    const internalPort = options.signOn ? await freePort() : undefined;
    this.temporalFrontendAddress = `127.0.0.1:${port}`;
    const address = `127.0.0.1:${internalPort ?? port}`;
    this.temporalTls = options.tls;
    const tls = options.tls ? temporalTlsOptions(temporalClientTls(options.tls, 'admin')) : undefined;
    const connection = Connection.lazy({ address, tls });
    const client = new Client({ connection, namespace: NAMESPACE });
    this.temporal = { address, connection, client };
    let namespaceReady = false;
    const server = await this.start({
      name: 'temporal',
      command: binaries.server,
      args: temporalServerArgs(options.signOn !== undefined),
      env: {
        ...process.env,
        ...(await temporalServerEnv(options.database, port, internalPort)),
        ...(options.tls ? temporalServerTlsEnv(options.tls) : {}),
        ...(options.signOn ? temporalServerAuthEnv(options.signOn.jwksUrl) : {}),
      },
      readyWithinMs: options.readyWithinMs,
      logFile: options.logFile,
      ready: async () => {
        await connection.withDeadline(Date.now() + 2000, async () => {
          if (namespaceReady) await client.workflowService.describeNamespace({ namespace: NAMESPACE });
          else await client.workflowService.getSystemInfo({});
        });
        return true;
      },
    });
    await ensureNamespace(client);
    namespaceReady = true;
    return server;
  }

  private temporalServerBinaries: TemporalServerBinaries | undefined;
  /** The Temporal server's public frontend (people, the UI); `temporal.address` differs only with single sign-on. */
  temporalFrontendAddress: string | undefined;
  /** The certificates of the Temporal server's mutual TLS, when it has it. */
  temporalTls: TemporalCertificates | undefined;

  /** The Temporal Web UI server (process `temporal-ui`) on this stack's Temporal server; ready once it serves its page. */
  startTemporalUi(options: { port: number; signOn?: TemporalUiSignOn; readyWithinMs?: number }): Promise<StackProcess> {
    const binaries = this.temporalServerBinaries;
    if (!binaries || !this.temporal) throw new Error('startTemporalServer first');
    return this.start({
      name: 'temporal-ui',
      command: binaries.uiServer,
      // The image's command (`ui-server --env docker start`), with its config template from the binaries' cache.
      args: ['--root', binaries.uiRoot, '--env', 'docker', 'start'],
      env: {
        ...process.env,
        ...temporalUiEnv(this.temporalFrontendAddress ?? this.temporal.address, options.port),
        ...(this.temporalTls ? temporalUiTlsEnv(this.temporalTls) : {}),
        ...(options.signOn ? temporalUiAuthEnv(options.signOn) : {}),
      },
      readyWithinMs: options.readyWithinMs,
      ready: () => httpOk(`http://127.0.0.1:${options.port}/`),
    });
  }

  /**
   * The OpenID Provider of operators' sign-on (process `oidc-provider`, scripts/production/oidc-provider.ts; static
   * users, development and tests only). Its keys stay in `settings.stateDir` across restarts.
   */
  startOidcProvider(settings: OidcProviderSettings, readyWithinMs?: number): Promise<StackProcess> {
    return this.start({
      name: 'oidc-provider',
      ...tsEntry(path.join(projectRoot, 'scripts', 'production', 'oidc-provider.ts')),
      env: { ...process.env, ...oidcProviderEnv(settings) },
      readyWithinMs,
      ready: () => httpOk(`${settings.issuer}/.well-known/openid-configuration`),
    });
  }

  /**
   * The bank simulator (process `bank-simulator`, simulators/bank/): the banks' and providers' channels the
   * service's real adapters talk to. Its state stays in `stateDir` across restarts (chaos restarts it as an outage).
   */
  startBankSimulator(options: { port: number; stateDir: string; readyWithinMs?: number }): Promise<StackProcess> {
    this.bankSimulatorUrl = `http://127.0.0.1:${options.port}`;
    return this.start({
      name: 'bank-simulator',
      ...tsEntry(path.join(projectRoot, 'simulators', 'bank', 'main.ts')),
      env: {
        ...process.env,
        BANK_SIMULATOR_PORT: String(options.port),
        BANK_SIMULATOR_STATE_DIR: options.stateDir,
      },
      readyWithinMs: options.readyWithinMs,
      ready: () => httpOk(`http://127.0.0.1:${options.port}/health`),
    });
  }

  /** The sandbox chain's node once startAnvil has run: what the services' ETHEREUM_* configuration names. */
  chain: { rpcUrl: string; chainId: number; tokens: Record<SandboxToken, string> } | undefined;

  /**
   * The sandbox chain's EVM node (process `anvil`, scripts/lib/anvil.ts) on `port` (default a free one), kept on
   * that port across restarts. Ready, on every start, once it answers and USDC and USDT are at their fixed addresses
   * (deployed on a fresh node, found on one that loaded its state file).
   */
  async startAnvil(options: AnvilOptions & { port?: number; readyWithinMs?: number } = {}): Promise<StackProcess> {
    const port = options.port ?? (await freePort());
    const rpcUrl = `http://127.0.0.1:${port}`;
    let tokens: Record<SandboxToken, string> | undefined;
    const node = await this.start({
      name: 'anvil',
      command: anvilBinary(),
      args: anvilArgs(port, options),
      env: process.env,
      readyWithinMs: options.readyWithinMs ?? 30_000,
      ready: async () => {
        if (!(await anvilAnswers(rpcUrl))) return false;
        tokens = await deploySandboxTokens(rpcUrl);
        return true;
      },
    });
    this.chain = { rpcUrl, chainId: SANDBOX_CHAIN_ID, tokens: tokens! };
    return node;
  }

  /** The bank simulator's address once startBankSimulator has run. */
  bankSimulatorUrl: string | undefined;

  /**
   * The services' environment for the bank simulator (src/config.ts ISO20022_*), once startBankSimulator has run: EUR
   * (SEPA) and USD (wire) payouts and deposits at its ISO 20022 channel.
   */
  bankEnv(reportPollSeconds = 2): Record<string, string> {
    if (!this.bankSimulatorUrl) return {};
    return {
      ISO20022_BANK_URL: `${this.bankSimulatorUrl}/iso20022`,
      ISO20022_ACCOUNTS: SIMULATOR_ACCOUNTS_SETTING,
      ISO20022_REPORT_POLL_SECONDS: String(reportPollSeconds),
    };
  }

  /** The services' environment for the sandbox chain's node (src/config.ts ETHEREUM_*), once startAnvil has run. */
  chainEnv(confirmations = 1): Record<string, string> {
    if (!this.chain) return {};
    return {
      ETHEREUM_RPC_URL: this.chain.rpcUrl,
      ETHEREUM_CHAIN_ID: String(this.chain.chainId),
      ETHEREUM_CONFIRMATIONS: String(confirmations),
    };
  }

  /** A probe for ProcessSpec.ready: the process polls `taskQueue` on this stack's Temporal (whatever it logs). */
  pollsTaskQueue(taskQueue: string): (process: StackProcess) => Promise<boolean> {
    return async (process) => {
      const temporal = this.temporal;
      if (!temporal) throw new Error('startTemporal first');
      const identity = `${process.pid}@`;
      const { pollers } = await temporal.client.workflowService.describeTaskQueue({
        namespace: 'default',
        taskQueue: { name: taskQueue },
        taskQueueType: temporalProto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      });
      return (pollers ?? []).some((poller) => poller.identity?.startsWith(identity));
    };
  }

  /** Adds a process without starting it (its log file is emptied). A name is taken once. */
  add(spec: ProcessSpec): StackProcess {
    if (this.processes.has(spec.name)) throw new Error(`${spec.name} is already in the stack`);
    const logFile =
      spec.logFile ?? (this.options.logs === 'terminal' ? undefined : path.join(this.options.logs, `${spec.name}.log`));
    const managed = new StackProcess(spec, logFile, this.stopLimitMs, (process, code) =>
      this.options.onUnexpectedExit?.(process, code),
    );
    this.processes.set(spec.name, managed);
    return managed;
  }

  /** Adds a process and starts it (see StackProcess.start). */
  async start(spec: ProcessSpec): Promise<StackProcess> {
    const managed = this.add(spec);
    await managed.start();
    return managed;
  }

  process(name: string): StackProcess {
    const managed = this.processes.get(name);
    if (!managed) throw new Error(`no process ${name} in the stack`);
    return managed;
  }

  kill(name: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    return this.process(name).kill(signal);
  }

  restart(name: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    return this.process(name).restart(signal);
  }

  /** The pid of a running process. */
  pidOf(name: string): number | undefined {
    return this.processes.get(name)?.pid;
  }

  /** Stops a process (SIGTERM) and forgets it, so that its name can be started again with another spec. */
  async remove(name: string): Promise<void> {
    const managed = this.processes.get(name);
    if (!managed) return;
    this.processes.delete(name);
    await managed.kill('SIGTERM');
  }

  /** Exits nobody asked for, of every process, since the last call. */
  takeUnexpectedExits(): string[] {
    return [...this.processes.values()].flatMap((managed) => managed.unexpectedExits.splice(0));
  }

  /** SIGTERM to the services (they drain against Temporal and the database), then Temporal, then PostgreSQL. */
  async stop(): Promise<void> {
    const services = [...this.processes.values()].filter((managed) => managed.name !== 'temporal');
    // The UI only reads: it goes with the services.
    await Promise.all(services.map((managed) => managed.kill('SIGTERM')));
    await this.processes.get('temporal')?.kill('SIGTERM');
    await this.temporal?.connection.close().catch(() => undefined);
    this.database?.localCluster?.stopIfStartedHere();
  }
}

/** Drops the Temporal server's databases (TemporalServerOptions.fresh). */
async function dropDatabases(database: TemporalDatabase): Promise<void> {
  const admin = new PgClient({
    host: database.host,
    port: database.port,
    user: database.user,
    password: database.password,
    database: 'postgres',
  });
  await admin.connect();
  try {
    for (const name of [database.database ?? 'temporal', database.visibilityDatabase ?? 'temporal_visibility'])
      await admin.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
