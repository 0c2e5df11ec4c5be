// The write path's start intents (src/temporal/write-then-start.ts): owns `workflow_starts`, one row per workflow
// to start once the transaction that wrote it commits, marked started once Temporal has it.
// The intent's INSERT and the UPDATE that marks it started are the write path's own statements on every create:
// through Kysely, as Prisma's per-call query compilation would cost them several times the CPU (docs/benchmark.md).
import { newId } from '../domain/ids';
import {
  type DatabaseTransaction,
  type Database,
  jsonParameter,
  sqlOf,
  prismaOf,
  type DatabaseClient,
} from './internal/database';
import type { Prisma } from './generated/prisma/client';
import { deleteBatchBefore, inBatches, type PurgeLimits } from './purges';

/** A start intent, every column. */
export type WorkflowStartRow = Prisma.WorkflowStartGetPayload<object>;

/** What a new intent stores: the workflow, its arguments and its keyword search attributes by name. */
export interface NewWorkflowStart {
  workflowType: string;
  workflowId: string;
  args: unknown[];
  /** PartnerId, when present, is also the row's partner (tests relay only their own partners' intents). */
  searchAttributes: { PartnerId?: string } & Record<string, string | undefined>;
}

/** Writes the intent in the transaction of the write whose workflow it starts. */
export async function insertWorkflowStart(tx: DatabaseTransaction, intent: NewWorkflowStart): Promise<void> {
  await sqlOf(tx)
    .insertInto('workflowStarts')
    .values({
      id: newId(),
      partnerId: intent.searchAttributes.PartnerId ?? null,
      workflowType: intent.workflowType,
      workflowId: intent.workflowId,
      args: jsonParameter(intent.args)!,
      searchAttributes: jsonParameter(intent.searchAttributes)!,
    })
    .execute();
}

export function findWorkflowStart(db: DatabaseClient, workflowId: string): Promise<WorkflowStartRow | null> {
  return prismaOf(db).workflowStart.findUnique({ where: { workflowId } });
}

/** The oldest `limit` intents not started and created before `createdBefore` (of `partnerIds` only, when given). */
export function listUnstartedWorkflowStarts(
  db: DatabaseClient,
  options: { createdBefore: Date; limit: number; partnerIds?: readonly string[] },
): Promise<WorkflowStartRow[]> {
  return prismaOf(db).workflowStart.findMany({
    where: {
      startedAt: null,
      createdAt: { lte: options.createdBefore },
      ...(options.partnerIds ? { partnerId: { in: [...options.partnerIds] } } : {}),
    },
    orderBy: { createdAt: 'asc' },
    take: options.limit,
  });
}

/** Counts a failed start of the intent and keeps its error. */
export async function recordWorkflowStartFailure(db: DatabaseClient, id: string, error: string): Promise<void> {
  await prismaOf(db).workflowStart.update({ where: { id }, data: { attempts: { increment: 1 }, lastError: error } });
}

/** Marks the intents of these workflows started (those not marked yet), on the pool: no transaction. */
export async function markWorkflowsStarted(db: Database, workflowIds: string[]): Promise<void> {
  await sqlOf(db)
    .updateTable('workflowStarts')
    .set({ startedAt: new Date() })
    .where('workflowId', 'in', workflowIds)
    .where('startedAt', 'is', null)
    .execute();
}

/** Deletes the intents started before `startedBefore` (they are only needed until started); returns how many. */
export function deleteWorkflowStartsStartedBefore(
  db: DatabaseClient,
  startedBefore: Date,
  limits?: PurgeLimits,
): Promise<number> {
  return inBatches((size) => deleteBatchBefore(db, 'workflow_starts', 'started_at', startedBefore, size), limits);
}
