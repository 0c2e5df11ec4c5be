// The sandbox chain (issue 36, its first part): a real EVM node (Anvil) started by the project's scripts, the
// sandbox USDC and USDT (OpenZeppelin ERC-20, 6 decimals) at their fixed addresses, real transfers read back on chain,
// a snapshot reverted, and the committed bytecode equal to what the committed source and the pinned solc make.
import { erc20Abi, parseUnits } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { compileSandboxStablecoin } from '../scripts/lib/contracts';
import { type LocalAnvil, revertChain, snapshotChain, startAnvil } from '../scripts/lib/anvil';
import {
  SANDBOX_CHAIN_MNEMONIC,
  sandboxChainClients,
  sandboxStablecoinAbi,
  sandboxStablecoinBytecode,
  sandboxTokenAddresses,
  sandboxTreasury,
} from '../src/providers/evm/sandbox-chain';

let anvil: LocalAnvil;

beforeAll(async () => {
  anvil = await startAnvil();
}, 60_000);
afterAll(() => anvil?.stop());

it('deploys USDC and USDT with 6 decimals at the same fixed addresses on every fresh node', async () => {
  const { publicClient } = sandboxChainClients(anvil.rpcUrl);
  expect(anvil.tokens).toEqual(sandboxTokenAddresses());
  for (const [symbol, address] of Object.entries(anvil.tokens)) {
    const read = <T>(functionName: 'decimals' | 'symbol') =>
      publicClient.readContract({ address, abi: erc20Abi, functionName }) as Promise<T>;
    expect([await read<string>('symbol'), await read<number>('decimals')]).toEqual([symbol, 6]);
  }
  // The addresses are the treasury's creations 0 and 1: a second node gets the same ones.
  const second = await startAnvil();
  try {
    expect(second.tokens).toEqual(anvil.tokens);
  } finally {
    await second.stop();
  }
});

it('mints and transfers real tokens, read back with balanceOf, and a snapshot revert undoes them', async () => {
  const { publicClient, walletClient } = sandboxChainClients(anvil.rpcUrl);
  const treasury = sandboxTreasury();
  // A customer's address by the standard BIP-44 path: recoverable from the words with any wallet tool.
  const customer = mnemonicToAccount(SANDBOX_CHAIN_MNEMONIC, { addressIndex: 1 });
  const usdc = anvil.tokens.USDC;
  const balance = (address: `0x${string}`) =>
    publicClient.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [address] });
  const snapshot = await snapshotChain(anvil.rpcUrl);
  const minted = await walletClient.writeContract({
    address: usdc,
    abi: sandboxStablecoinAbi,
    functionName: 'mint',
    args: [treasury.address, parseUnits('1000', 6)],
    account: treasury,
    chain: foundry,
  });
  expect((await publicClient.waitForTransactionReceipt({ hash: minted })).status).toBe('success');
  const sent = await walletClient.writeContract({
    address: usdc,
    abi: erc20Abi,
    functionName: 'transfer',
    args: [customer.address, parseUnits('250.5', 6)],
    account: treasury,
    chain: foundry,
  });
  const receipt = await publicClient.waitForTransactionReceipt({ hash: sent });
  expect(receipt.status).toBe('success');
  expect(receipt.blockNumber).toBeGreaterThan(0n);
  expect([await balance(treasury.address), await balance(customer.address)]).toEqual([749_500_000n, 250_500_000n]);
  // Only the owner mints.
  await expect(
    walletClient.writeContract({
      address: usdc,
      abi: sandboxStablecoinAbi,
      functionName: 'mint',
      args: [customer.address, 1n],
      account: customer,
      chain: foundry,
    }),
  ).rejects.toThrow(/OwnableUnauthorizedAccount/);
  expect(await revertChain(anvil.rpcUrl, snapshot)).toBe(true);
  expect([await balance(treasury.address), await balance(customer.address)]).toEqual([0n, 0n]);
});

it('deploys the bytecode that the committed source and the pinned solc make', () => {
  const fresh = compileSandboxStablecoin();
  expect(fresh.bytecode).toBe(sandboxStablecoinBytecode);
  expect(fresh.abi).toEqual(sandboxStablecoinAbi);
});
