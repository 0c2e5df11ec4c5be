// The chain watcher against a real node (issue 36, part B): Anvil mining on demand, the watcher workflow started as the
// worker starts it. A transfer to the collection address is seen, credited only once deep enough and once only; a
// payout hash not deep enough yet is accepted and settles when the blocks come, or is refused after its bound; a
// reorganisation of the blocks a deposit was seen in rolls the watcher back and the deposit is never credited.
import { randomBytes } from 'node:crypto';
import { erc20Abi, type Hash, parseEventLogs, parseUnits } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { anvilRpc, type LocalAnvil, startAnvil } from '../scripts/lib/anvil';
import {
  mintSandboxStablecoin,
  sandboxAccount,
  sandboxChain,
  sandboxChainClients,
} from '../src/providers/evm/sandbox-chain';
import { chainCursor, chainDepositsOf } from '../src/persistence/chain-watcher';
import { findEvmSend } from '../src/persistence/evm-sends';
import { bip44PrivateKey, COLLECTION_KEY_REFERENCE, TREASURY_KEY_REFERENCE } from '../src/providers/wallet-addresses';
import { reconciliationWorkflow } from '../workflows/reconciliation';
import { receiveDepositUpdate, settlementRefusals } from '../workflows/settlement';
import { NOT_AWAITING_DEPOSIT, RECEIVE_DEPOSIT_UPDATE } from '../activities/chain-watcher';
import { ensureChainWatchers } from '../src/temporal/chain-watchers';
import { EvmChainWatch } from '../src/providers/evm/watcher';
import { ProviderUnavailableError } from '../src/providers/unavailable';
import { waitUntil } from '../scripts/lib/wait';
import { chainDeepReorgs } from '../src/observability/metrics';
import { Harness, startHarness } from './support/harness';
import { createPayout, payoutQuoteBody } from './support/payments';
import { Parties, setUpParties, settlementHandle, TransactionBody } from './support/transactions';

let anvil: LocalAnvil;
let harness: Harness;
let parties: Parties;
const sender = sandboxAccount(2);
// A key seed of this file's own (WALLET_KEY_SEED, new each run), so its collection address (`m/44'/60'/0'/0/1`, whose
// coin the service sweeps) and treasury (which pays the sweeps' gas) are addresses no other file uses: other files'
// payouts, swept from the sandbox collection on the run's other node, are recorded in the database this file shares
// and would count against the sandbox collection, and their stored nonces are per chain name and sender, not per node.
const keySeed = randomBytes(32);
const keyOf = (path: string) => privateKeyToAccount(`0x${Buffer.from(bip44PrivateKey(keySeed, path)).toString('hex')}`);
const collectionKey = keyOf(COLLECTION_KEY_REFERENCE.slice('bip44:'.length));
const collection = collectionKey.address;
const treasury = keyOf(TREASURY_KEY_REFERENCE.slice('bip44:'.length)).address;

const rpc = (method: string, params: unknown[] = []) => anvilRpc(anvil.rpcUrl, method, params, 10_000);
const mine = (blocks: number) => rpc('anvil_mine', [`0x${blocks.toString(16)}`]);

