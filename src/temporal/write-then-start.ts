// TEMPORARY (issue-12 branch): the lead's issue-11 work replaces this file with the real one (same names and
// signatures: start intents committed with the rows, a relay in the worker as reconciler, the idempotent response
// stored in the same transaction). This stand-in keeps the one rule that matters to callers: the rows commit in
// one transaction, and workflows start only after the commit, never while a transaction is open.
import type { Client, Workflow } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Prisma, PrismaClient } from '../db';
import type { Logger } from '../logger';
import { withTemporalDeadline } from './calls';
import { customSearchAttributes } from './search-attributes';

export type SearchAttributeName = (typeof customSearchAttributes)[number]['name'];

/** A workflow to start once the transaction commits. */
export interface WorkflowStartIntent {
  workflowType: string;
  workflowId: string;
  args: unknown[];
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
  prisma: PrismaClient;
  temporal: Client;
  logger: Logger;
  config: { temporal: { taskQueue: string } };
}

export type EnqueueStart = (intent: WorkflowStartIntent) => Promise<void>;

export async function writeThenStart<T>(
  services: WriteServices,
  write: (tx: Prisma.TransactionClient, start: EnqueueStart) => Promise<T>,
): Promise<T> {
  const intents: WorkflowStartIntent[] = [];
  const result = await services.prisma.$transaction(
    (tx) =>
      write(tx, async (intent) => {
        intents.push(intent);
      }),
    { timeout: 15_000 },
  );
  for (const intent of intents) {
    try {
      await withTemporalDeadline(services, () =>
        startIntent(services.temporal, services.config.temporal.taskQueue, intent),
      );
    } catch (error) {
      // Committed is committed (the real version's relay starts it later): the caller gets its resource.
      services.logger.warn({ err: error, workflow_id: intent.workflowId }, 'workflow not started after commit');
    }
  }
  return result;
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
    if (error instanceof WorkflowExecutionAlreadyStartedError) return;
    throw error;
  }
}
