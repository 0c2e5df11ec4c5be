// What the readiness check asks the database: Prisma's migration table (_prisma_migrations), read-only.
import { sqlOf, type Database } from './internal/database';
import { sql } from 'kysely';

/** The migrations applied and not rolled back; the query fails while the database cannot be reached. */
export async function appliedMigrationNames(db: Database): Promise<string[]> {
  const applied = (
    await sql`
    SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`.execute(
      sqlOf(db),
    )
  ).rows as Array<{ migrationName: string }>;
  return applied.map((row) => row.migrationName);
}
