// The event log and the transactional outbox: owns the `events` table, and writes with each event its webhook
// delivery when one is due (a row of webhook_deliveries) and the NOTIFY that wakes the outbox relay. Every state
// change writes its event in the same database transaction as the change.
import { Client } from 'pg';
import type { KeysetQuery } from '../domain/pages';
import { keysetPage } from './keyset';
import { inBatches, type PurgeLimits } from './purges';
import { newId } from '../domain/ids';
import { EventType, resourceTypeOf } from '../events';
import { currentTraceParent } from '../observability/trace-context';
import {
  type connectionSettings,
  type DatabaseTransaction,
  type Database,
  jsonParameter,
  type DatabaseClient,
  sqlOf,
  withDatabaseTransaction,
  prismaOf,
} from './internal/database';
import type { Prisma } from './generated/prisma/client';
import { type RawBuilder, sql } from 'kysely';

/** An event, every column. */
export type EventRow = Prisma.EventGetPayload<object>;

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
 * The outbox relay (src/webhooks/outbox-relay.ts) hands committed deliveries to Temporal. `change`, a data-modifying
 * statement of the owner of the changed rows (e.g. transactionStatusChange), runs in the same statement: a change,
 * its event and its delivery in one round trip.
 */
export async function recordEvent(
  tx: DatabaseTransaction,
  event: NewEvent,
  change?: RawBuilder<unknown>,
): Promise<string> {
  const id = newId();
  const createdAt = event.createdAt ?? new Date();
  const delivered = await sql`
    WITH ${change ? sql`change AS (${change}), ` : sql``}event AS (
      INSERT INTO events (id, partner_id, event, event_type, resource_id, resource_status, resource, created_at)
      VALUES (${id}::uuid, ${event.partnerId}::uuid, ${resourceTypeOf(event.type)}, ${event.type}, ${event.resourceId},
        ${event.resourceStatus}, ${jsonParameter(event.resource)}::jsonb, ${createdAt})
    )
    INSERT INTO webhook_deliveries
      (id, partner_id, event_id, config_id, trigger, status, trace_parent, created_at, updated_at)
    SELECT ${newId()}::uuid, c.partner_id, ${id}::uuid, c.id, 'event', 'pending', ${currentTraceParent()},
      ${createdAt}, ${createdAt}
    FROM webhook_configs c
    WHERE c.partner_id = ${event.partnerId}::uuid AND c.enabled AND ${event.type} = ANY(c.subscriptions)`.execute(
    sqlOf(tx),
  );
  if (Number(delivered.numAffectedRows ?? 0) > 0) await wakeOutboxRelay(tx);
  return id;
}

/**
 * Deletes the events created before `before` with their webhook deliveries and attempts, in batches of events (each
 * batch one short transaction: attempts, deliveries, then the events); returns how many events.
 */
export function deleteEventsCreatedBefore(prisma: DatabaseClient, before: Date, limits?: PurgeLimits): Promise<number> {
  return inBatches(
    (size) =>
      withDatabaseTransaction(prisma, async (tx) => {
        const events = await sqlOf(tx)
          .selectFrom('events')
          .select('id')
          .where('createdAt', '<', before)
          .limit(size)
          .forUpdate()
          .skipLocked()
          .execute();
        if (events.length === 0) return 0;
        const eventIds = events.map(({ id }) => id);
        const deliveries = sqlOf(tx).selectFrom('webhookDeliveries').select('id').where('eventId', 'in', eventIds);
        await sqlOf(tx).deleteFrom('webhookDeliveryAttempts').where('deliveryId', 'in', deliveries).execute();
        await sqlOf(tx).deleteFrom('webhookDeliveries').where('eventId', 'in', eventIds).execute();
        await sqlOf(tx).deleteFrom('events').where('id', 'in', eventIds).execute();
        return events.length;
      }),
    limits,
  );
}

/** Channel the outbox relay LISTENs on. */
const WEBHOOK_NOTIFY_CHANNEL = 'webhook_deliveries';

/**
 * Wakes the outbox relay when the transaction commits (NOTIFY is transactional: sent at commit, dropped on
 * rollback, folded into one per transaction). Called wherever deliveries are written; the relay's periodic sweep
 * is the fallback. (A trigger would do the same, but the migration runner splits scripts on every semicolon,
 * which a PL/pgSQL body cannot survive.)
 */
export async function wakeOutboxRelay(tx: DatabaseTransaction): Promise<void> {
  await sql`SELECT pg_notify(${WEBHOOK_NOTIFY_CHANNEL}, '')`.execute(sqlOf(tx));
}

/** A connection LISTENing for wakeOutboxRelay's notifications. */
export interface OutboxListener {
  end(): Promise<void>;
}

/**
 * Opens a connection of its own (`settings`: its connectionSettings) that LISTENs on the outbox channel and calls
 * `onNotification` for each notification. Should the connection fail later, it is closed and `onLost` is told.
 * Rejects (the connection closed) when it cannot connect or LISTEN.
 */
