// The reconciler of the write path (src/temporal/write-then-start.ts): every few seconds the worker starts the
// workflows whose intents committed but were not started by the API (it crashed after the commit, or Temporal
// was unreachable then). Temporal is called outside any database transaction; starts are idempotent, so two
// workers sweeping at once, or the API and a worker starting the same intent, do no harm.
import type { Client } from '@temporalio/client';
import type { DatabaseClient } from '../persistence/database';
import type { Logger } from '../logger';
import {
  listUnstartedWorkflowStarts,
  markWorkflowsStarted,
  recordWorkflowStartFailure,
} from '../persistence/workflow-starts';
import { intentOfRow, startIntent } from './write-then-start';

const BATCH_SIZE = 100;

export interface WorkflowStartRelayOptions {
  prisma: DatabaseClient;
  temporal: Client;
  taskQueue: string;
  logger: Logger;
  sweepIntervalMs: number;
  /** Intents younger than this are left to the API, which starts them right after its commit. */
  minAgeMs: number;
  /** Tests: only these partners' intents (test files share one database but not one Temporal). */
  partnerIds?: () => readonly string[];
}

export class WorkflowStartRelay {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private stopped = false;

  constructor(private readonly options: WorkflowStartRelayOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.sweep().catch(() => undefined), this.options.sweepIntervalMs);
    this.timer.unref();
    void this.sweep().catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** Starts every unstarted intent old enough; returns how many it started. One sweep at a time. */
  sweep(options: { minAgeMs?: number } = {}): Promise<number> {
    if (this.stopped) return Promise.resolve(0);
    if (this.running) return this.running;
    this.running = this.drain(options.minAgeMs ?? this.options.minAgeMs).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async drain(minAgeMs: number): Promise<number> {
    const partnerIds = this.options.partnerIds?.();
    if (partnerIds && partnerIds.length === 0) return 0;
    let started = 0;
    for (;;) {
      const pending = await listUnstartedWorkflowStarts(this.options.prisma, {
        createdBefore: new Date(Date.now() - minAgeMs),
        limit: BATCH_SIZE,
        partnerIds,
      });
      if (pending.length === 0) return started;
      const done: string[] = [];
      for (const row of pending) {
        const intent = intentOfRow(row);
        try {
          await startIntent(this.options.temporal, this.options.taskQueue, intent);
          done.push(row.workflowId);
        } catch (error) {
          this.options.logger.warn({ err: error, workflow_id: row.workflowId }, 'workflow start relay: start failed');
          await recordWorkflowStartFailure(
            this.options.prisma,
            row.id,
            String((error as Error).message ?? error).slice(0, 500),
          );
          // The engine is likely down: stop this sweep, the next one tries again.
          await markWorkflowsStarted(this.options.prisma, done);
          return started + done.length;
        }
      }
      await markWorkflowsStarted(this.options.prisma, done);
      started += done.length;
      if (pending.length < BATCH_SIZE) return started;
    }
  }
}
