// The one pattern for "write a resource, then start its workflow" (docs/write-path.md):
// 1. the resource's rows, its events and the intent to start its workflow (a `workflow_starts` row) commit in
//    ONE database transaction, together with the Idempotency-Key's stored response when the request has one;
// 2. after the commit, and never inside a transaction, the API starts the workflow (bounded by the request's
//    deadline); 3. whatever was not started (crash, Temporal outage between the commit and the start) is
//    started by the relay in the worker (src/temporal/workflow-start-relay.ts), the reconciler of this pattern.
// So every committed resource gets its workflow, and no workflow ever acts on a row that did not commit.
// Writes that start no workflow use step 1 alone (writeRequest): their stored response commits with them too.
// Starting is idempotent (ids derived from the resource; reuse policy REJECT_DUPLICATE, conflict policy
// USE_EXISTING), so a start made both by the API and by the relay is harmless.
import { Client, Workflow, WorkflowHandle, WorkflowNotFoundError } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Logger } from '../logger';
import { DomainError } from '../domain/errors';
import { type DatabaseTransaction, type DatabaseClient, withDatabaseTransaction } from '../persistence/database';
import { findWorkflowStart, insertWorkflowStart, markWorkflowsStarted } from '../persistence/workflow-starts';
import { currentRequestContext } from '../request-context';
import { customSearchAttributes } from './search-attributes';
import { withTemporalDeadline } from './calls';
import { temporalIsReachable } from './health';

export type SearchAttributeName = (typeof customSearchAttributes)[number]['name'];

/** A workflow to start once the transaction commits. */
export interface WorkflowStartIntent {
  workflowType: string;
  workflowId: string;
  args: unknown[];
  /** Keyword search attributes; PartnerId also scopes the relay in tests. */
  searchAttributes: Partial<Record<SearchAttributeName, string>>;
}

/** Typed constructor of an intent: the arguments are checked against the workflow function. */
export function workflowStart<W extends Workflow>(
  workflow: W,
  options: { workflowId: string; args: Parameters<W>; searchAttributes?: WorkflowStartIntent['searchAttributes'] },
): WorkflowStartIntent {
  return {
    workflowType: workflow.name,
    workflowId: options.workflowId,
    args: options.args,
    searchAttributes: options.searchAttributes ?? {},
  };
}

export interface WriteServices {
  prisma: DatabaseClient;
  temporal: Client;
  logger: Logger;
  config: { temporal: { taskQueue: string; callTimeoutMs: number } };
}

export type EnqueueStart = (intent: WorkflowStartIntent) => Promise<void>;

/** Test seams for the failure-injection tests of this pattern; never set in production code. */
export const writePathFaults: {
  /** Runs inside the transaction after the write, before the response is stored and the commit (throw: the commit fails). */
  beforeCommit?: () => Promise<void>;
  /** Runs after the commit, before any start (throw to simulate a process dying there). */
  afterCommit?: () => Promise<void>;
} = {};

type Write<T, A extends unknown[]> = (tx: DatabaseTransaction, ...rest: A) => Promise<T>;

/**
 * One write transaction of a request, for writes that start no workflow (the first step of writeThenStart):
 * `write` returns the HTTP response body, which is stored as the Idempotency-Key's response in the same
 * transaction, so a process dying after the commit is replayed on retry and never done twice.
 */
export async function writeRequest<T>(prisma: DatabaseClient, write: Write<T, []>): Promise<T> {
  const context = currentRequestContext();
  const result = await withDatabaseTransaction(prisma, async (tx) => {
    const body = await write(tx);
    await writePathFaults.beforeCommit?.();
    if (context?.storeIdempotentResponse && !context.idempotentResponseStored) {
      await context.storeIdempotentResponse(tx, body);
    }
    return body;
  });
  // Only a committed response counts as stored (a failed commit must free the key for a retry).
  if (context?.storeIdempotentResponse) context.idempotentResponseStored = true;
  await writePathFaults.afterCommit?.();
  return result;
}

/**
 * Writes (rows, events, start intents) in one transaction, then starts the workflows. `write` returns the
 * HTTP response body of the request: under an Idempotency-Key it is stored in the same transaction.
 */
