// What the readiness check asks of the database: that it answers, and that every migration this build ships is
// applied.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { ApiServices } from '../app-services';
import { appliedMigrationNames } from '../persistence/health';

/** The migrations this build ships (prisma/migrations next to the source or the build output). */
function shippedMigrations(): string[] | null {
  for (let dir = __dirname, level = 0; level < 5; level += 1, dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'prisma', 'migrations');
    if (existsSync(candidate)) {
      return readdirSync(candidate, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name);
    }
  }
  return null;
}

export async function databaseChecks(services: ApiServices): Promise<{ database: string; migrations: string }> {
  const done = new Set(await appliedMigrationNames(services.prisma));
  const shipped = shippedMigrations();
  const pending = shipped === null || shipped.some((name) => !done.has(name));
  return { database: 'ok', migrations: pending ? 'pending' : 'ok' };
}
