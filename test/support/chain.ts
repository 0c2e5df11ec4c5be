// The run's shared Anvil as the chain tests read it: its client, the sandbox USDC, a stored send's mined move, moves
// behind the service's back, and reconciliation's chain check.
import { randomUUID } from 'node:crypto';
import { type Address, createWalletClient, erc20Abi, type Hash, http, parseEventLogs } from 'viem';
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { findEvmSend } from '../../src/persistence/evm-sends';
import { keySeeds } from '../../src/providers';
import { bip44PrivateKey } from '../../src/providers/wallet-addresses';
import { sandboxChain, sandboxTokenAddresses } from '../../src/providers/evm/sandbox-chain';
import { evmClient } from '../../src/providers/evm/sender';
import { reconciliationWorkflow } from '../../workflows/reconciliation';
import type { Harness } from './harness';

export const chainClient = () => evmClient(31337, [process.env.TEST_CHAIN_RPC_URL!]);
export const sandboxUsdc = sandboxTokenAddresses().USDC;

export interface Move {
  key: string;
  txHash: Hash;
  block: bigint;
  from: Address;
  to: Address;
  value: bigint;
}

/** The send stored under `key`, mined, and what its receipt's USDC Transfer log says (one log: one move). */
export async function minedMove(harness: Harness, key: string): Promise<Move> {
  const send = await findEvmSend(harness.prisma, key);
  expect(send).toMatchObject({ status: 'mined', chain: 'ethereum', token: 'USDC' });
  const receipt = await chainClient().getTransactionReceipt({ hash: send!.txHash as Hash });
  expect(receipt.status).toBe('success');
  expect(receipt.blockNumber).toBe(send!.blockNumber);
  const logs = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs }).filter(
    (log) => log.address.toLowerCase() === sandboxUsdc.toLowerCase(),
  );
  expect(logs).toHaveLength(1);
  const { from, to, value } = logs[0]!.args;
  return { key, txHash: receipt.transactionHash, block: receipt.blockNumber, from, to, value };
}

/** One ether at `address` on the shared node, for the gas of a test's own sends (set, not added). */
export async function giveEther(address: Address): Promise<void> {
  const response = await fetch(process.env.TEST_CHAIN_RPC_URL!, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_setBalance', params: [address, '0xde0b6b3a7640000'] }),
  });
  expect(response.ok).toBe(true);
}

/** A wallet's key recovered from the harness's seed and its BIP-44 path, as any wallet tool would. */
export async function walletAccountOf(harness: Harness, walletId: string): Promise<PrivateKeyAccount> {
  const row = await harness.prisma.wallet.findUniqueOrThrow({ where: { id: walletId } });
  const key = bip44PrivateKey(keySeeds(harness.config).hdSeed, row.keyReference.slice('bip44:'.length));
  return privateKeyToAccount(`0x${Buffer.from(key).toString('hex')}`);
}

/** A USDC transfer the service did not make (behind its back), mined and successful. */
export async function sendUsdcAs(account: PrivateKeyAccount, to: Address, value: bigint): Promise<Hash> {
  const walletClient = createWalletClient({ chain: sandboxChain, transport: http(process.env.TEST_CHAIN_RPC_URL!) });
  const hash = await walletClient.writeContract({
    address: sandboxUsdc,
    abi: erc20Abi,
    functionName: 'transfer',
    args: [to, value],
    account,
    chain: sandboxChain,
  });
  expect((await chainClient().waitForTransactionReceipt({ hash })).status).toBe('success');
  return hash;
}

/** A reconciliation run limited to one partner (the chain check is service-wide): its chain_balances discrepancies. */
export async function chainDiscrepancies(
  harness: Harness,
  partnerId: string,
): Promise<Array<{ subjectId: string; detail: string }>> {
  const handle = await harness.env.client.workflow.start(reconciliationWorkflow, {
    workflowId: `reconciliation-test-${randomUUID()}`,
    taskQueue: harness.config.temporal.taskQueue,
    args: [{ partnerIds: [partnerId] }],
  });
  const summary = await handle.result();
  expect(summary.checks.chain_balances).toMatchObject({ found: expect.any(Number) });
  const rows = await harness.prisma.reconciliationDiscrepancy.findMany({
    where: { reportId: summary.reportId, kind: 'chain_balance_mismatch' },
  });
  return rows.map(({ subjectId, detail }) => ({ subjectId, detail }));
}
