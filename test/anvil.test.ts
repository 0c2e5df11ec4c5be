// The sandbox chain (issue 36, its first part): a real EVM node (Anvil) started by the project's scripts, the
// sandbox USDC and USDT (OpenZeppelin ERC-20, 6 decimals) at their fixed addresses, real transfers read back on chain,
// a snapshot reverted, and the committed bytecode equal to what the committed source and the pinned solc make.
import { erc20Abi, parseUnits } from 'viem';
import { compileSandboxStablecoin } from '../scripts/lib/contracts';
import net, { type AddressInfo } from 'node:net';
import {
  anvilAnswers,
  anvilArgs,
  anvilBinary,
  type LocalAnvil,
  revertChain,
  snapshotChain,
  startAnvil,
} from '../scripts/lib/anvil';
import { startChild } from '../scripts/lib/child-process';
import { startOnFreePort } from '../scripts/lib/ports';
import {
  mintSandboxStablecoin,
  sandboxAccount,
  sandboxChain,
  sandboxChainClients,
  sandboxStablecoinAbi,
  sandboxStablecoinBytecode,
  sandboxTokenAddresses,
  sandboxTreasury,
} from '../src/providers/evm/sandbox-chain';
import { verifyTokenTransfer } from '../src/providers/evm/token-transfers';

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

it('starts the node on another port when the one picked was taken before the node bound it', async () => {
  // Another process binds the port between the pick and the node's start: the node exits, a second port is tried.
  const squatter = net.createServer();
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
  const taken = (squatter.address() as AddressInfo).port;
  const tried: number[] = [];
  try {
    const node = await startOnFreePort(async (picked) => {
      const port = tried.length === 0 ? taken : picked;
      tried.push(port);
      return startChild({
        name: 'anvil',
        command: anvilBinary(),
        args: anvilArgs(port),
        answers: () => anvilAnswers(`http://127.0.0.1:${port}`),
        readyWithinMs: 15_000,
      });
    });
    await node.stop();
  } finally {
    squatter.close();
  }
  expect(tried).toHaveLength(2);
  expect(tried[0]).toBe(taken);
  expect(tried[1]).not.toBe(taken);
});

it('mints and transfers real tokens, read back with balanceOf, and a snapshot revert undoes them', async () => {
  const { publicClient, walletClient } = sandboxChainClients(anvil.rpcUrl);
  const treasury = sandboxTreasury();
  // A customer's address by the standard BIP-44 path: recoverable from the words with any wallet tool.
  const customer = sandboxAccount(1);
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
    chain: sandboxChain,
  });
  expect((await publicClient.waitForTransactionReceipt({ hash: minted })).status).toBe('success');
  const sent = await walletClient.writeContract({
    address: usdc,
    abi: erc20Abi,
    functionName: 'transfer',
    args: [customer.address, parseUnits('250.5', 6)],
    account: treasury,
    chain: sandboxChain,
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
      chain: sandboxChain,
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

describe('a token transfer someone claims to have made, read on chain (verifyTokenTransfer)', () => {
  const sender = sandboxAccount(2);
  const collection = sandboxAccount(3).address;
  const rpc = (method: string, params: unknown[] = []) =>
    fetch(anvil.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    }).then((response) => response.json());

  async function send(token: 'USDC' | 'USDT', to: `0x${string}`, amount: string, gas?: bigint) {
    const { walletClient } = sandboxChainClients(anvil.rpcUrl);
    return walletClient.writeContract({
      address: anvil.tokens[token],
      abi: erc20Abi,
      functionName: 'transfer',
      args: [to, parseUnits(amount, 6)],
      account: sender,
      chain: sandboxChain,
      ...(gas ? { gas } : {}),
    });
  }

  beforeAll(async () => {
    for (const token of ['USDC', 'USDT'] as const) {
      await mintSandboxStablecoin(anvil.rpcUrl, token, sender.address, parseUnits('1000', 6));
    }
  });

  const verify = (hash: `0x${string}`, overrides: Partial<Parameters<typeof verifyTokenTransfer>[1]> = {}) =>
    verifyTokenTransfer(sandboxChainClients(anvil.rpcUrl).publicClient, {
      hash,
      token: anvil.tokens.USDC,
      to: collection,
      minimum: parseUnits('100', 6),
      confirmations: 1,
      ...overrides,
    });

  it('confirms the expected token to the expected address for at least the amount, once deep enough', async () => {
    const hash = await send('USDC', collection, '100.25');
    await sandboxChainClients(anvil.rpcUrl).publicClient.waitForTransactionReceipt({ hash });
    expect(await verify(hash)).toMatchObject({ state: 'confirmed', amount: 100_250_000n, from: sender.address });
    expect(await verify(hash, { confirmations: 3 })).toEqual({ state: 'pending', confirmations: 1 });
    await rpc('anvil_mine', ['0x2']);
    expect(await verify(hash, { confirmations: 3 })).toMatchObject({ state: 'confirmed' });
  });

  it('names each way a hash is not the transfer owed: wrong token, address, amount; reverted; unknown; not mined', async () => {
    const { publicClient } = sandboxChainClients(anvil.rpcUrl);
    const mined = async (hash: `0x${string}`) => (await publicClient.waitForTransactionReceipt({ hash }), hash);
    expect(await verify(await mined(await send('USDT', collection, '100')))).toEqual({ state: 'wrong_token' });
    expect(await verify(await mined(await send('USDC', sender.address, '100')))).toEqual({ state: 'wrong_recipient' });
    expect(await verify(await mined(await send('USDC', collection, '99.99')))).toEqual({
      state: 'amount_too_low',
      amount: 99_990_000n,
    });
    // More than the sender holds, sent without a gas estimate (which would refuse it): mined, reverted.
    expect(await verify(await mined(await send('USDC', collection, '5000', 100_000n)))).toEqual({ state: 'failed' });
    expect(await verify(`0x${'ab'.repeat(32)}`)).toEqual({ state: 'not_found' });
    await rpc('evm_setAutomine', [false]);
    try {
      const waiting = await send('USDC', collection, '100');
      expect(await verify(waiting)).toEqual({ state: 'pending', confirmations: 0 });
      await rpc('evm_mine');
      expect(await verify(waiting)).toMatchObject({ state: 'confirmed' });
    } finally {
      await rpc('evm_setAutomine', [true]);
    }
  });
});
