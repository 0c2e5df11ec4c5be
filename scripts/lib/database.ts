// Finds or starts the database and brings its schema up to date.
import { spawn } from 'node:child_process';
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
  /** Use the private cluster even when DATABASE_URL is set (the benchmark recreates its own database). */
  privateCluster?: boolean;
  /** A private cluster of its own under this folder, whatever DATABASE_URL says (chaos runs stop and start it). */
  ownClusterIn?: string;
}): Promise<PreparedDatabase> {
  let url = options.privateCluster || options.ownClusterIn ? undefined : process.env.DATABASE_URL;
  let localCluster: LocalPostgres | null = null;
  if (!url) {
    localCluster = await ensureLocalPostgres(options.ownClusterIn);
    await ensureDatabase(localCluster.urlFor('postgres'), options.localDatabase, options.recreate ?? false);
    url = localCluster.urlFor(options.localDatabase);
  }
  if (!options.skipMigrations) await migrate(url);
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

/**
 * Runs the Prisma CLI in a child process (asynchronous, so callers can overlap it with other start-up work).
 * `finishedWhen`: output that the CLI prints only once its command has succeeded; the child is then stopped
 * instead of awaited (see migrate).
 */
export function runPrisma(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  finishedWhen?: RegExp,
  cli: 'prisma' | 'prisma-migrate-engine' = 'prisma',
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [require.resolve(`${cli}/build/index.js`), ...args], {
      cwd: projectRoot,
      env: { ...withoutNativeEngines, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let finished = false;
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (finishedWhen && !finished && finishedWhen.test(output)) {
        finished = true;
        child.kill('SIGTERM');
        resolve();
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => {
      if (finished) return;
      if (status === 0) return resolve();
      process.stderr.write(output);
      reject(new Error(`prisma ${args.join(' ')} failed`));
    });
  });
}

/**
 * The roles the API and the worker connect as (prisma/migrations/*_service_roles grants them rows only; the
 * migrations run as the database's owner). docs/operations.md "Database roles".
 */
export const serviceRoles = { api: 'payments_api', worker: 'payments_worker' } as const;

const DUPLICATE_OBJECT = '42710';

/**
 * Creates the service roles where missing (they belong to the cluster, not one database; the first migration that
 * grants to them needs them). Without a password: the private clusters trust local connections; elsewhere an
 * administrator creates them with one (scripts/production/database-roles.sql).
 */
export async function ensureServiceRoles(url: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    for (const role of Object.values(serviceRoles)) {
      const exists = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role]);
      if (exists.rowCount) continue;
      try {
        await client.query(`CREATE ROLE ${role} LOGIN`);
      } catch (error) {
        // Another process (a parallel test run) created it first.
        if ((error as { code?: string }).code !== DUPLICATE_OBJECT) throw error;
      }
    }
  } catch (error) {
    throw new Error(
      `the database roles ${Object.values(serviceRoles).join(', ')} are missing and could not be created (${(error as Error).message}): create them first (docs/operations.md "Database roles")`,
    );
  } finally {
    await client.end();
  }
}

/** `url` with the user of service `which` instead of its own (same host, database and settings). */
export function serviceRoleUrl(url: string, which: keyof typeof serviceRoles): string {
  const parsed = new URL(url);
  parsed.username = serviceRoles[which];
  parsed.password = '';
  return parsed.toString();
}

/**
 * `prisma migrate deploy`. After printing its result the CLI stays alive 10 s more on a timer its WebAssembly
 * schema engine leaves behind (it exits by itself only on errors), which made every fresh database (each
 * `npm test`, a first `npm run dev`) wait 10 s for nothing: its final line, printed after the last migration
 * is recorded, ends the wait.
 */
export async function migrate(url: string): Promise<void> {
  await ensureServiceRoles(url);
  return runPrisma(
    ['migrate', 'deploy', '--config', 'prisma/migrate.config.ts'],
    { ...process.env, DATABASE_URL: url },
    /All migrations have been successfully applied|No pending migrations to apply/,
    'prisma-migrate-engine',
  );
}

/**
 * Both CLIs check for their native engines at start-up and download the missing ones, which these machines cannot:
 * a path that exists stands in for each (never run: generate uses the WebAssembly schema parser, migrations the JS
 * schema engine of prisma/migrate.config.ts).
 */
export const withoutNativeEngines: NodeJS.ProcessEnv = {
  PRISMA_SCHEMA_ENGINE_BINARY: process.execPath,
  PRISMA_QUERY_ENGINE_LIBRARY: process.execPath,
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
};

/** Generates the Prisma client unless it is newer than the schema (a run right after `npm test`). */
export async function generatePrismaClientIfStale(): Promise<void> {
  // The Prisma client and the Kysely table types (src/persistence/generated) come from the schema together.
  const generated = [
    path.join(projectRoot, 'src', 'persistence', 'generated', 'prisma', 'client.ts'),
    path.join(projectRoot, 'src', 'persistence', 'generated', 'tables.ts'),
  ];
  const schema = statSync(path.join(projectRoot, 'prisma', 'schema.prisma')).mtimeMs;
  if (generated.every((file) => existsSync(file) && statSync(file).mtimeMs > schema)) return;
  await generatePrismaClient();
}

/** Generates the Prisma client and the Kysely tables (src/persistence/generated); no database needed. */
export function generatePrismaClient(): Promise<void> {
  return runPrisma(['generate', '--no-hints']);
}
