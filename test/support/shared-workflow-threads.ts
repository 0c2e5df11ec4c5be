// The harness's Temporal worker, running its workflows on the workflow thread of the jest worker's previous test
// file. Each `Worker.create` starts a thread, loads the SDK's modules in it and evaluates the workflow bundle in a
// fresh V8 context; the files a jest worker runs one after the other run the same bundle with the same activities,
// so one thread serves them all (the SDK's `createWorkflowCreator` is the extension point). A worker's shutdown
// still evicts its workflows from the thread; the thread ends once no file has used it for a few seconds, so that
// the jest worker can exit at the end of the run. TEST_NO_SHARED_WORKFLOW_THREAD=1: a thread per file (to compare).
import { Worker } from '@temporalio/worker';
import type { WorkflowCreator } from '@temporalio/worker/lib/workflow/interface';

type CreatorArgs = Parameters<(typeof Worker)['createWorkflowCreator']>;

interface SharedThread {
  key: string;
  creator: Promise<WorkflowCreator>;
  users: number;
  idle?: NodeJS.Timeout;
}

/** One per jest worker: its files share the realm's global object (shared-realm-environment.ts). */
const slot = Symbol.for('payments-api.test.shared-workflow-thread');
const holder = globalThis as { [slot]?: SharedThread };

/** How long an unused thread waits for the next file's harness before it ends. */
const IDLE_MS = 3_000;

export class SharedWorkflowThreadWorker extends Worker {
  protected static override async createWorkflowCreator(...args: CreatorArgs): Promise<WorkflowCreator> {
    if (process.env.TEST_NO_SHARED_WORKFLOW_THREAD === '1') return super.createWorkflowCreator(...args);
    const [bundle, options] = args;
    // What the thread was made with: a file whose worker differs in any of it gets a thread of its own.
    const key = JSON.stringify([
      bundle.filename,
      bundle.code.length,
      options.isolateExecutionTimeoutMs,
      options.reuseV8Context,
      options.workflowThreadPoolSize,
      [...options.activities.keys()].sort(),
    ]);
    let thread = holder[slot];
    if (thread && (thread.key !== key || (await hasExited(thread)))) {
      if (thread.users === 0) void end(thread);
      thread = undefined;
    }
    if (!thread) {
      const made: SharedThread = { key, creator: super.createWorkflowCreator(...args), users: 0 };
      // A thread that failed to start is not kept for the next file.
      made.creator.catch(() => holder[slot] === made && delete holder[slot]);
      holder[slot] = thread = made;
    }
    clearTimeout(thread.idle);
    thread.users += 1;
    const shared = thread;
    const creator = await shared.creator;
    let released = false;
    return {
      createWorkflow: (createOptions) => creator.createWorkflow(createOptions),
      async destroy() {
        if (released) return;
        released = true;
        shared.users -= 1;
        if (shared.users === 0) shared.idle = setTimeout(() => void end(shared), IDLE_MS);
      },
    };
  }
}

/** Whether a thread of the creator has exited (a crash): every later request to it would fail. */
async function hasExited(thread: SharedThread): Promise<boolean> {
  const creator = (await thread.creator.catch(() => undefined)) as
    { workerThreadClients?: { workerExited?: boolean }[] } | undefined;
  return !creator || (creator.workerThreadClients?.some((client) => client.workerExited) ?? false);
}

/** Ends the thread (a crashed one, or one that failed to start, has nothing left to end). */
async function end(thread: SharedThread): Promise<void> {
  if (holder[slot] === thread) delete holder[slot];
  await thread.creator.then((creator) => creator.destroy()).catch(() => undefined);
}
