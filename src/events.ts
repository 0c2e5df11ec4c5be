// The one event emitter. Every state change writes its event row in the same database
// transaction as the change (transactional outbox); webhook delivery reads the rows from there.
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

export async function recordEvent(db: Db, event: NewEvent): Promise<string> {
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
  return id;
}
