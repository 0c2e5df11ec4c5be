// The run's shared Anvil as the chain tests read it: its client, the sandbox USDC, and a stored send's mined move.
import { type Address, erc20Abi, type Hash, parseEventLogs } from 'viem';
import { findEvmSend } from '../../src/persistence/evm-sends';
import { sandboxTokenAddresses } from '../../src/providers/evm/sandbox-chain';
import { evmClient } from '../../src/providers/evm/sender';
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
