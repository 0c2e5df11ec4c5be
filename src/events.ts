// The one event emitter. Every state change writes its event row in the same database
// transaction as the change (transactional outbox), together with its webhook delivery when one is due.
import type { Db } from './db';
import { Prisma } from './db';
import { newId } from './domain/ids';

export const eventTypes = [
  'payin.created',
  'payin.processing',
  'payin.completed',
  'payin.cancelled',
  'payin.failed',
  'payin.error',
  'payin.refunded',
  'payout.created',
  'payout.processing',
  'payout.completed',
  'payout.cancelled',
  'payout.failed',
  'payout.error',
  'payout.refunded',
  'walletTransfer.created',
  'walletTransfer.completed',
  'walletTransfer.failed',
  'customer.created',
  'customer.approved',
  'customer.under_review',
  'customer.rejected',
  'customer.partially_rejected',
  'external_account.created',
  'external_account.approved',
  'external_account.rejected',
  'virtual_account.created',
  'virtual_account.approved',
  'virtual_account.rejected',
  'virtual_account.cancelled',
] as const;

export type EventType = (typeof eventTypes)[number];

/** `customer.created` -> `customer`: the resource type named in the payload's `event` field. */
export function resourceTypeOf(type: EventType): string {
  return type.slice(0, type.indexOf('.'));
}

export interface NewEvent {
  partnerId: string;
  type: EventType;
  resourceId: string;
  resourceStatus: string;
  /** The complete resource as the API returns it, at the time of the event. */
  resource: object;
  /** Defaults to now; activities pass the workflow's notion of time when it matters. */
  createdAt?: Date;
}

/**
 * Records an event and, when the partner's webhook configuration is enabled and subscribed to its type at this
 * moment, the event's delivery: both in the caller's transaction, so a change is announced exactly when it commits.
 * Events of a paused or unsubscribed configuration get no delivery (partners catch up with GET /v1/events).
 * The outbox relay (src/webhooks/outbox-relay.ts) hands committed deliveries to Temporal.
 */
export async function recordEvent(db: Db, event: NewEvent): Promise<string> {
  // The event and its delivery commit together; a bare client gets a transaction of its own.
  if ('$transaction' in db) return db.$transaction((tx) => recordEvent(tx, event));
  const id = newId();
  await db.event.create({
    data: {
      id,
      partnerId: event.partnerId,
      event: resourceTypeOf(event.type),
      eventType: event.type,
      resourceId: event.resourceId,
      resourceStatus: event.resourceStatus,
      resource: event.resource as Prisma.InputJsonObject,
      ...(event.createdAt ? { createdAt: event.createdAt } : {}),
    },
  });
  const config = await db.webhookConfig.findUnique({
    where: { partnerId: event.partnerId },
    select: { id: true, enabled: true, subscriptions: true },
  });
  if (config?.enabled && config.subscriptions.includes(event.type)) {
    await db.webhookDelivery.create({
      data: {
        id: newId(),
        partnerId: event.partnerId,
        eventId: id,
        configId: config.id,
        trigger: 'event',
        status: 'pending',
      },
    });
    await wakeOutboxRelay(db);
  }
  return id;
}

/** Channel the outbox relay LISTENs on. */
export const WEBHOOK_NOTIFY_CHANNEL = 'webhook_deliveries';

/**
 * Wakes the outbox relay when the transaction commits (NOTIFY is transactional: sent at commit, dropped on
 * rollback, folded into one per transaction). Called wherever deliveries are written; the relay's periodic sweep
 * is the fallback. (A trigger would do the same, but the migration runner splits scripts on every semicolon,
 * which a PL/pgSQL body cannot survive.)
 */
export async function wakeOutboxRelay(tx: Prisma.TransactionClient): Promise<void> {
  await tx.$executeRaw`SELECT pg_notify(${WEBHOOK_NOTIFY_CHANNEL}, '')`;
}