beforeAll(async () => {
  anvil = await startAnvil();
  harness = await startHarness({
    ETHEREUM_RPC_URL: anvil.rpcUrl,
    ETHEREUM_CONFIRMATIONS: '3',
    ETHEREUM_WATCH_POLL_SECONDS: '1',
    ETHEREUM_COLLECTION_ADDRESS: collection,
    WALLET_KEY_SEED: keySeed.toString('hex'),
  });
  // Ether for the gas the treasury sends the collection before its first sweep (this file's node, this file's address).
  await rpc('anvil_setBalance', [treasury, '0x56bc75e2d63100000']);
  parties = await setUpParties(harness);
  await mintSandboxStablecoin(anvil.rpcUrl, 'USDC', sender.address, parseUnits('10000', 6));
  // Test files share the database: this file's node is a fresh chain, so the watcher starts on it from block 0.
  await harness.prisma.chainDeposit.deleteMany({ where: { chain: 'ethereum' } });
  await harness.prisma.chainBlock.deleteMany({ where: { chain: 'ethereum' } });
  await harness.prisma.chainCursor.deleteMany({ where: { chain: 'ethereum' } });
  await harness.prisma.payoutChainClaim.deleteMany({ where: { chain: 'ethereum' } });
  expect(await ensureChainWatchers(harness.env.client, harness.config, harness.config.temporal.taskQueue)).toEqual([
    'chain-watcher-ethereum',
  ]);
  // Idempotent: a second worker's start finds the running watcher.
  await ensureChainWatchers(harness.env.client, harness.config, harness.config.temporal.taskQueue);
}, 120_000);
afterAll(async () => {
  await harness?.env.client.workflow
    .getHandle('chain-watcher-ethereum')
    .terminate('test over')
    .catch(() => undefined);
  await harness?.teardown();
  await anvil?.stop();
});

async function send(to: `0x${string}`, amount: string): Promise<Hash> {
  const { publicClient, walletClient } = sandboxChainClients(anvil.rpcUrl);
  const hash = await walletClient.writeContract({
    address: anvil.tokens.USDC,
    abi: erc20Abi,
    functionName: 'transfer',
    args: [to, parseUnits(amount, 6)],
    account: sender,
    chain: sandboxChain,
  });
  await publicClient.waitForTransactionReceipt({ hash });
  return hash;
}

const depositsOf = async (hash: string) =>
  (await chainDepositsOf(harness.prisma, 'ethereum')).filter((deposit) => deposit.txHash === hash.toLowerCase());
const until = (check: () => Promise<boolean>) => waitUntil(check, 30_000, 200);

it('sees a transfer to the collection address, credits it once deep enough, and once only', async () => {
  const hash = await send(collection, '25.5');
  expect(await until(async () => (await depositsOf(hash)).length === 1)).toBe(true);
  const [seen] = await depositsOf(hash);
  expect(seen).toMatchObject({ status: 'seen', currency: 'USDC', amount: '25.5', toAddress: collection.toLowerCase() });

  // In one block of the three required: not credited however long the watcher reads.
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  expect((await depositsOf(hash))[0]!.status).toBe('seen');
  await mine(2);
  expect(await until(async () => (await depositsOf(hash))[0]!.status === 'credited')).toBe(true);
  await mine(3);
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  expect(await depositsOf(hash)).toHaveLength(1);
}, 60_000);

const ethereumPayout = () =>
  createPayout(
    parties,
    { wallet_id: undefined },
    payoutQuoteBody({ sender: { currency: 'USDC', payment_rail: 'ethereum', amount: '100.000000' } }),
  );
const confirm = (payout: TransactionBody, hash: string) =>
  parties.partner.api.post('/v1/payout/confirm').send({ transaction_id: payout.id, tx_hash: hash });
const statusOf = async (payout: TransactionBody) =>
  (await parties.partner.api.get(`/v1/transactions/${payout.id}`)).body.status as string;