export async function listenForOutboxWakeUps(
  settings: ReturnType<typeof connectionSettings>,
  onNotification: () => void,
  onLost: (error: Error, listener: OutboxListener) => void,
): Promise<OutboxListener> {
  const client = new Client(settings);
  client.on('notification', onNotification);
  client.on('error', (error) => {
    void client.end().catch(() => undefined);
    onLost(error, client);
  });
  try {
    await client.connect();
    await client.query(`LISTEN ${WEBHOOK_NOTIFY_CHANNEL}`);
    return client;
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
}

/** The event by id, whoever's it is (callers check the partner, see ownedBy). */
export function findEvent(db: DatabaseClient, id: string): Promise<EventRow | null> {
  return prismaOf(db).event.findUnique({ where: { id } });
}

/** A page of the partner's events (GET /v1/events), optionally of one type or one resource. */
export async function listPartnerEvents(
  db: Database,
  partnerId: string,
  filters: { eventType?: string; resourceId?: string },
  keyset: KeysetQuery,
): Promise<EventRow[]> {
  let query = sqlOf(db).selectFrom('events as e').selectAll('e').where('e.partnerId', '=', partnerId);
  if (filters.eventType) query = query.where('e.eventType', '=', filters.eventType);
  if (filters.resourceId) query = query.where('e.resourceId', '=', filters.resourceId);
  const rows = await keysetPage(query, 'e', keyset).execute();
  return rows.map((row) => ({ ...row, sequence: BigInt(row.sequence) }));
}

/**
 * A place in a partner's live event stream: events are read in the order their database transactions became
 * visible (the writing transaction's id, then the sequence within it), not in sequence order alone, because a
 * transaction that took a lower sequence may commit after one that took a higher.
 */
export interface EventStreamPosition {
  transactionXid: string;
  sequence: bigint;
}

const transactionXid = sql<string>`transaction_xid::text`;

/** Where a stream resuming after this event starts; null when the event is not the partner's. */
export async function partnerEventStreamPosition(
  db: Database,
  partnerId: string,
  eventId: string,
): Promise<EventStreamPosition | null> {
  const row = await sqlOf(db)
    .selectFrom('events')
    .select(['sequence', transactionXid.as('transactionXid')])
    .where('partnerId', '=', partnerId)
    .where('id', '=', eventId)
    .executeTakeFirst();
  return row ? { transactionXid: row.transactionXid, sequence: BigInt(row.sequence) } : null;
}

/**
 * Where a stream without Last-Event-ID starts: after the partner's newest visible event. An event of a
 * transaction still running at this moment with an older transaction id counts as before the stream.
 */
export async function latestPartnerEventStreamPosition(db: Database, partnerId: string): Promise<EventStreamPosition> {
  const row = await sqlOf(db)
    .selectFrom('events')
    .select(['sequence', transactionXid.as('transactionXid')])
    .where('partnerId', '=', partnerId)
    .orderBy(sql`transaction_xid`, 'desc')
    .orderBy('sequence', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row
    ? { transactionXid: row.transactionXid, sequence: BigInt(row.sequence) }
    : { transactionXid: '0', sequence: 0n };
}

/**
 * The partner's events after `position`, at most `limit`, in (transaction_xid, sequence) order. `settled`: only
 * events of transactions older than every transaction still running (pg_snapshot_xmin), which have all committed or
 * rolled back, so no event can appear behind them later; the stream advances its position over these. Otherwise:
 * the committed events of younger transactions (the stream sends them at once, remembering their ids, so that a long
 * transaction elsewhere in the cluster does not hold them back), leaving out `except`. One range scan of
 * events(partner_id, transaction_xid, sequence) each.
 */
export async function partnerEventsAfter(
  db: Database,
  partnerId: string,
  position: EventStreamPosition,
  options: { settled: boolean; limit: number; except?: string[] },
): Promise<(EventRow & { transactionXid: string })[]> {
  let query = sqlOf(db)
    .selectFrom('events')
    .select([
      'id',
      'sequence',
      'partnerId',
      'event',
      'eventType',
      'resourceId',
      'resourceStatus',
      'resource',
      'createdAt',
      transactionXid.as('transactionXid'),
    ])
    .where('partnerId', '=', partnerId)
    .where(
      options.settled
        ? sql<boolean>`transaction_xid < pg_snapshot_xmin(pg_current_snapshot())`
        : sql<boolean>`transaction_xid >= pg_snapshot_xmin(pg_current_snapshot())`,
    )
    .where(
      sql<boolean>`(transaction_xid, sequence) > (${position.transactionXid}::xid8, ${position.sequence.toString()}::bigint)`,
    );
  if (options.except && options.except.length > 0) query = query.where('id', 'not in', options.except);
  const rows = await query
    .orderBy(sql`transaction_xid`)
    .orderBy('sequence')
    .limit(options.limit)
    .execute();
  return rows.map((row) => ({ ...row, sequence: BigInt(row.sequence) }));
}
