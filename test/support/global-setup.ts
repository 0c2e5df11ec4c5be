// Runs once per jest run: bundles the workflow code so that every test file's worker reuses it, and empties the
// folder where the harnesses share the OpenAPI document (built from this run's code by the first that needs it),
// and starts the run's one sandbox chain node (Anvil, instant blocks), which every test file's harness points at, and
// the run's one bank simulator (simulators/bank/), which the sandbox's EUR and USD rails talk to (testBankEnv).
//
// One node per run, not one per file: a node with its two token deployments costs about a second of CPU, sixty
// times over on two cores. No snapshot/revert between files either: files run in parallel, and a revert would undo
// the other file's blocks. Files do not need a clean chain: each file's wallets are its own addresses, and the
// sending nonces live in the database all files share, as they would on one public chain.
import { mkdirSync, rmSync } from 'node:fs';
import { type LocalAnvil, startAnvil } from '../../scripts/lib/anvil';
import { type LocalBankSimulator, startLocalBankSimulator } from '../../scripts/lib/bank-simulator';
import { writeWorkflowBundle } from '../../scripts/bundle-workflows';
import { openApiDocumentCache, workflowBundlePath } from './paths';

export default async function globalSetup(): Promise<void> {
  if (!process.env.DATABASE_URL) {
    throw new Error('DATABASE_URL is not set: run the tests with `npm test`, which prepares the database.');
  }
  rmSync(openApiDocumentCache, { recursive: true, force: true });
  mkdirSync(openApiDocumentCache, { recursive: true });
  // The bank simulator settles in 300 ms instead of a second: the tests wait on it, a bank would take hours.
  const [anvil, bank] = await Promise.all([
    startAnvil(),
    startLocalBankSimulator({ ISO20022_SETTLE_MS: '300' }),
    writeWorkflowBundle(workflowBundlePath),
  ]);
  // jest's workers are started after this and inherit the variables; global-teardown.ts stops both.
  process.env.TEST_CHAIN_RPC_URL = anvil.rpcUrl;
  process.env.TEST_BANK_SIMULATOR_URL = bank.url;
  (globalThis as { testChain?: LocalAnvil }).testChain = anvil;
  (globalThis as { testBank?: LocalBankSimulator }).testBank = bank;
}
