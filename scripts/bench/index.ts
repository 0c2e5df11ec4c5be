// `npm run bench [-- options]`: starts the stack (or attaches to one), drives the public API as partners would,
// and compares each hot path with what it stands on, side by side in one run: GET against a bare Koa route
// doing the same query, quotes against a no-op workflow start, settlements against the engine's ceiling. Prints a
// table and writes bench-results/latest.json and bench-results/latest.svg. docs/benchmark.md explains it.
//
// Options: --quick (under 5 minutes), --tsx (API and worker from sources; by default from `npm run build`, as production),
// --attach (use a running stack, see docs/benchmark.md), --settlements N, --concurrency C, --duration SECONDS,
// --rounds R, --poll-ms MS, --engine server (the Temporal server on PostgreSQL instead of the dev server), --telemetry (metrics
// served and every span exported over OTLP, to measure their cost), --profile (CPU profiles of the API and workers; summarise them with
// `npx tsx scripts/bench/profile-summary.ts .data/bench/profiles/api`).
import { spawnSync } from 'node:child_process';
import { generatePrismaClient } from '../lib/database';
import { projectRoot } from '../lib/paths';
import { parseOptions } from './options';

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  // The Prisma client must exist before anything loads it (a fresh clone has only its stub).
  await generatePrismaClient();
  if (options.dist) {
    // Always rebuilt: a stale dist would measure other code than the sources.
    console.error('[bench] building first (npm run build; --tsx runs the sources instead)');
    const build = spawnSync('npm', ['run', 'build'], { cwd: projectRoot, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('npm run build failed');
  }
  const { runBench } = await import('./run');
  await runBench(options);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
