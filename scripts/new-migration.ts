// Creates a migration from the difference between the schema the existing migrations were made
// from and the working copy of prisma/schema.prisma. (`prisma migrate dev` and diffs against a
// database cannot run with the JS schema engine; see docs/development.md.)
// The base is prisma/schema.prisma as of the last commit that changed prisma/migrations, so
// always commit a migration together with the schema that produced it. `--from <git-ref>` overrides.
// Usage: npm run db:new-migration -- <name> [--from <git-ref>]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { projectRoot } from './lib/paths';
import { prepareDatabase } from './lib/database';

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
const fromArgs: string[] = [];
if (previous.status === 0) {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'schema-')), 'schema.prisma');
  writeFileSync(file, previous.stdout);
  fromArgs.push('--from-schema-datamodel', file);
} else {
  fromArgs.push('--from-empty');
}

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
      require.resolve('prisma/build/index.js'),
      'migrate',
      'diff',
      ...fromArgs,
      '--to-schema-datamodel',
      'prisma/schema.prisma',
      '--script',
    ],
    { cwd: projectRoot, encoding: 'utf8', env: { ...process.env, DATABASE_URL: url } },
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
