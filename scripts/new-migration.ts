// Creates a migration from the difference between the schema the existing migrations were made
// from and the working copy of prisma/schema.prisma. (`prisma migrate dev` and diffs against a
// database cannot run with the JS schema engine; see docs/development.md.)
// The base is prisma/schema.prisma as of the last commit that changed prisma/migrations, so
// always commit a migration together with the schema that produced it. `--from <git-ref>` overrides.
// Usage: npm run db:new-migration -- <name> [--from <git-ref>]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { projectRoot } from './lib/paths';
import { prepareDatabase, withoutNativeEngines } from './lib/database';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { from: { type: 'string' } } });
const name = positionals[0];
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error('usage: npm run db:new-migration -- <snake_case_name> [--from <git-ref>]');
  process.exit(2);
}

const lastMigrationCommit = spawnSync('git', ['log', '-1', '--format=%H', '--', 'prisma/migrations'], {
  cwd: projectRoot,
  encoding: 'utf8',
}).stdout.trim();
const base = values.from ?? lastMigrationCommit;
const previous = base
  ? spawnSync('git', ['show', `${base}:prisma/schema.prisma`], { cwd: projectRoot, encoding: 'utf8' })
  : { status: 1, stdout: '' };
if (base && previous.status !== 0) {
  console.error(`cannot read prisma/schema.prisma at ${base}`);
  process.exit(2);
}
// The diff runs on the migration runner (Prisma 6's CLI, prisma/migrate.config.ts), whose schema parser wants the
// datasource's url that Prisma 7's schema leaves to prisma.config.ts: each side is diffed from a copy that names it.
const scratch = mkdtempSync(path.join(os.tmpdir(), 'schema-'));
function withDatasourceUrl(schema: string, file: string): string {
  const named = /^\s*url\s*=/m.test(schema)
    ? schema
    : schema.replace(/datasource db \{\n/, 'datasource db {\n  url = env("DATABASE_URL")\n');
  const written = path.join(scratch, file);
  writeFileSync(written, named);
  return written;
}
const fromArgs: string[] = [];
if (previous.status === 0) {
  fromArgs.push('--from-schema-datamodel', withDatasourceUrl(previous.stdout, 'previous.prisma'));
} else {
  fromArgs.push('--from-empty');
}
const current = withDatasourceUrl(
  readFileSync(path.join(projectRoot, 'prisma', 'schema.prisma'), 'utf8'),
  'current.prisma',
);

async function main(): Promise<void> {
  // The JS schema engine computes the diff through a live connection, so a scratch database is used.
  const { url, localCluster } = await prepareDatabase({
    localDatabase: 'payments_migration_scratch',
    recreate: true,
    skipMigrations: true,
  });
  const sql = execFileSync(
    process.execPath,
    [
      require.resolve('prisma-migrate-engine/build/index.js'),
      'migrate',
      'diff',
      '--config',
      'prisma/migrate.config.ts',
      ...fromArgs,
      '--to-schema-datamodel',
      current,
      '--script',
    ],
    { cwd: projectRoot, encoding: 'utf8', env: { ...withoutNativeEngines, ...process.env, DATABASE_URL: url } },
  );
  const stamp = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);
  const dir = path.join(projectRoot, 'prisma', 'migrations', `${stamp}_${name}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'migration.sql'), sql);
  console.log(`wrote ${path.relative(projectRoot, dir)}/migration.sql`);
  localCluster?.stopIfStartedHere();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
