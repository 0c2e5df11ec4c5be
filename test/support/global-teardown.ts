// Runs once after the jest run: stops the sandbox chain node, the Temporal test servers (their JVM or pool) and the dev server
// global-setup.ts started (with TEST_PROFILE_DIR, writes the dev server's CPU there first), and removes the run's
// entry bundles.
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { LocalAnvil } from '../../scripts/lib/anvil';
import type { DevServer } from './dev-server';
import { processCpuMs } from './profile';
import { entryBundlesDir } from './paths';
import { stopAllPooledServers, temporalServerPool, type TestServersJvm } from './temporal-servers';

export default async function globalTeardown(): Promise<void> {
  rmSync(path.join(entryBundlesDir, String(process.pid)), { recursive: true, force: true });
  const pool = temporalServerPool();
  if (pool) stopAllPooledServers(pool);
  const jvm = (globalThis as { testServersJvm?: TestServersJvm }).testServersJvm;
  if (jvm) {
    recordCpu('test-servers.json', jvm.pid);
    await jvm.stop();
  }
  await (globalThis as { testChain?: LocalAnvil }).testChain?.stop();
  const devServer = (globalThis as { testDevServer?: DevServer }).testDevServer;
  if (devServer) {
    recordCpu('dev-server.json', devServer.process.pid);
    await devServer.stop();
    rmSync(devServer.pool, { recursive: true, force: true });
  }
}

/** With TEST_PROFILE_DIR: a process's CPU so far, for test:profile, read before it is stopped. */
function recordCpu(file: string, pid: number | undefined): void {
  const profile = process.env.TEST_PROFILE_DIR;
  const cpuMs = pid === undefined ? null : processCpuMs(pid);
  if (profile && cpuMs !== null) writeFileSync(path.join(profile, file), JSON.stringify({ cpuMs }));
}