it('accepts a payout hash not deep enough yet and settles it when the blocks come', async () => {
  const payout = await ethereumPayout();
  const paid = await send(collection, payout.sender.amount as string);
  const accepted = await confirm(payout, paid);
  expect([accepted.status, accepted.body.status]).toEqual([200, 'awaiting_deposit']);
  // Again: harmless. For another payout: the hash counts once.
  expect((await confirm(payout, paid)).status).toBe(200);
  const other = await ethereumPayout();
  const used = await confirm(other, paid);
  expect([used.status, used.body.error?.code]).toEqual([422, 'tx_hash_already_used']);
  // A second, different hash while the first waits.
  const second = await send(collection, payout.sender.amount as string);
  expect((await confirm(payout, second)).body.error?.code).toBe('payout_cannot_be_confirmed');

  await new Promise((resolve) => setTimeout(resolve, 2_000));
  expect(await statusOf(payout)).toBe('awaiting_deposit');
  await mine(2);
  expect(await until(async () => (await statusOf(payout)) !== 'awaiting_deposit')).toBe(true);
  expect(await settlementHandle(harness, payout.id).result()).toBe('completed');
  const deposits = await harness.prisma.transactionDeposit.findMany({ where: { transactionId: payout.id } });
  expect(deposits).toEqual([expect.objectContaining({ provider: 'ethereum', providerReference: paid.toLowerCase() })]);
  expect(await harness.prisma.payoutChainClaim.findUnique({ where: { transactionId: payout.id } })).toMatchObject({
    status: 'settled',
  });
  await parties.partner.api.put(`/v1/transactions/${other.id}`).send({ status: 'cancelled' });
  // Its coin was swept from the collection: the blocks of the sweep below the reorganisations of the tests after.
  await mine(3);
}, 90_000);

