// Scenario 8, chain reorganisations (issue 36, part B): the chain watcher on a node of its own (Anvil), while
// transfers arrive at the collection address and `anvil_reorg` replaces the last blocks after each was seen. Half the
// rounds reorganise the transfer's own block away before it is deep enough; the other half let it be credited first
// and then reorganise the blocks above it. Nothing may be credited whose block left the chain, nothing credited twice,
// and in the end the books equal `balanceOf` of the collection address at the block the watcher read up to.
// The reorganisations would disturb the other scenarios' chain, so the scenario takes a node of its own: the stack's
// watcher steps aside (terminated, its readings forgotten), the scenario runs the watcher's worker itself on a task
// queue of its own against the chaos database and Temporal, and afterwards the stack's watcher starts again and
// reads the stack's chain from its first block (the final reconciliation checks it).
import { NativeConnection } from '@temporalio/worker';
import { erc20Abi, formatUnits, type Hash, parseUnits } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { createActivities } from '../../../activities';
import { loadConfig } from '../../../src/config';
import { createLogger } from '../../../src/logger';
import { chainCursor, chainDepositsOf, forgetChainReadings } from '../../../src/persistence/chain-watcher';
import { createProviders } from '../../../src/providers';
import { temporalTlsOptions } from '../../../src/temporal/tls';
import {
  mintSandboxStablecoin,
  SANDBOX_CHAIN_MNEMONIC,
  sandboxChain,
  sandboxChainClients,
  sandboxCollectionAddress,
} from '../../../src/providers/evm/sandbox-chain';
import { ensureChainWatchers } from '../../../src/temporal/chain-watchers';
import { createWorker } from '../../../src/temporal/worker';
import { anvilRpc, startAnvil } from '../../lib/anvil';
import { waitUntil } from '../../lib/wait';
import type { RunSize, ScenarioReport } from '../report';
import type { ChaosSystem } from '../system';

const TASK_QUEUE = 'chaos-chain-watcher';
const WAIT_MS = 30_000;

