// The one event emitter. Every state change writes its event row in the same database
// transaction as the change (transactional outbox), together with its webhook delivery when one is due.
import type { Db, SqlTransaction } from './persistence/database';
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
export async function recordEvent(db: Db | SqlTransaction, event: NewEvent): Promise<string> {
  // The event and its delivery commit together; a bare client gets a transaction of its own.
  if ('$transaction' in db) return db.$transaction((tx) => recordEvent(tx, event));
  const id = newId();
  const createdAt = event.createdAt ?? new Date();
  // Plain SQL: every state change writes an event, and through Prisma's model API these two statements and the
  // delivery's cost several times the CPU of the change itself (`npm run bench`).
  await db.$executeRaw`
    INSERT INTO events (id, partner_id, event, event_type, resource_id, resource_status, resource, created_at)
    VALUES (${id}::uuid, ${event.partnerId}::uuid, ${resourceTypeOf(event.type)}, ${event.type},
      ${event.resourceId}::uuid, ${event.resourceStatus}, ${JSON.stringify(event.resource)}::jsonb, ${createdAt})`;
  const delivered = await db.$executeRaw`
    INSERT INTO webhook_deliveries (id, partner_id, event_id, config_id, trigger, status, created_at, updated_at)
    SELECT ${newId()}::uuid, c.partner_id, ${id}::uuid, c.id, 'event', 'pending', ${createdAt}, ${createdAt}
    FROM webhook_configs c
    WHERE c.partner_id = ${event.partnerId}::uuid AND c.enabled AND ${event.type} = ANY(c.subscriptions)`;
  if (delivered > 0) await wakeOutboxRelay(db);
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
export async function wakeOutboxRelay(tx: SqlTransaction): Promise<void> {
  await tx.$executeRaw`SELECT pg_notify(${WEBHOOK_NOTIFY_CHANNEL}, '')`;
}
