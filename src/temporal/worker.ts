// The one place that builds a Temporal worker: production (src/worker.ts), `npm run dev` and tests.
import { NativeConnection, Worker } from '@temporalio/worker';
import path from 'node:path';
import { workerTracingOptions, workflowTracingModule } from '../observability/temporal';

export interface WorkerSetup {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: object;
  /** Pre-built workflow bundle (npm run build, test global set-up); bundled at start-up when absent. */
  workflowBundlePath?: string;
  /** Workflow code bundled at start-up when there is no bundle: this service's by default (`npm run bench` gives
   * its engine-ceiling workflows, run with the very same worker settings). */
  workflowsPath?: string;
  /** Activity tasks run at once (WORKER_MAX_CONCURRENT_ACTIVITIES); the SDK's default when absent. */
  maxConcurrentActivities?: number;
  /**
   * Workflows kept in memory between tasks (WORKER_MAX_CACHED_WORKFLOWS); the SDK's heap-sized default when absent.
   * 0 turns sticky execution off. Only for a worker killed on purpose against the time-skipping test server,
   * which never moves a workflow task off a dead worker's sticky queue (real servers do after a few seconds).
   */
  maxCachedWorkflows?: number;
  /** The worker class that builds it: the tests give one that shares a workflow thread between test files. */
  workerClass?: typeof Worker;
}

export const workflowsEntryPoint = path.resolve(__dirname, '..', '..', 'workflows', 'index');

/**
 * The service's modules that workflows import besides the workflows themselves (and what they import: decimal.js,
 * the rail validators' country and IBAN tables): evaluated once in the worker's reusable V8 context and shared by
 * every workflow, instead of once per workflow. They hold no state and read no clock, and the SDK freezes their
 * exports. Paths from the workflows folder (the bundle's entry point is beside its index).
 */
export const workflowPreloadModules = [
  '../src/domain/transactions',
  '../src/domain/verification',
  '../src/domain/screening-review',
  '../src/domain/reconciliation',
  '../src/domain/webhook-retry',
  '../src/domain/uuid',
  '../src/temporal/search-attributes',
  '../src/temporal/failure-types',
];

export async function createWorker(setup: WorkerSetup): Promise<Worker> {
  const tracing = workerTracingOptions();
  return (setup.workerClass ?? Worker).create({
    ...tracing,
    // A pre-built bundle carries the workflow interceptors already (scripts/bundle-workflows.ts).
    interceptors: {
      ...tracing.interceptors,
      ...(setup.workflowBundlePath ? {} : { workflowModules: [workflowTracingModule] }),
    },
    connection: setup.connection,
    namespace: setup.namespace,
    taskQueue: setup.taskQueue,
    activities: setup.activities,
    ...(setup.workflowBundlePath
      ? { workflowBundle: { codePath: setup.workflowBundlePath } }
      : setup.workflowsPath
        ? { workflowsPath: setup.workflowsPath }
        : {
            workflowsPath: require.resolve(workflowsEntryPoint),
            bundlerOptions: { preloadModules: workflowPreloadModules },
          }),
    ...(setup.maxConcurrentActivities ? { maxConcurrentActivityTaskExecutions: setup.maxConcurrentActivities } : {}),
    // Let in-flight activities finish on SIGTERM before the process exits.
    shutdownGraceTime: '30 seconds',
    ...(setup.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: setup.maxCachedWorkflows } : {}),
  });
}
