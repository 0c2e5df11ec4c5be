// Time-skipping Temporal test servers for the harnesses. Every harness still gets a server of its own (time skipping
// is global to a server, and a server cannot go back in time, so sharing one would let one file's skipped days or
// left-over workflows reach the next), but not a JVM of its own: global-setup.ts starts one JVM for the run
// (scripts/java/TestServers.java, TEMPORAL_TEST_SERVERS_PATH) that starts a server on request in milliseconds and
// stops it at the harness's teardown, its code compiled once for the whole run instead of once per file.
//
// Without that launcher (no javac) or with TEST_NO_SHARED_JVM=1: a pool of started servers, one JVM each: global-
// setup.ts fills it with one started server per jest worker, a harness claims one (an atomic rename of its pool
// entry) and starts its replacement at once, so the replacement boots while the current file runs. A harness stops
// its server at teardown; global-teardown.ts stops what is left in the pool. See docs/development.md "Test suite".
//
// Without TEMPORAL_TEST_SERVER_PATH (jest run directly, not through `npm test`) or without a pool, harnesses fall
// back to the SDK starting a server of its own.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type ChildHandle, isRunning, startChild } from '../../scripts/lib/child-process';
import { freePort } from '../../scripts/lib/ports';
import { recordProcessCpu } from './profile';

interface PooledServer {
  pid: number;
  port: number;
}

interface ClaimedEntry extends PooledServer {
  file: string;
}

/** The pool folder of this jest run (global-setup.ts sets it; jest's workers inherit it). */
export function temporalServerPool(): string | undefined {
  return process.env.TEST_TEMPORAL_SERVER_POOL;
}

/** Starts one test server on a free port, detached from the caller's event loop; its entry in the pool. */
export async function startPooledServer(pool: string, binary: string): Promise<void> {
  const port = await freePort();
  const child: ChildProcess = spawn(binary, [String(port)], { stdio: 'ignore' });
  child.on('error', () => undefined); // a binary that cannot start shows as a server that never listens
  child.unref();
  if (child.pid === undefined) return;
  // Named by start time: claims take the oldest first, the likeliest to be listening already.
  const entry = path.join(pool, `ready-${Date.now()}-${port}.json`);
  const server: PooledServer = { pid: child.pid, port };
  writeFileSync(`${entry}.partial`, JSON.stringify(server));
  renameSync(`${entry}.partial`, entry);
}

/** Takes a started server out of the pool (another harness renaming it first wins it), or null when it is empty. */
function claimPooledServer(pool: string): ClaimedEntry | null {
  let names: string[];
  try {
    names = readdirSync(pool)
      .filter((name) => name.startsWith('ready-') && name.endsWith('.json'))
      .sort();
  } catch {
    return null;
  }
  for (const name of names) {
    const file = path.join(pool, `claimed-${process.pid}-${name.slice('ready-'.length)}`);
    try {
      renameSync(path.join(pool, name), file);
    } catch {
      continue; // claimed by another harness meanwhile
    }
    return { ...(JSON.parse(readFileSync(file, 'utf8')) as PooledServer), file };
  }
  return null;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Waits (bounded) until the server listens; false when its process died or it never opened the port. */
async function listening(server: PooledServer, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isRunning(server.pid)) return false;
    if (await accepts(server.port)) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return false;
}

/** Stops a pooled server, but only if the pid is still a test server (never another process that reused it). */
export function stopPooledServer(server: PooledServer): void {
  try {
    // The binary is a script that execs java (io.temporal.testserver.TestServer <port>).
    const commandLine = readFileSync(`/proc/${server.pid}/cmdline`, 'utf8').split('\0');
    if (!commandLine.some((arg) => /testserver|test-server/i.test(arg)) || !commandLine.includes(String(server.port)))
      return;
  } catch {
    return; // exited already (or no /proc: then process.kill below is the best effort)
  }
  try {
    process.kill(server.pid, 'SIGKILL');
  } catch {
    // Exited meanwhile.
  }
}

export interface ClaimedServer {
  address: string;
  /** Stops the server and forgets it. */
  release(): Promise<void>;
}

/** The run's JVM of test servers (global-setup.ts starts it; global-teardown.ts stops it). */
export interface TestServersJvm extends ChildHandle {
  /** Its control address, `127.0.0.1:<port>`. */
  control: string;
}

/** Where the harnesses ask the run's JVM for servers (global-setup.ts sets it; jest's workers inherit it). */
function testServersControl(): string | undefined {
  return process.env.TEST_TEMPORAL_SERVERS_CONTROL;
}

