// Creates a migration from the difference between the last committed prisma/schema.prisma and the
// working copy. (`prisma migrate dev` cannot run with the JS schema engine; see README.)
// Usage: npm run db:new-migration -- <name>
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from './lib/paths';
import { prepareDatabase } from './lib/database';

const name = process.argv[2];
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error('usage: npm run db:new-migration -- <snake_case_name>');
  process.exit(2);
}

const previous = spawnSync('git', ['show', 'HEAD:prisma/schema.prisma'], { cwd: projectRoot, encoding: 'utf8' });
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
