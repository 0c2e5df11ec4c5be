// What the readiness check asks the database: Prisma's migration table (_prisma_migrations), read-only.
import type { Db } from './database';

/** The migrations applied and not rolled back; the query fails while the database cannot be reached. */
export async function appliedMigrationNames(db: Db): Promise<string[]> {
  const applied = await db.$queryRaw<Array<{ migration_name: string }>>`
    SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`;
  return applied.map((row) => row.migration_name);
}