/**
 * Starts the launcher, which listens on a control port of the OS's choosing and writes it to a file (a port picked
 * here beforehand was once taken by the dev server, starting meanwhile, before the JVM bound it); resolves once the
 * port answers (60 s at most).
 */
export async function startTestServersJvm(launcher: string): Promise<TestServersJvm> {
  const portFile = path.join(os.tmpdir(), `test-servers-${process.pid}-${Date.now()}.port`);
  let port = 0;
  try {
    const jvm = await startChild({
      name: "the test servers' JVM",
      command: launcher,
      args: [portFile],
      answers: async () => {
        if (!port && existsSync(portFile)) port = Number(readFileSync(portFile, 'utf8'));
        return port > 0 && accepts(port);
      },
      readyWithinMs: 60_000,
    });
    return { ...jvm, control: `127.0.0.1:${port}` };
  } finally {
    rmSync(portFile, { force: true });
  }
}

/** One request to the run's JVM: the line it answers (30 s at most). */
function askTestServers(control: string, request: string): Promise<string> {
  const [host, port] = control.split(':');
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port: Number(port) });
    let answer = '';
    socket.setTimeout(30_000, () => socket.destroy(new Error(`the test servers' JVM did not answer "${request}"`)));
    socket.once('connect', () => socket.write(`${request}\n`));
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.once('error', reject);
    socket.once('close', () => resolve(answer.trim()));
  });
}

/** A server of this harness's own in the run's JVM. */
async function serverFromJvm(control: string): Promise<ClaimedServer> {
  const answer = await askTestServers(control, 'start');
  const port = /^started (\d+)$/.exec(answer)?.[1];
  if (!port) throw new Error(`the test servers' JVM answered "${answer}" to start`);
  return {
    address: `127.0.0.1:${port}`,
    async release() {
      await askTestServers(control, `stop ${port}`);
    },
  };
}

/**
 * A started time-skipping server of this harness's own from the pool, with its replacement started; null when
 * there is no pool (the caller then lets the SDK start one). A pooled server that does not listen within 60 s is
 * stopped and the next one tried, then a fresh one started here (three tries at most).
 */
export async function claimTemporalServer(): Promise<ClaimedServer | null> {
  const control = testServersControl();
  if (control) return serverFromJvm(control);
  const pool = temporalServerPool();
  const binary = process.env.TEMPORAL_TEST_SERVER_PATH;
  if (!pool || !binary) return null;
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    // The replacement first: it boots while this file runs, ready for the next harness.
    await startPooledServer(pool, binary);
    const server = claimPooledServer(pool);
    if (!server) continue;
    if (!(await listening(server, 60_000))) {
      stopPooledServer(server);
      rmSync(server.file, { force: true });
      continue;
    }
    return {
      address: `127.0.0.1:${server.port}`,
      release() {
        recordProcessCpu('time-skipping server', server.pid);
        stopPooledServer(server);
        rmSync(server.file, { force: true });
        return Promise.resolve();
      },
    };
  }
  throw new Error('no Temporal test server started within three tries of 60 s');
}

/** Global teardown: every server still in the pool, ready or claimed by a file that ended without teardown. */
export function stopAllPooledServers(pool: string): void {
  let names: string[] = [];
  try {
    names = readdirSync(pool).filter((name) => name.endsWith('.json'));
  } catch {
    return;
  }
  for (const name of names) {
    try {
      stopPooledServer(JSON.parse(readFileSync(path.join(pool, name), 'utf8')) as PooledServer);
    } catch {
      // Unreadable entry: nothing to stop.
    }
  }
  rmSync(pool, { recursive: true, force: true });
}

/**
 * Global setup: a fresh pool for this jest run (a folder named by its process id) with `count` servers starting;
 * the pools of runs that ended without their teardown (killed) are emptied first.
 */
export async function fillTemporalServerPool(root: string, binary: string, count: number): Promise<string> {
  mkdirSync(root, { recursive: true });
  for (const name of readdirSync(root)) {
    if (!/^\d+$/.test(name) || !isRunning(Number(name))) stopAllPooledServers(path.join(root, name));
  }
  const pool = path.join(root, String(process.pid));
  stopAllPooledServers(pool);
  mkdirSync(pool, { recursive: true });
  for (let i = 0; i < count; i += 1) await startPooledServer(pool, binary);
  return pool;
}
