// The partners table: the API's clients. A partner is made with its first API key (src/persistence/api-keys.ts).
import type { Db } from './database';
import type { NewApiKey } from './api-keys';

/** Inserts the partner together with its first key (one Prisma call: both or neither). */
export async function insertPartner(db: Db, partner: { id: string; name: string }, firstKey: NewApiKey): Promise<void> {
  await db.partner.create({ data: { ...partner, apiKeys: { create: firstKey } } });
}

/** The partner's id when it exists, else null. */
export function findPartner(db: Db, partnerId: string): Promise<{ id: string } | null> {
  return db.partner.findUnique({ where: { id: partnerId }, select: { id: true } });
}
