// Webhooks: owns `webhook_configs` (a partner's one configuration and its signing secrets), the lifecycle of
// `webhook_deliveries` after the outbox wrote them (redeliveries, the relay's dispatch marks, attempt outcomes) and
// `webhook_delivery_attempts`; and the outbox relay's own connection, which takes turns on its advisory lock.
// A delivery written with its event is recordEvent's (src/persistence/events.ts).
import type { KeysetQuery } from '../domain/pages';
import { childrenByParent, keysetPage } from './keyset';
import { newId } from '../domain/ids';
import { currentTraceParent } from '../observability/trace-context';
import {
  type DatabaseTransaction,
  type Database,
  type DatabaseClient,
  resilientPool,
  sqlOf,
  withDatabaseTransaction,
  prismaOf,
} from './internal/database';
import type { Prisma } from './generated/prisma/client';
import { sql } from 'kysely';
import { wakeOutboxRelay } from './events';

/** A webhook configuration, every column (its secrets sealed). */
export type WebhookConfigRow = Prisma.WebhookConfigGetPayload<object>;

export const withAttempts = { attempts: { orderBy: { attempt: 'asc' } } } as const;
/** A delivery with its attempts, first one first: what the API shows. */
export type DeliveryRow = Prisma.WebhookDeliveryGetPayload<{ include: typeof withAttempts }>;

const withEventAndConfig = { event: true, config: true } as const;
/** A delivery with what an attempt sends (its event) and where (the configuration as it is now). */
export type DeliveryToAttemptRow = Prisma.WebhookDeliveryGetPayload<{ include: typeof withEventAndConfig }>;

/** A delivery the outbox relay takes: whose, why, and the resource whose order it keeps. */
export interface UndispatchedDelivery {
  id: string;
  partnerId: string;
  trigger: string;
  resourceId: string;
}

/** What one attempt of a delivery did. */
export interface DeliveryAttemptOutcome {
  url: string;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
}