export async function chainReorgScenario(system: ChaosSystem, report: ScenarioReport, size: RunSize): Promise<void> {
  const stackConfig = loadConfig(system.apiEnv);
  await stopWatcher(system);
  await forgetChainReadings(system.prisma, 'ethereum');
  const anvil = await startAnvil();
  const env = {
    ...system.apiEnv,
    ETHEREUM_RPC_URL: anvil.rpcUrl,
    ETHEREUM_CONFIRMATIONS: '3',
    ETHEREUM_WATCH_POLL_SECONDS: '1',
    TEMPORAL_TASK_QUEUE: TASK_QUEUE,
    ...system.temporalTlsEnv('worker'),
  };
  const config = loadConfig(env);
  const logger = createLogger('warn', { component: 'chaos-chain-watcher' });
  const connection = await NativeConnection.connect({
    address: config.temporal.address,
    tls: temporalTlsOptions(config.temporal.tls),
  });
  const worker = await createWorker({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: TASK_QUEUE,
    activities: createActivities({ config, prisma: system.prisma, logger, ...createProviders(config, system.prisma) }),
    workflowBundlePath: system.apiEnv.WORKFLOW_BUNDLE_PATH,
  });
  const running = worker.run();
  const rpc = (method: string, params: unknown[] = []) => anvilRpc(anvil.rpcUrl, method, params, 5_000);
  const collection = sandboxCollectionAddress();
  const sender = mnemonicToAccount(SANDBOX_CHAIN_MNEMONIC, { addressIndex: 2 });
  const { publicClient, walletClient } = sandboxChainClients(anvil.rpcUrl);
  const rowsOf = async (hash: string) =>
    (await chainDepositsOf(system.prisma, 'ethereum')).filter((row) => row.txHash === hash.toLowerCase());
  const send = async (amount: string): Promise<Hash> => {
    const hash = await walletClient.writeContract({
      address: anvil.tokens.USDC,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [collection, parseUnits(amount, 6)],
      account: sender,
      chain: sandboxChain,
    });
    await publicClient.waitForTransactionReceipt({ hash, timeout: WAIT_MS });
    return hash;
  };
  const watcherPast = async (block: bigint) =>
    waitUntil(async () => ((await chainCursor(system.prisma, 'ethereum')) ?? 0n) > block, WAIT_MS, 200);

  try {
    // The chaos database is fresh each run; its chain tables start empty, as this node's chain does.
    await ensureChainWatchers(system.temporal, config, TASK_QUEUE);
    await mintSandboxStablecoin(anvil.rpcUrl, 'USDC', sender.address, parseUnits('100000', 6));
    // Below the reach of the rounds' reorganisations: the sender's coin stays.
    await rpc('anvil_mine', ['0x3']);
    const dropped: string[] = [];
    const kept: string[] = [];
    const rounds = size.quick ? 4 : 12;
    for (let round = 0; round < rounds; round += 1) {
      report.cases += 1;
      const hash = await send(`${round + 1}.25`);
      if (
        !report.check(
          await waitUntil(async () => (await rowsOf(hash)).length === 1, WAIT_MS, 200),
          () => `round ${round}: ${hash} never seen`,
        )
      )
        continue;
      if (round % 2 === 0) {
        // Its own block replaced before it is deep enough.
        await rpc('anvil_reorg', [2, []]);
        dropped.push(hash);
        report.check(
          await waitUntil(async () => (await rowsOf(hash)).length === 0, WAIT_MS, 200),
          () => `round ${round}: ${hash} still recorded after its block left the chain`,
        );
      } else {
        // Credited first (three blocks deep), then the two blocks above it replaced.
        await rpc('anvil_mine', ['0x3']);
        report.check(
          await waitUntil(async () => (await rowsOf(hash))[0]?.status === 'credited', WAIT_MS, 200),
          () => `round ${round}: ${hash} not credited once deep enough`,
        );
        await rpc('anvil_reorg', [2, []]);
        kept.push(hash);
      }
    }
    await rpc('anvil_mine', ['0x5']);
    const head = await publicClient.getBlockNumber({ cacheTime: 0 });
    report.check(await watcherPast(head), () => `the watcher did not read past block ${head}`);
    // Every step of the watcher once more, so a late rollback would show.
    await new Promise((resolve) => setTimeout(resolve, 3_000));

    for (const hash of dropped) {
      const rows = await rowsOf(hash);
      report.check(
        rows.length === 0,
        () => `${hash}: its block left the chain, yet ${rows.length} row(s) (${rows[0]?.status})`,
      );
    }
    for (const hash of kept) {
      const rows = await rowsOf(hash);
      report.check(
        rows.length === 1 && rows[0]!.status === 'credited',
        () => `${hash}: ${rows.length} row(s), expected one credit`,
      );
      const block = rows[0] && (await publicClient.getBlock({ blockNumber: rows[0].blockNumber }));
      report.check(
        block?.hash.toLowerCase() === rows[0]?.blockHash,
        () => `${hash}: credited in a block no longer on the chain`,
      );
    }
    // The books (what the watcher read) against the chain, at the block it read up to.
    const cursor = (await chainCursor(system.prisma, 'ethereum')) ?? 0n;
    const deep = head - 2n < cursor - 1n ? head - 2n : cursor - 1n;
    const book = (await chainDepositsOf(system.prisma, 'ethereum'))
      .filter((row) => row.blockNumber <= deep && row.currency === 'USDC')
      .reduce((total, row) => total + parseUnits(row.amount, 6), 0n);
    const onChain = await publicClient.readContract({
      address: anvil.tokens.USDC,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [collection],
      blockNumber: deep,
    });
    report.check(
      book === onChain,
      () => `books ${formatUnits(book, 6)} USDC, balanceOf ${formatUnits(onChain, 6)} at block ${deep}`,
    );
    report.notes.reorgs = rounds;
    report.notes.credited = kept.length;
    report.notes.dropped = dropped.length;
  } finally {
    await stopWatcher(system);
    worker.shutdown();
    await running.catch(() => undefined);
    await connection.close();
    await anvil.stop();
    await forgetChainReadings(system.prisma, 'ethereum');
    await ensureChainWatchers(system.temporal, stackConfig, stackConfig.temporal.taskQueue);
  }
}

/** Terminates the running chain watcher, then lets an activity it had started finish its write. */
async function stopWatcher(system: ChaosSystem): Promise<void> {
  const terminated = await system.temporal.workflow
    .getHandle('chain-watcher-ethereum')
    .terminate('chaos: the chain-reorg scenario runs a watcher on a node of its own')
    .then(() => true)
    .catch(() => false);
  if (terminated) await new Promise((resolve) => setTimeout(resolve, 3_000));
}