export async function writeThenStart<T>(services: WriteServices, write: Write<T, [EnqueueStart]>): Promise<T> {
  // A workflow that cannot start would leave a resource without its lifecycle: refuse while the engine is down.
  if (!(await temporalIsReachable(services.temporal, services.config.temporal.callTimeoutMs))) {
    throw DomainError.unavailable('The workflow engine is unavailable; nothing was created. Retry shortly.');
  }
  const intents: WorkflowStartIntent[] = [];
  const result = await writeRequest(services.prisma, (tx) =>
    write(tx, async (intent) => {
      await insertWorkflowStart(tx, intent);
      intents.push(intent);
    }),
  );
  for (const intent of intents) {
    try {
      await withTemporalDeadline(services, () =>
        startIntent(services.temporal, services.config.temporal.taskQueue, intent),
      );
    } catch (error) {
      // Committed is committed: the relay starts it later. The partner gets the resource now.
      services.logger.warn(
        { err: error, workflow_id: intent.workflowId },
        'workflow not started after commit; the relay will start it',
      );
      continue;
    }
    // Unmarked, the relay would start it again (harmlessly: starts are idempotent).
    await startMarksOf(services.prisma)
      .mark(intent.workflowId)
      .catch((error: unknown) =>
        services.logger.warn({ err: error, workflow_id: intent.workflowId }, 'started workflow not marked started'),
      );
  }
  return result;
}

/**
 * Marks started intents in batches: while one UPDATE runs, the workflows started meanwhile wait for the next, one
 * UPDATE for all of them (under load, one statement for several creates instead of one each; `npm run bench`).
 */
class StartMarks {
  private queued: string[] = [];
  private next: Promise<void> | null = null;
  private previous: Promise<void> = Promise.resolve();

  constructor(private readonly prisma: DatabaseClient) {}

  mark(workflowId: string): Promise<void> {
    this.queued.push(workflowId);
    if (!this.next) {
      this.next = this.previous.then(() => {
        const workflowIds = this.queued;
        this.queued = [];
        this.next = null;
        return markWorkflowsStarted(this.prisma, workflowIds);
      });
      this.previous = this.next.catch(() => undefined);
    }
    return this.next;
  }
}

const startMarks = new WeakMap<DatabaseClient, StartMarks>();

function startMarksOf(prisma: DatabaseClient): StartMarks {
  let marks = startMarks.get(prisma);
  if (!marks) startMarks.set(prisma, (marks = new StartMarks(prisma)));
  return marks;
}

/** Starts the workflow of an intent unless it already exists (running or closed). */
export async function startIntent(client: Client, taskQueue: string, intent: WorkflowStartIntent): Promise<void> {
  const byName = new Map(customSearchAttributes.map((key) => [key.name, key]));
  try {
    await client.workflow.start(intent.workflowType, {
      workflowId: intent.workflowId,
      taskQueue,
      args: intent.args,
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      workflowIdConflictPolicy: 'USE_EXISTING',
      typedSearchAttributes: Object.entries(intent.searchAttributes).flatMap(([name, value]) => {
        const key = byName.get(name);
        return key && value !== undefined ? [{ key, value }] : [];
      }) as never,
    });
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return; // closed already: started before
    throw error;
  }
}

/** The intent stored in a `workflow_starts` row. */
export function intentOfRow(row: {
  workflowType: string;
  workflowId: string;
  args: unknown;
  searchAttributes: unknown;
}): WorkflowStartIntent {
  return {
    workflowType: row.workflowType,
    workflowId: row.workflowId,
    args: row.args as unknown[],
    searchAttributes: row.searchAttributes as WorkflowStartIntent['searchAttributes'],
  };
}

/**
 * A Temporal call (an update, a query) on the workflow of a resource, from a request. The resource may be committed
 * while its workflow is not started yet (its start after the commit failed and the relay has not come round): then
 * this request starts it from its stored intent and makes the call again, instead of treating the resource as
 * finished (a deposit taken for late, a cancellation refused, a quote not found).
 */
export async function callWorkflow<T>(
  services: Pick<WriteServices, 'prisma' | 'temporal' | 'config'>,
  workflowId: string,
  call: (handle: WorkflowHandle) => Promise<T>,
): Promise<T> {
  const handle = services.temporal.workflow.getHandle(workflowId);
  try {
    return await withTemporalDeadline(services, () => call(handle));
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
    const pending = await findWorkflowStart(services.prisma, workflowId);
    if (!pending || pending.startedAt) throw error;
    await withTemporalDeadline(services, () =>
      startIntent(services.temporal, services.config.temporal.taskQueue, intentOfRow(pending)),
    );
    await markWorkflowsStarted(services.prisma, [workflowId]);
    return await withTemporalDeadline(services, () => call(handle));
  }
}
