// Finds or starts the database and brings its schema up to date.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { ensureLocalPostgres, LocalPostgres } from './postgres';
import { projectRoot } from './paths';

export interface PreparedDatabase {
  url: string;
  /** The private cluster when this process uses one (DATABASE_URL unset), else null. */
  localCluster: LocalPostgres | null;
}

/**
 * Uses DATABASE_URL when set; otherwise the private cluster's database `localDatabase`
 * (recreated empty first when `recreate` is true: tests start from a clean schema).
 */
export async function prepareDatabase(options: {
  localDatabase: string;
  recreate?: boolean;
  skipMigrations?: boolean;
  /** A private cluster of its own under this folder, whatever DATABASE_URL says (chaos runs stop and start it). */
  ownClusterIn?: string;
}): Promise<PreparedDatabase> {
  let url = options.ownClusterIn ? undefined : process.env.DATABASE_URL;
  let localCluster: LocalPostgres | null = null;
  if (!url) {
    localCluster = await ensureLocalPostgres(options.ownClusterIn);
    await ensureDatabase(localCluster.urlFor('postgres'), options.localDatabase, options.recreate ?? false);
    url = localCluster.urlFor(options.localDatabase);
  }
  if (!options.skipMigrations) migrate(url);
  return { url, localCluster };
}

async function ensureDatabase(adminUrl: string, database: string, recreate: boolean): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const quoted = `"${database.replace(/"/g, '""')}"`;
    if (recreate) await client.query(`DROP DATABASE IF EXISTS ${quoted} WITH (FORCE)`);
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${quoted}`);
  } finally {
    await client.end();
  }
}

export function runPrisma(args: string[], env: NodeJS.ProcessEnv = process.env): void {
  const result = spawnSync(process.execPath, [require.resolve('prisma/build/index.js'), ...args], {
    cwd: projectRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
  if (result.status !== 0) {
    process.stderr.write(result.stdout + result.stderr);
    throw new Error(`prisma ${args.join(' ')} failed`);
  }
}

export function migrate(url: string): void {
  runPrisma(['migrate', 'deploy'], { ...process.env, DATABASE_URL: url });
}

/** Generates the Prisma client unless it is newer than the schema (a run right after `npm test`). */
export function generatePrismaClientIfStale(): void {
  const generated = path.join(projectRoot, 'node_modules', '.prisma', 'client', 'index.js');
  const schema = path.join(projectRoot, 'prisma', 'schema.prisma');
  if (existsSync(generated) && statSync(generated).mtimeMs > statSync(schema).mtimeMs) return;
  generatePrismaClient();
}

/** Generates the Prisma client; prisma needs a DATABASE_URL to parse the schema, not to connect. */
export function generatePrismaClient(): void {
  runPrisma(['generate', '--no-hints'], {
    ...process.env,
    DATABASE_URL: process.env.DATABASE_URL ?? 'postgresql://localhost/unused',
  });
}
