// Runs once after the jest run: stops the sandbox chain node global-setup.ts started.
import type { LocalAnvil } from '../../scripts/lib/anvil';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { testChain?: LocalAnvil }).testChain?.stop();
}
