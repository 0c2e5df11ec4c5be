// Runs once after the jest run: stops the sandbox chain node and the pooled Temporal test servers global-setup.ts
// started.
import type { LocalAnvil } from '../../scripts/lib/anvil';
import { stopAllPooledServers, temporalServerPool } from './temporal-servers';

export default async function globalTeardown(): Promise<void> {
  const pool = temporalServerPool();
  if (pool) stopAllPooledServers(pool);
  await (globalThis as { testChain?: LocalAnvil }).testChain?.stop();
}
