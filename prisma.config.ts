// Prisma 7's CLI configuration: `prisma generate` (the client and the Kysely tables into src/persistence/generated).
// Migrations do not run through this CLI: its schema engine is a native download these machines cannot make, so
// `migrate deploy` runs on the JS schema engine of prisma/migrate.config.ts (docs/development.md "Prisma without
// native engines").
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  // Read by commands that connect (none of ours); generate needs no database.
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://localhost/unused' },
});