export function insertWebhookConfig(
  tx: DatabaseTransaction,
  config: {
    id: string;
    partnerId: string;
    url: string;
    subscriptions: string[];
    enabled: boolean;
    secretCiphertext: string;
  },
): Promise<WebhookConfigRow> {
  const now = new Date();
  return sqlOf(tx)
    .insertInto('webhookConfigs')
    .values({ ...config, createdAt: now, updatedAt: now })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The partner's configuration (one at most: partner_id is unique). */
export async function findWebhookConfigOfPartner(db: Database, partnerId: string): Promise<WebhookConfigRow | null> {
  const row = await sqlOf(db)
    .selectFrom('webhookConfigs')
    .selectAll()
    .where('partnerId', '=', partnerId)
    .executeTakeFirst();
  return row ?? null;
}

/** The configuration by id, whoever's it is (callers check the partner, see ownedBy). */
export async function findWebhookConfig(db: Database, id: string): Promise<WebhookConfigRow | null> {
  const row = await sqlOf(db).selectFrom('webhookConfigs').selectAll().where('id', '=', id).executeTakeFirst();
  return row ?? null;
}

/** Changes the fields given (undefined: unchanged); the secrets are not among them. */
export function updateWebhookConfigSettings(
  tx: DatabaseTransaction,
  id: string,
  changes: { url?: string; subscriptions?: string[]; enabled?: boolean },
): Promise<WebhookConfigRow> {
  return sqlOf(tx)
    .updateTable('webhookConfigs')
    .set({
      ...(changes.url !== undefined ? { url: changes.url } : {}),
      ...(changes.subscriptions !== undefined ? { subscriptions: changes.subscriptions } : {}),
      ...(changes.enabled !== undefined ? { enabled: changes.enabled } : {}),
      updatedAt: new Date(),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The configuration under its row lock (one rotation at a time), read after the lock is granted. */
export async function lockWebhookConfig(tx: DatabaseTransaction, id: string): Promise<WebhookConfigRow> {
  return sqlOf(tx).selectFrom('webhookConfigs').selectAll().where('id', '=', id).forUpdate().executeTakeFirstOrThrow();
}

/** Stores a rotated secret and the one it replaces, signing until `previousSecretExpiresAt` (or none). */
export function replaceWebhookSecret(
  tx: DatabaseTransaction,
  id: string,
  secrets: {
    secretCiphertext: string;
    previousSecretCiphertext: string | null;
    previousSecretExpiresAt: Date | null;
  },
): Promise<WebhookConfigRow> {
  return sqlOf(tx)
    .updateTable('webhookConfigs')
    .set({ ...secrets, legacySecret: null, updatedAt: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Configurations whose secret is still stored in plaintext (saved before encryption at rest). */
export function listWebhookConfigsWithLegacySecret(db: DatabaseClient): Promise<WebhookConfigRow[]> {
  return prismaOf(db).webhookConfig.findMany({ where: { legacySecret: { not: null } } });
}

/**
 * Replaces a plaintext secret with its sealed form, unless it changed meanwhile; `updated_at` is kept, the
 * configuration did not change for the partner.
 */
export async function sealLegacyWebhookSecret(
  db: DatabaseClient,
  row: Pick<WebhookConfigRow, 'id' | 'legacySecret' | 'updatedAt'>,
  secretCiphertext: string,
): Promise<void> {
  await prismaOf(db).webhookConfig.updateMany({
    where: { id: row.id, legacySecret: row.legacySecret },
    data: { secretCiphertext, legacySecret: null, updatedAt: row.updatedAt },
  });
}

/** Queues one more delivery of an event to the configuration, and wakes the outbox relay at commit. */
export async function queueWebhookRedelivery(
  tx: DatabaseTransaction,
  event: { id: string; partnerId: string },
  configId: string,
): Promise<DeliveryRow> {
  const now = new Date();
  const row = await sqlOf(tx)
    .insertInto('webhookDeliveries')
    .values({
      id: newId(),
      partnerId: event.partnerId,
      eventId: event.id,
      configId,
      trigger: 'redelivery',
      status: 'pending',
      traceParent: currentTraceParent(),
      createdAt: now,
      updatedAt: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await wakeOutboxRelay(tx);
  return { ...row, sequence: BigInt(row.sequence), attempts: [] };
}

/** A page of an event's deliveries with their attempts. */
export async function listEventDeliveries(db: Database, eventId: string, keyset: KeysetQuery): Promise<DeliveryRow[]> {
  const sql = sqlOf(db);
  const query = sql.selectFrom('webhookDeliveries as d').selectAll('d').where('d.eventId', '=', eventId);
  const deliveries = await keysetPage(query, 'd', keyset).execute();
  if (deliveries.length === 0) return [];
  const attempts = await sql
    .selectFrom('webhookDeliveryAttempts')
    .selectAll()
    .where(
      'deliveryId',
      'in',
      deliveries.map(({ id }) => id),
    )
    .orderBy('attempt', 'asc')
    .execute();
  const attemptsOf = childrenByParent(attempts, 'deliveryId');
  return deliveries.map((delivery) => ({
    ...delivery,
    sequence: BigInt(delivery.sequence),
    attempts: attemptsOf(delivery.id),
  }));
}

export function findDeliveryToAttempt(db: DatabaseClient, id: string): Promise<DeliveryToAttemptRow | null> {
  return prismaOf(db).webhookDelivery.findUnique({ where: { id }, include: withEventAndConfig });
}

/** Cancels the delivery unless it is no longer pending. */
export async function cancelPendingDelivery(db: DatabaseClient, id: string, reason: string): Promise<void> {
  await prismaOf(db).webhookDelivery.updateMany({
    where: { id, status: 'pending' },
    data: { status: 'cancelled', lastError: reason, completedAt: new Date() },
  });
}

/**
 * Records attempt number `attempt` of a delivery (again, should the activity run twice) and, while the delivery is
 * pending, its count, last answer and, when it succeeded, its end: both in one transaction.
 */
export async function recordDeliveryAttempt(
  prisma: DatabaseClient,
  deliveryId: string,
  attempt: number,
  outcome: DeliveryAttemptOutcome,
  succeeded: boolean,
): Promise<void> {
  await withDatabaseTransaction(prisma, async (tx) => {
    await sqlOf(tx)
      .insertInto('webhookDeliveryAttempts')
      .values({ id: newId(), deliveryId, attempt, ...outcome, createdAt: new Date() })
      .onConflict((conflict) => conflict.columns(['deliveryId', 'attempt']).doUpdateSet(outcome))
      .execute();
    await sqlOf(tx)
      .updateTable('webhookDeliveries')
      .set({
        attemptCount: attempt,
        lastStatusCode: outcome.statusCode,
        lastError: outcome.error,
        ...(succeeded ? { status: 'succeeded', completedAt: new Date() } : {}),
        updatedAt: new Date(),
      })
      .where('id', '=', deliveryId)
      .where('status', '=', 'pending')
      .execute();
  });
}

/** Marks the delivery failed unless it is no longer pending. */
export async function failPendingDelivery(db: DatabaseClient, id: string): Promise<void> {
  await prismaOf(db).webhookDelivery.updateMany({
    where: { id, status: 'pending' },
    data: { status: 'failed', completedAt: new Date() },
  });
}

/** The first `limit` deliveries not dispatched yet, in sequence order (of `partnerIds` only, when given). */
export function listUndispatchedDeliveries(
  db: DatabaseClient,
  options: { limit: number; partnerIds?: readonly string[] },
): Promise<UndispatchedDelivery[]> {
  let query = sqlOf(db)
    .selectFrom('webhookDeliveries as d')
    .innerJoin('events as e', 'e.id', 'd.eventId')
    .select(['d.id', 'd.partnerId', 'd.trigger', 'e.resourceId'])
    .where('d.dispatchedAt', 'is', null);
  if (options.partnerIds) query = query.where('d.partnerId', 'in', [...options.partnerIds]);
  return query.orderBy('d.sequence').limit(options.limit).execute();
}

export async function markDeliveriesDispatched(db: Database, ids: string[]): Promise<void> {
  await sqlOf(db)
    .updateTable('webhookDeliveries')
    .set({ dispatchedAt: sql`now()` })
    .where('id', 'in', ids)
    .execute();
}

/** A connection of its own on which one process at a time holds a session-level advisory lock. */
export interface AdvisoryLockConnection {
  /** Runs `work` holding lock `key` (waiting for it), with no transaction open on the lock's connection. */
  whileLocked<T>(key: number, work: () => Promise<T>): Promise<T>;
  end(): Promise<void>;
}

/** `settings`: connectionSettings of the lock's connection; `onConnectionError`: told of a dropped connection. */
export function advisoryLockConnection(
  settings: Parameters<typeof resilientPool>[0],
  onConnectionError: (error: Error) => void,
): AdvisoryLockConnection {
  const pool = resilientPool({ ...settings, max: 1 }, onConnectionError);
  return {
    async whileLocked(key, work) {
      const lock = await pool.connect();
      let broken: Error | undefined;
      // PostgreSQL ending the session (a restart) while the lock is held: note it, so the client is discarded.
      const onError = (error: Error) => {
        broken = error;
      };
      lock.on('error', onError);
      try {
        await lock.query('SELECT pg_advisory_lock($1::bigint)', [key]);
        return await work();
      } finally {
        await lock.query('SELECT pg_advisory_unlock($1::bigint)', [key]).catch((error: Error) => {
          broken = error; // the session ended: its lock went with it
        });
        lock.removeListener('error', onError);
        lock.release(broken);
      }
    },
    end: () => pool.end(),
  };
}
