// What a chain says of a token transfer someone claims to have made (a payout's `tx_hash`): read from the
// transaction's receipt and its ERC-20 `Transfer` logs on an EVM node, never taken on faith. Pure reading; the
// caller decides what each verdict means for the payout.
import {
  type Address,
  erc20Abi,
  type Hash,
  parseEventLogs,
  type PublicClient,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
} from 'viem';

export interface ExpectedTransfer {
  hash: Hash;
  /** The token contract the coin must be (the payout's stablecoin on this chain). */
  token: Address;
  /** Where it must have gone (the payout's deposit address). */
  to: Address;
  /** At least this much, in the token's smallest unit. */
  minimum: bigint;
  /** Blocks that must include it, its own counted (1: mined). */
  confirmations: number;
}

export type TransferVerdict =
  | { state: 'confirmed'; amount: bigint; from: Address; blockNumber: bigint; blockHash: Hash }
  /** Known to the node but not (yet) in enough blocks: ask again later. */
  | { state: 'pending'; confirmations: number }
  /** The node knows no such transaction. */
  | { state: 'not_found' }
  /** Mined, and reverted: it moved nothing. */
  | { state: 'failed' }
  /** Mined, and no transfer of the expected token in it. */
  | { state: 'wrong_token' }
  /** The token moved, to another address. */
  | { state: 'wrong_recipient' }
  /** The token went to the address, less than the minimum. */
  | { state: 'amount_too_low'; amount: bigint };

export async function verifyTokenTransfer(client: PublicClient, expected: ExpectedTransfer): Promise<TransferVerdict> {
  const receipt = await client.getTransactionReceipt({ hash: expected.hash }).catch((error: unknown) => {
    if (error instanceof TransactionReceiptNotFoundError) return null;
    throw error;
  });
  if (!receipt) {
    const pending = await client.getTransaction({ hash: expected.hash }).catch((error: unknown) => {
      if (error instanceof TransactionNotFoundError) return null;
      throw error;
    });
    return pending ? { state: 'pending', confirmations: 0 } : { state: 'not_found' };
  }
  if (receipt.status !== 'success') return { state: 'failed' };
  const transfers = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs }).filter(
    (log) => log.address.toLowerCase() === expected.token.toLowerCase(),
  );
  if (transfers.length === 0) return { state: 'wrong_token' };
  const toUs = transfers.filter((log) => log.args.to.toLowerCase() === expected.to.toLowerCase());
  if (toUs.length === 0) return { state: 'wrong_recipient' };
  // Several transfers to the address in one transaction add up (a batched send).
  const amount = toUs.reduce((total, log) => total + log.args.value, 0n);
  if (amount < expected.minimum) return { state: 'amount_too_low', amount };
  const latest = await client.getBlockNumber({ cacheTime: 0 });
  const confirmations = Number(latest - receipt.blockNumber + 1n);
  if (confirmations < expected.confirmations) return { state: 'pending', confirmations };
  return {
    state: 'confirmed',
    amount,
    from: toUs[0]!.args.from,
    blockNumber: receipt.blockNumber,
    blockHash: receipt.blockHash,
  };
}
