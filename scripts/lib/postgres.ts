// A private PostgreSQL cluster for development and tests, used when DATABASE_URL is not set.
// It lives in .data/postgres (git-ignored), listens on 127.0.0.1 on a free port chosen at
// creation and remembered in the data folder, and trusts local connections (it is private).
// PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres` user.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync, chownSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from './paths';
import { freePort, isPortFree } from './ports';

const PG_BIN_CANDIDATES = ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin'];

export interface LocalPostgres {
  port: number;
  dataDir: string;
  /** Connection URL of one database on the cluster. */
  urlFor(database: string): string;
  /** Stops the cluster if this process started it. */
  stopIfStartedHere(): void;
  /** Stops the cluster now (fast shutdown: open sessions are ended), without blocking the event loop. */
  stop(): Promise<void>;
  /** Starts the stopped cluster again on the same port, without blocking the event loop. */
  start(): Promise<void>;
}

function pgBin(name: string): string {
  const fromPath = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
  if (fromPath) return fromPath;
  for (const dir of PG_BIN_CANDIDATES) if (existsSync(path.join(dir, name))) return path.join(dir, name);
  throw new Error(
    `PostgreSQL's ${name} was not found. Install PostgreSQL (e.g. apt-get install -y postgresql) or set DATABASE_URL.`,
  );
}

export const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** The command line that runs a PostgreSQL binary as the cluster owner (the postgres user when we are root). */
function asOwner(binary: string, args: string[]): [string, string[]] {
  return isRoot ? ['runuser', ['-u', 'postgres', '--', binary, ...args]] : [binary, args];
}

function runAsOwner(binary: string, args: string[], options: { allowFailure?: boolean } = {}): number {
  const [command, fullArgs] = asOwner(binary, args);
  const result = spawnSync(command, fullArgs, { encoding: 'utf8', cwd: '/' });
  if (result.status !== 0 && !options.allowFailure) {
    throw new Error(`${path.basename(binary)} failed (${result.status}): ${result.stderr || result.stdout}`);
  }
  return result.status ?? 1;
}

function runAsOwnerAsync(binary: string, args: string[]): Promise<void> {
  const [command, fullArgs] = asOwner(binary, args);
  return new Promise((resolve, reject) => {
    execFile(command, fullArgs, { cwd: '/' }, (error, stdout, stderr) =>
      error ? reject(new Error(`${path.basename(binary)} failed: ${stderr || stdout || error.message}`)) : resolve(),
    );
  });
}

function ownDataFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (isRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
}

export async function ensureLocalPostgres(dataRoot = path.join(projectRoot, '.data')): Promise<LocalPostgres> {
  const dataDir = path.join(dataRoot, 'postgres');
  const portFile = path.join(dataRoot, 'postgres.port');
  mkdirSync(dataRoot, { recursive: true });

  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    ownDataFolder(dataDir);
    runAsOwner(pgBin('initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-sync']);
  }
  let port = existsSync(portFile) ? Number(readFileSync(portFile, 'utf8').trim()) : NaN;

  const pgCtl = pgBin('pg_ctl');
  const running = runAsOwner(pgCtl, ['status', '-D', dataDir], { allowFailure: true }) === 0;
  const startArgs = () => {
    const options = `-p ${port} -k ${dataDir} -c listen_addresses=127.0.0.1 -c synchronous_commit=off -c max_connections=200`;
    return ['-D', dataDir, '-o', options, '-l', path.join(dataDir, 'server.log'), '-w', '-t', '60', 'start'];
  };
  const stopArgs = ['-D', dataDir, '-m', 'fast', '-w', 'stop'];
  let startedHere = false;
  if (!running) {
    if (!Number.isInteger(port) || port <= 0) port = await freePort();
    // A remembered port may have been taken by another program since; pick a new one then.
    if (!(await isPortFree(port))) port = await freePort();
    writeFileSync(portFile, String(port));
    runAsOwner(pgCtl, startArgs());
    startedHere = true;
  }

  return {
    port,
    dataDir,
    urlFor: (database) => `postgresql://postgres@127.0.0.1:${port}/${database}`,
    stopIfStartedHere() {
      if (startedHere) runAsOwner(pgCtl, stopArgs, { allowFailure: true });
    },
    stop: () => runAsOwnerAsync(pgCtl, stopArgs),
    start: () => runAsOwnerAsync(pgCtl, startArgs()),
  };
}
