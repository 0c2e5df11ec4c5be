// The one partner-scoped lookup by id of the services: a row of another partner, a malformed id and a missing row
// all answer the same 404, so ids of other partners' resources cannot be probed.
import { isUuid } from '../domain/ids';
import { DomainError } from '../domain/errors';
import { type Database, ownedBy, type DatabaseClient } from '../persistence/database';

/** The partner's row `find` reads by `id`, or 404 not_found naming `resource`. */
export async function ownedOrNotFound<Row extends { partnerId: string }>(
  resource: string,
  find: (db: DatabaseClient, id: string) => Promise<Row | null>,
  db: DatabaseClient,
  partnerId: string,
  id: string,
): Promise<Row> {
  const row = isUuid(id) ? ownedBy(await find(db, id), partnerId) : null;
  if (!row) throw DomainError.notFound(resource, id);
  return row;
}
