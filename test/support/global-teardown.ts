// Runs once after the jest run: stops the sandbox chain node and the bank simulator global-setup.ts started.
import type { LocalAnvil } from '../../scripts/lib/anvil';
import type { LocalBankSimulator } from '../../scripts/lib/bank-simulator';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { testChain?: LocalAnvil }).testChain?.stop();
  await (globalThis as { testBank?: LocalBankSimulator }).testBank?.stop();
}
