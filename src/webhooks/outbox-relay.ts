// The outbox relay: takes committed, undispatched webhook deliveries (written with their events by recordEvent,
// or by redelivery requests) in sequence order and hands them to their delivery workflow with signal-with-start,
// marking them dispatched in the same database transaction. Transactions that add deliveries NOTIFY
// `webhook_deliveries` (wakeOutboxRelay, sent at commit), which wakes the relay at once; a periodic sweep is the
// fallback (missed notifications, Temporal unavailable for a while).
// - Nothing is lost: a delivery stays undispatched until the signal was accepted and the mark written.
// - Nothing is sent twice: if the process dies between the signal and the mark, the delivery is signalled
//   again; the workflow ignores ids it already has and the activity skips deliveries that are no longer pending.
// - Order: one relay at a time (a session-level advisory lock, held on a connection of its own with no
//   transaction open), batches in sequence order, one signal per resource carrying its ids in order. Events of one resource are written under that resource's row lock, so
//   their sequence order is their commit order.
// Every worker process runs one; they take turns on the lock.
import type { Client } from '@temporalio/client';
import type { DatabaseClient } from '../persistence/database';
import { connectionName, connectionSettings } from '../persistence/database';
import { listenForOutboxWakeUps, OutboxListener } from '../persistence/events';
import {
  advisoryLockConnection,
  AdvisoryLockConnection,
  listUndispatchedDeliveries,
  markDeliveriesDispatched,
} from '../persistence/webhooks';
import type { Logger } from '../logger';
import { PartnerIdAttribute, ResourceIdAttribute } from '../temporal/search-attributes';
import { workflowIds } from '../temporal/workflow-ids';
import {
  deliveriesQueuedSignal,
  webhookDeliveryWorkflow,
  WebhookDeliveryInput,
} from '../../workflows/webhook-delivery';

const BATCH_SIZE = 100;
/** Any constant: the key of the advisory lock that lets one relay run at a time. */
export const RELAY_LOCK_KEY = 7_000_001;
const relayConnectionTimeouts = { connectMs: 10_000, statementMs: 60_000 };

export interface OutboxRelayOptions {
  prisma: DatabaseClient;
  temporal: Client;
  taskQueue: string;
  databaseUrl: string;
  /** The role of the process it runs in (connectionName): its connections are `<role>-<pid>/relay-lock` and `/relay-listen`. */
  connectionRole: string;
  logger: Logger;
  sweepIntervalMs: number;
  /** Tests: relay only these partners' deliveries (test files share one database but not one Temporal). */
  partnerIds?: () => readonly string[];
  /** config.webhooks.retry, handed to the delivery workflows it starts (default: the production schedule). */
  retrySchedule?: { initialIntervalMs: number; maximumIntervalMs: number };
}

export class OutboxRelay {
  private listener: OutboxListener | null = null;
  private sweep: NodeJS.Timeout | null = null;
  private reconnect: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  /** One connection that holds the relay's advisory lock while a batch is dispatched. */
  private readonly lock: AdvisoryLockConnection;

  constructor(private readonly options: OutboxRelayOptions) {
    this.lock = advisoryLockConnection(
      // A relay that stopped answering must not hold the lock forever (statement bound).
      connectionSettings(options.databaseUrl, this.connectionName('relay-lock'), relayConnectionTimeouts),
      // A dropped connection: the batch in progress fails (retried at the next sweep), the next one opens another.
      (error) => options.logger.warn({ err: error }, 'outbox relay: lock connection lost'),
    );
  }

  private connectionName(component: string): string {
    return connectionName(this.options.connectionRole, component);
  }

  async start(): Promise<void> {
    await this.listen();
    this.sweep = setInterval(() => this.wake(), this.options.sweepIntervalMs);
    this.sweep.unref();
    this.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sweep) clearInterval(this.sweep);
    if (this.reconnect) clearTimeout(this.reconnect);
    await this.running;
    await this.listener?.end().catch(() => undefined);
    this.listener = null;
    await this.lock.end().catch(() => undefined);
  }

  /** Runs the relay now, or once more after the current run. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain().finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  /** Resolves when the current run, if any, is over (tests). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async listen(): Promise<void> {
    try {
      this.listener = await listenForOutboxWakeUps(
        connectionSettings(this.options.databaseUrl, this.connectionName('relay-listen'), relayConnectionTimeouts),
        () => this.wake(),
        (error, listener) => {
          this.options.logger.warn({ err: error }, 'outbox relay: LISTEN connection lost; reconnecting');
          if (this.listener === listener) this.listener = null;
          this.scheduleReconnect();
        },
      );
    } catch (error) {
      if (this.stopped) return;
      this.options.logger.warn({ err: error }, 'outbox relay: cannot LISTEN; relying on the sweep meanwhile');
      this.scheduleReconnect();
    }
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnect) return;
    this.reconnect = setTimeout(() => {
      this.reconnect = null;
      void this.listen().then(() => this.wake());
    }, this.options.sweepIntervalMs);
    this.reconnect.unref();
  }

  private async drain(): Promise<void> {
    try {
      while (!this.stopped && (await this.relayBatch()) === BATCH_SIZE);
    } catch (error) {
      this.options.logger.warn({ err: error }, 'outbox relay: dispatch failed; retrying at the next sweep');
    }
  }

  /** Dispatches one batch; returns how many deliveries it took. */
  async relayBatch(): Promise<number> {
    const partnerIds = this.options.partnerIds?.();
    if (partnerIds && partnerIds.length === 0) return 0;
    return this.lock.whileLocked(RELAY_LOCK_KEY, async () => {
      const claimed = await listUndispatchedDeliveries(this.options.prisma, { limit: BATCH_SIZE, partnerIds });
      if (claimed.length === 0) return 0;
      // One signal per workflow, its ids in sequence order (Map keeps first-insertion order).
      const byWorkflow = new Map<string, { input: WebhookDeliveryInput; ids: string[] }>();
      for (const row of claimed) {
        const workflowId =
          row.trigger === 'redelivery'
            ? workflowIds.webhookRedelivery(row.id)
            : workflowIds.webhookDelivery(row.partnerId, row.resourceId);
        const entry = byWorkflow.get(workflowId) ?? {
          input: {
            partnerId: row.partnerId,
            resourceId: row.resourceId,
            ...(this.options.retrySchedule ? { retrySchedule: this.options.retrySchedule } : {}),
          },
          ids: [],
        };
        entry.ids.push(row.id);
        byWorkflow.set(workflowId, entry);
      }
      await Promise.all(
        [...byWorkflow.entries()].map(([workflowId, { input, ids }]) =>
          this.options.temporal.workflow.signalWithStart(webhookDeliveryWorkflow, {
            workflowId,
            taskQueue: this.options.taskQueue,
            args: [input],
            signal: deliveriesQueuedSignal,
            signalArgs: [ids],
            typedSearchAttributes: [
              { key: PartnerIdAttribute, value: input.partnerId },
              { key: ResourceIdAttribute, value: input.resourceId },
            ],
          }),
        ),
      );
      await markDeliveriesDispatched(
        this.options.prisma,
        claimed.map((row) => row.id),
      );
      return claimed.length;
    });
  }
}
