// Configuration of the migration runner (`prisma-migrate-engine`, the Prisma 6 CLI kept for its JS schema engine):
// Prisma 7's CLI migrates only through a native schema engine that these machines cannot download. It applies
// prisma/migrations through @prisma/adapter-pg; prisma/migrate.prisma names only the datasource (paths here are relative to this file), since applying
// migrations needs no models (docs/development.md "Prisma without native engines").
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { defineConfig } from 'prisma-migrate-engine/config';

// prisma/orm#27403: adapter-pg rejects catalog columns of type `name` (oid 19) that migrate reads.
// Report them as text (oid 25); only the CLI's introspection queries see this.
const NAME_OID = 19;
const TEXT_OID = 25;
const originalQuery = pg.Pool.prototype.query as (...args: unknown[]) => unknown;
pg.Pool.prototype.query = function patchedQuery(this: pg.Pool, ...args: unknown[]) {
  const result = originalQuery.apply(this, args);
  if (result && typeof (result as Promise<unknown>).then === 'function') {
    return (result as Promise<pg.QueryResult>).then((res) => {
      for (const field of res?.fields ?? []) if (field.dataTypeID === NAME_OID) field.dataTypeID = TEXT_OID;
      return res;
    });
  }
  return result;
} as typeof pg.Pool.prototype.query;

export default defineConfig({
  schema: 'migrate.prisma',
  migrations: { path: 'migrations' },
  experimental: { adapter: true },
  engine: 'js',
  async adapter() {
    const connectionString = process.env.DATABASE_URL;
    if (!connectionString) throw new Error('DATABASE_URL must be set to run Prisma migrations');
    return new PrismaPg({ connectionString });
  },
});
