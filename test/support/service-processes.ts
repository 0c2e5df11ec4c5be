// The API and the worker as real OS processes beside a test's harness (same database, same Temporal test server,
// same task queue), for tests that kill them or take their dependencies away. Each is one node process started as
// stack.ts tsEntry starts one (the run's bundle, or `--import tsx`: a SIGKILL reaches the process itself), named in PostgreSQL `<role>-<pid>` (src/persistence/database.ts connectionName).
import { ActivityNotFoundError } from '@temporalio/client';
import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { type Harness, testChainEnv, testLimitsAndBounds } from './harness';
import { projectRoot, workflowBundlePath } from './paths';
import { freePort } from '../../scripts/lib/ports';
import { tsEntry } from '../../scripts/lib/entry-points';

export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** True until the process exits, whoever ended it. */
  running(): boolean;
  /** What it printed on stderr (the end of it), for failure messages. */
  errorOutput(): string;
  /** What it logged (stdout, the end of it; errors only unless TEST_LOG_LEVEL says more), for failure messages. */
  output(): string;
  /** Ends it with `signal` and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface ServiceOptions {
  /** Where it reaches Temporal (default: the harness's server; a TcpProxy's address to cut it off). */
  temporalAddress?: string;
  /** Where it reaches PostgreSQL (default: the harness's database). */
  databaseUrl?: string;
  /** More environment (bounds, port). */
  env?: Record<string, string>;
}

/** The environment of a service process on the harness's database, Temporal and task queue. */
export function serviceEnvironment(harness: Harness, options: ServiceOptions = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    APP_ENV: 'sandbox',
    // Errors only: a test can show what went wrong inside the process (ServiceProcess.output).
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'error',
    DATABASE_URL: options.databaseUrl ?? harness.config.databaseUrl,
    TEMPORAL_ADDRESS: options.temporalAddress ?? harness.env.address,
    TEMPORAL_NAMESPACE: harness.env.namespace ?? 'default',
    TEMPORAL_TASK_QUEUE: harness.config.temporal.taskQueue,
    WORKFLOW_BUNDLE_PATH: workflowBundlePath,
    DOCUMENT_STORAGE_DIR: harness.config.documentStorageDir,
    ...testChainEnv(),
    // The harness's limits and bounds for a loaded machine; tests that need short ones pass them.
    ...testLimitsAndBounds,
    ...options.env,
  };
}

/** Starts `script` (relative to the project) and resolves once `isReady` says so; rejects if it exits first. */
async function spawnService(
  script: string,
  env: NodeJS.ProcessEnv,
  isReady: (stdout: string) => boolean | Promise<boolean>,
  limitMs = 90_000,
): Promise<ServiceProcess> {
  const { command, args } = tsEntry(script);
  const child = spawn(command, args, {
    cwd: projectRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let exited = child.exitCode !== null;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout = (stdout + chunk.toString()).slice(-20_000);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-20_000);
  });
  const service: ServiceProcess = {
    child,
    pid: child.pid as number,
    running: () => !exited,
    errorOutput: () => stderr,
    output: () => stdout,
    async stop(signal: NodeJS.Signals = 'SIGKILL') {
      if (exited) return;
      child.kill(signal);
      await exit;
    },
  };
  const deadline = Date.now() + limitMs;
  while (!(await isReady(stdout))) {
    if (exited) throw new Error(`${script} exited (${String(child.exitCode)}) before it was ready: ${stderr}`);
    if (Date.now() > deadline) {
      await service.stop();
      throw new Error(`${script} was not ready within ${limitMs} ms: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return service;
}

/** A worker process (test/support/worker-process.ts: the real activities, no relays) polling the harness's queue. */
export function startWorkerProcess(harness: Harness, options: ServiceOptions = {}): Promise<ServiceProcess> {
  return spawnService(path.join('test', 'support', 'worker-process.ts'), serviceEnvironment(harness, options), (out) =>
    out.includes('worker-ready'),
  );
}

/** The production API entry point (src/server.ts) on a free port; resolves once /health/live answers. */
export async function startApiProcess(
  harness: Harness,
  options: ServiceOptions = {},
): Promise<{ service: ServiceProcess; url: string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = serviceEnvironment(harness, {
    ...options,
    env: { PORT: String(port), PUBLIC_BASE_URL: url, ...options.env },
  });
  const service = await spawnService(path.join('src', 'server.ts'), env, async () => {
    const live = await fetch(`${url}/health/live`).catch(() => null);
    return live?.status === 200;
  });
  return { service, url };
}

/** The pending activities of the workflows (those that exist). */
export async function pendingActivitiesOf(harness: Harness, workflowIds: string[]) {
  const found = [];
  for (const workflowId of workflowIds) {
    const described = await harness.env.client.workflow
      .getHandle(workflowId)
      .describe()
      .catch(() => null);
    for (const pending of described?.raw.pendingActivities ?? []) found.push({ workflowId, pending });
  }
  return found;
}

/** A pending activity whose attempt a worker has taken. */
export const isStarted = (pending: { state?: unknown }) =>
  String(pending.state) === 'PENDING_ACTIVITY_STATE_STARTED' || pending.state === 2;

/**
 * What the server does once a killed worker's attempt times out, without the wait: the test server keeps time
 * skipping locked while an activity is started, so it would wait for the timeout in real time. Fails the started
 * activities of the workflows through Temporal's API, so that their retries go to a live worker.
 */
export async function failLostAttempts(harness: Harness, workflowIds: string[]): Promise<void> {
  for (const { workflowId, pending } of await pendingActivitiesOf(harness, workflowIds)) {
    if (!isStarted(pending)) continue;
    await harness.env.client.activity
      .fail(
        { workflowId, activityId: pending.activityId as string },
        new Error('the worker running this attempt was killed'),
      )
      .catch((error: unknown) => {
        // The attempt ended meanwhile (it failed on its own before the kill): nothing is lost.
        if (!(error instanceof ActivityNotFoundError)) throw error;
      });
  }
}
