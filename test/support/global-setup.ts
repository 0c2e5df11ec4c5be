// Runs once per jest run: bundles the workflow code so that every test file's worker reuses it, and empties the
// folder where the harnesses share the OpenAPI document (built from this run's code by the first that needs it),
// starts the run's JVM of Temporal test servers or fills the pool of started ones (temporal-servers.ts),
// bundles the entry points the tests start as processes (scripts/lib/entry-points.ts), and starts the run's one sandbox chain node (Anvil, instant blocks), which every test file's harness points at. Bank
// simulators are per file (test/support/bank.ts startTestBank): their reports must not be read by another file.
//
// One node per run, not one per file: a node with its two token deployments costs about a second of CPU, sixty
// times over on two cores. No snapshot/revert between files either: files run in parallel, and a revert would undo
// the other file's blocks. Files do not need a clean chain: each file's wallets are its own addresses, and the
// sending nonces live in the database all files share, as they would on one public chain.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type LocalAnvil, startAnvil } from '../../scripts/lib/anvil';
import { isRunning } from '../../scripts/lib/child-process';
import { prepareEntryBundles } from '../../scripts/lib/entry-points';
import { writeWorkflowBundle } from '../../scripts/bundle-workflows';
import {
  entryBundlesDir,
  openApiDocumentCache,
  projectRoot,
  temporalNamespacePools,
  temporalServerPools,
  workflowBundlePath,
  workflowBundleSourceMapPath,
} from './paths';
import { type DevServer, startDevServer } from './dev-server';
import { fillTemporalServerPool, startTestServersJvm, type TestServersJvm } from './temporal-servers';

export default async function globalSetup(globalConfig: { maxWorkers: number }): Promise<void> {
  if (!process.env.DATABASE_URL) {
    throw new Error('DATABASE_URL is not set: run the tests with `npm test`, which prepares the database.');
  }
  rmSync(openApiDocumentCache, { recursive: true, force: true });
  mkdirSync(openApiDocumentCache, { recursive: true });
  // One started Temporal test server per jest worker waiting for the first harnesses (temporal-servers.ts).
  // TEST_NO_SERVER_POOL=1: every harness starts its own server when it needs it (to measure what the pool saves).
  const testServer = process.env.TEST_NO_SERVER_POOL === '1' ? undefined : process.env.TEMPORAL_TEST_SERVER_PATH;
  // Better: one JVM for all of them (temporal-servers.ts); TEST_NO_SHARED_JVM=1 keeps a JVM per server (to compare).
  const launcher = process.env.TEST_NO_SHARED_JVM === '1' ? undefined : process.env.TEMPORAL_TEST_SERVERS_PATH;
  // The run's one dev server for the files that do not skip time (dev-server.ts), a namespace per test file.
  // TEST_NO_DEV_SERVER=1: every file gets a time-skipping server as before (to compare).
  const cli = process.env.TEST_NO_DEV_SERVER === '1' ? undefined : process.env.TEMPORAL_CLI_PATH;
  const [anvil, servers, , devServer] = await allOrStopStarted([
    startAnvil(),
    launcher
      ? startTestServersJvm(launcher)
      : testServer
        ? fillTemporalServerPool(temporalServerPools, testServer, globalConfig.maxWorkers)
        : undefined,
    // Written under another name and renamed: a run going on beside this one never reads half a bundle.
    writeWorkflowBundle(`${workflowBundlePath}.${process.pid}`).then((sourceMap) => {
      renameSync(`${workflowBundlePath}.${process.pid}`, workflowBundlePath);
      // Its map as a file too, which jest's workers register (module-sharing-runtime.cjs).
      writeFileSync(`${workflowBundleSourceMapPath}.${process.pid}`, sourceMap);
      renameSync(`${workflowBundleSourceMapPath}.${process.pid}`, workflowBundleSourceMapPath);
      process.env.TEST_WORKFLOW_BUNDLE = workflowBundlePath;
    }),
    cli
      ? startDevServer(cli, path.join(temporalNamespacePools, String(process.pid)), devServerHarnessCount())
      : undefined,
    // TEST_NO_ENTRY_BUNDLES=1: the tests start `node --import tsx` processes instead (to compare).
    process.env.TEST_NO_ENTRY_BUNDLES === '1'
      ? undefined
      : prepareEntryBundles(path.join(entryBundlesDir, String(process.pid))).then(removeBundlesOfEndedRuns),
  ]);
  // jest's workers are started after this and inherit the variables; global-teardown.ts stops the node and servers.
  process.env.TEST_CHAIN_RPC_URL = anvil.rpcUrl;
  if (typeof servers === 'string') process.env.TEST_TEMPORAL_SERVER_POOL = servers;
  else if (servers) process.env.TEST_TEMPORAL_SERVERS_CONTROL = servers.control;
  if (devServer) {
    process.env.TEST_TEMPORAL_DEV_SERVER = devServer.address;
    process.env.TEST_TEMPORAL_NAMESPACES = devServer.pool;
  }
  (globalThis as { testChain?: LocalAnvil }).testChain = anvil;
  (globalThis as { testDevServer?: DevServer }).testDevServer = devServer;
  if (typeof servers === 'object') (globalThis as { testServersJvm?: TestServersJvm }).testServersJvm = servers;
}

/**
 * Every start at once, as Promise.all; when one fails, the processes the others started are stopped before the
 * error is thrown (jest runs no global teardown after a failed set-up, and they would outlive the run).
 */
async function allOrStopStarted<T extends readonly unknown[]>(
  starts: [...T],
): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled = await Promise.allSettled(starts);
  const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (!failed)
    return settled.map((outcome) => (outcome as PromiseFulfilledResult<unknown>).value) as {
      -readonly [K in keyof T]: Awaited<T[K]>;
    };
  await Promise.allSettled(
    settled.map((outcome) => {
      const started = outcome.status === 'fulfilled' ? (outcome.value as { stop?: unknown } | undefined) : undefined;
      return typeof started?.stop === 'function' ? (started as { stop(): unknown }).stop() : undefined;
    }),
  );
  throw failed.reason;
}

/**
 * A namespace for each harness the test files start on the dev server (`realTime: true`, devServerEnvironment):
 * every namespace the server creates costs it CPU at start and while idle, so not one per test file. A harness that
 * finds the pool empty (one this count missed) registers a namespace of its own (claimNamespace).
 */
function devServerHarnessCount(): number {
  const testDir = path.join(projectRoot, 'test');
  return readdirSync(testDir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.test.ts'))
    .reduce(
      (count, name) =>
        count +
        (readFileSync(path.join(testDir, name), 'utf8').match(/realTime: true|devServerEnvironment\(/g)?.length ?? 0),
      0,
    );
}

/** The bundles of runs that ended without their teardown (killed): each folder is named by its run's process id. */
function removeBundlesOfEndedRuns(): void {
  for (const name of readdirSync(entryBundlesDir)) {
    if (name !== String(process.pid) && !isRunning(Number(name)))
      rmSync(path.join(entryBundlesDir, name), { recursive: true, force: true });
  }
}