it('refuses an accepted hash that is not deep enough within its bound', async () => {
  const payout = await ethereumPayout();
  await rpc('evm_setAutomine', [false]);
  let hash: Hash;
  try {
    // Sent, not mined: the node knows it (pending).
    const { walletClient } = sandboxChainClients(anvil.rpcUrl);
    hash = await walletClient.writeContract({
      address: anvil.tokens.USDC,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [collection, parseUnits(payout.sender.amount as string, 6)],
      account: sender,
      chain: sandboxChain,
    });
    expect((await confirm(payout, hash)).body.status).toBe('awaiting_deposit');
    // The bound passes (PAYOUT_TX_HASH_WAIT_MINUTES): moved into the past rather than waited for.
    await harness.prisma.payoutChainClaim.update({
      where: { transactionId: payout.id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect(
      await until(
        async () =>
          (await harness.prisma.payoutChainClaim.findUnique({ where: { transactionId: payout.id } }))?.status ===
          'refused',
      ),
    ).toBe(true);
  } finally {
    await rpc('evm_setAutomine', [true]);
  }
  const refused = await confirm(payout, hash);
  expect([refused.status, refused.body.error?.code]).toEqual([422, 'tx_hash_confirmation_timeout']);
  expect(await statusOf(payout)).toBe('awaiting_deposit');
  await parties.partner.api.put(`/v1/transactions/${payout.id}`).send({ status: 'cancelled' });
}, 90_000);

it('rolls back on a reorganisation of the blocks a deposit was seen in, and never credits it', async () => {
  const hash = await send(collection, '7');
  expect(await until(async () => (await depositsOf(hash)).length === 1)).toBe(true);
  const seenIn = (await depositsOf(hash))[0]!;
  // The last two blocks replaced by others without the transfer.
  await rpc('anvil_reorg', [2, []]);
  const { publicClient } = sandboxChainClients(anvil.rpcUrl);
  const replaced = await publicClient.getBlock({ blockNumber: seenIn.blockNumber });
  expect(replaced.hash.toLowerCase()).not.toBe(seenIn.blockHash);
  expect(await until(async () => (await depositsOf(hash)).length === 0)).toBe(true);
  await mine(5);
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  expect(await depositsOf(hash)).toEqual([]);
  // What was credited before stays credited, once.
  const credited = (await chainDepositsOf(harness.prisma, 'ethereum')).filter((deposit) => deposit.amount === '25.5');
  expect(credited).toHaveLength(1);
}, 90_000);

it('credits a transfer the reorganisation mined again in another block once, under its new block', async () => {
  const hash = await send(collection, '8');
  expect(await until(async () => (await depositsOf(hash)).length === 1)).toBe(true);
  const seenIn = (await depositsOf(hash))[0]!;
  // The same signed transaction (same hash) in the first block of the new branch.
  const raw = await rpc('eth_getRawTransactionByHash', [hash]);
  await rpc('anvil_reorg', [3, [[raw, 0]]]);
  const { publicClient } = sandboxChainClients(anvil.rpcUrl);
  const receipt = await publicClient.getTransactionReceipt({ hash });
  expect(receipt.blockHash.toLowerCase()).not.toBe(seenIn.blockHash);
  await mine(3);
  expect(
    await until(async () => {
      const rows = await depositsOf(hash);
      return rows.length === 1 && rows[0]!.status === 'credited';
    }),
  ).toBe(true);
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  expect(await depositsOf(hash)).toEqual([
    expect.objectContaining({
      status: 'credited',
      blockNumber: receipt.blockNumber,
      blockHash: receipt.blockHash.toLowerCase(),
    }),
  ]);
}, 90_000);

it('reconciles a payout paid in on chain once its coin is swept to the off-ramp: seen arriving, the sweep subtracted', async () => {
  const payout = await ethereumPayout();
  const paid = await send(collection, payout.sender.amount as string);
  expect((await confirm(payout, paid)).status).toBe(200);
  await mine(3);
  expect(await settlementHandle(harness, payout.id).result()).toBe('completed');
  // The settlement's own check of the transfer does not wait for the watcher, which credits it on its next poll.
  expect(await watcherCaughtUp()).toBe(true);
  expect(await depositsOf(paid)).toEqual([expect.objectContaining({ status: 'credited' })]);
  // Swept once, by the collection's own key, to the off-ramp (the sandbox's, which is this file's outside sender).
  const sweep = await findEvmSend(harness.prisma, `${payout.id}:stablecoin_to_fiat:off_ramp`);
  expect(sweep).toMatchObject({ status: 'mined', kind: 'transfer', token: 'USDC' });
  const { publicClient } = sandboxChainClients(anvil.rpcUrl);
  const receipt = await publicClient.getTransactionReceipt({ hash: sweep!.txHash as Hash });
  const transfers = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs });
  expect(transfers.map((log) => log.args)).toEqual([
    { from: collection, to: sender.address, value: parseUnits(payout.stablecoin.amount as string, 6) },
  ]);

  // What the collection holds is every credited transfer to it less every sweep from it, and the check says so.
  await mine(3);
  expect(await watcherCaughtUp()).toBe(true);
  const credited = (await chainDepositsOf(harness.prisma, 'ethereum'))
    .filter((deposit) => deposit.toAddress === collection.toLowerCase() && deposit.currency === 'USDC')
    .reduce((sum, deposit) => sum + parseUnits(deposit.amount, 6), 0n);
  const sweeps = await harness.prisma.evmSend.findMany({
    where: { fromAddress: { equals: collection, mode: 'insensitive' }, kind: 'transfer', status: 'mined' },
  });
  expect(sweeps.length).toBeGreaterThanOrEqual(1);
  const swept = sweeps.reduce((sum, row) => sum + BigInt(row.amount!), 0n);
  const held = await publicClient.readContract({
    address: anvil.tokens.USDC,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [collection],
  });
  expect(held).toBe(credited - swept);
  expect(await chainDiscrepancies()).toEqual([]);
}, 90_000);

/** A reconciliation run limited to this file's partner (test files share the database); the chain check is service-wide. */
async function chainDiscrepancies(): Promise<Array<{ subjectId: string; detail: string }>> {
  const handle = await harness.env.client.workflow.start(reconciliationWorkflow, {
    workflowId: `reconciliation-test-${crypto.randomUUID()}`,
    taskQueue: harness.config.temporal.taskQueue,
    args: [{ partnerIds: [parties.partner.partnerId] }],
  });
  const summary = await handle.result();
  // The collection's USDC and USDT, and the service's sending addresses of the other test files (the database is
  // shared; their sends are on the run's other node, so only the collection is this file's to judge).
  expect((summary.checks.chain_balances as { checked: number }).checked).toBeGreaterThanOrEqual(2);
  const rows = await harness.prisma.reconciliationDiscrepancy.findMany({
    where: {
      reportId: summary.reportId,
      kind: 'chain_balance_mismatch',
      subjectId: { in: ['USDC', 'USDT'].map((token) => `ethereum:${token}:${collection.toLowerCase()}`) },
    },
  });
  return rows.map(({ subjectId, detail }) => ({ subjectId, detail }));
}

/** The watcher has read past the current head. */
async function watcherCaughtUp(): Promise<boolean> {
  const { publicClient } = sandboxChainClients(anvil.rpcUrl);
  const head = await publicClient.getBlockNumber({ cacheTime: 0 });
  return until(async () => ((await chainCursor(harness.prisma, 'ethereum')) ?? 0n) > head);
}

it('reconciles the books with balanceOf on chain, and names coin moved behind the service’s back', async () => {
  await mine(3);
  expect(await watcherCaughtUp()).toBe(true);
  expect(await chainDiscrepancies()).toEqual([]);

  // The collection address's own key sends 10 USDC away: nothing in the service did it.
  const { publicClient, walletClient } = sandboxChainClients(anvil.rpcUrl);
  const hash = await walletClient.writeContract({
    address: anvil.tokens.USDC,
    abi: erc20Abi,
    functionName: 'transfer',
    args: [sender.address, parseUnits('10', 6)],
    account: collectionKey,
    chain: sandboxChain,
  });
  await publicClient.waitForTransactionReceipt({ hash });
  await mine(3);
  expect(await watcherCaughtUp()).toBe(true);
  expect(await chainDiscrepancies()).toEqual([
    {
      subjectId: `ethereum:USDC:${collection.toLowerCase()}`,
      detail: expect.stringMatching(/balanceOf says .* \(-10\.000000 unexplained\)$/),
    },
  ]);
}, 120_000);

it('names the settlement’s update and refusal as the settlement workflow does', () => {
  expect(RECEIVE_DEPOSIT_UPDATE).toBe(receiveDepositUpdate.name);
  expect(NOT_AWAITING_DEPOSIT).toBe(settlementRefusals.notAwaitingDeposit);
});

it('fails a read of a node that cannot be reached within its bound (the watcher waits a poll and reads again)', async () => {
  const unreachable = new EvmChainWatch({
    chain: 'ethereum',
    rpcUrl: 'http://127.0.0.1:9',
    tokens: anvil.tokens,
    addresses: [collection],
    confirmations: 3,
  });
  const started = Date.now();
  await expect(unreachable.head()).rejects.toBeInstanceOf(ProviderUnavailableError);
  await expect(unreachable.transfers(0n, 10n)).rejects.toBeInstanceOf(ProviderUnavailableError);
  expect(Date.now() - started).toBeLessThan(11_000);
});

it('counts a reorganisation deeper than the confirmations that took a credited transfer away (the alert’s metric)', async () => {
  const deepReorgs = async () =>
    (await chainDeepReorgs.get()).values.find((value) => value.labels.chain === 'ethereum')?.value ?? 0;
  const before = await deepReorgs();
  const hash = await send(collection, '9');
  await mine(3);
  expect(
    await until(async () => {
      const rows = await depositsOf(hash);
      return rows.length === 1 && rows[0]!.status === 'credited';
    }),
  ).toBe(true);
  expect(await deepReorgs()).toBe(before);
  // Five blocks replaced, the transfer's among them and three above the credited depth: past what 3 confirmations allow.
  await rpc('anvil_reorg', [5, []]);
  await mine(1);
  expect(await until(async () => (await deepReorgs()) === before + 1)).toBe(true);
  // The credit stays booked (an operator's case, docs/operations.md): the row is kept, not credited twice.
  expect(await depositsOf(hash)).toEqual([expect.objectContaining({ status: 'credited' })]);
}, 90_000);
