// The statements a persistence function sends, as Kysely compiles them (test/list-plans.test.ts does the same): a
// client of the same pool whose SQL builder also hands each compiled query to `onQuery`. The scale section explains
// them; the floor server replays the transaction list's.
import type { CompiledQuery } from 'kysely';
import { type DatabaseClient } from '../../src/persistence/database';
import { SQL_BUILDER, sqlBuilderOn, sqlPoolOf } from '../../src/persistence/internal/database';

export function capturingClient(prisma: DatabaseClient, onQuery: (query: CompiledQuery) => void): DatabaseClient {
  const builder = sqlBuilderOn(sqlPoolOf(prisma), onQuery);
  return new Proxy(prisma, {
    get: (target, property) => (property === SQL_BUILDER ? builder : Reflect.get(target, property)),
  });
}
