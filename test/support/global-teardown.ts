// Runs once after the jest run: stops the sandbox chain node, the pooled Temporal test servers and the dev server
// global-setup.ts started (with TEST_PROFILE_DIR, writes the dev server's CPU there first), and removes the run's
// entry bundles.
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { LocalAnvil } from '../../scripts/lib/anvil';
import type { DevServer } from './dev-server';
import { processCpuMs } from './profile';
import { entryBundlesDir } from './paths';
import { stopAllPooledServers, temporalServerPool } from './temporal-servers';

export default async function globalTeardown(): Promise<void> {
  rmSync(path.join(entryBundlesDir, String(process.pid)), { recursive: true, force: true });
  const pool = temporalServerPool();
  if (pool) stopAllPooledServers(pool);
  await (globalThis as { testChain?: LocalAnvil }).testChain?.stop();
  const devServer = (globalThis as { testDevServer?: DevServer }).testDevServer;
  if (devServer) {
    const profile = process.env.TEST_PROFILE_DIR;
    const cpuMs = devServer.process.pid === undefined ? null : processCpuMs(devServer.process.pid);
    if (profile && cpuMs !== null) writeFileSync(path.join(profile, 'dev-server.json'), JSON.stringify({ cpuMs }));
    await devServer.stop();
    rmSync(devServer.pool, { recursive: true, force: true });
  }
}
