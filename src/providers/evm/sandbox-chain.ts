// The sandbox chain: a local EVM node (Anvil) with the sandbox's USDC and USDT, OpenZeppelin ERC-20s with 6 decimals
// (contracts/SandboxStablecoin.sol, compiled by `npm run contracts:build` into artifacts/), deployed by the sandbox
// treasury as its first two transactions, so they live at the same addresses on every fresh node.
import {
  type Account,
  type Address,
  type Chain,
  createWalletClient,
  defineChain,
  getContractAddress,
  type Hash,
  http,
  type PublicClient,
  type Tokens,
  type Transport,
  type WalletClient,
} from 'viem';
import { type HDAccount, HDKey, hdKeyToAccount } from 'viem/accounts';
import { mnemonicToSeed } from '../wallet-addresses';
import { publicClient } from './public-client';
import artifact from './artifacts/SandboxStablecoin.json';

/**
 * The local node's chain (Anvil's default id). Defined here rather than taken from `viem/chains`, whose entry point
 * evaluates every chain viem knows in each process and test file that imports it.
 */
export const sandboxChain = defineChain({
  id: 31_337,
  name: 'Anvil (sandbox)',
  nativeCurrency: { decimals: 18, name: 'Ether', symbol: 'ETH' },
  rpcUrls: { default: { http: ['http://127.0.0.1:8545'] } },
});

/**
 * The sandbox's HD seed (BIP-39 words of the first 16 bytes of sha256("payments-api sandbox chain"); BIP-44 path
 * m/44'/60'/0'/0/i): public on purpose, it guards nothing but the local node's test coin. Anvil is started with it,
 * so the accounts it funds with ether are these, and any wallet tool recovers them from the words.
 */
export const SANDBOX_CHAIN_MNEMONIC =
  'session night polar hope update license monitor health online lonely supreme treat';

let sandboxSeed: Uint8Array | undefined;

/**
 * The words' BIP-39 seed, derived once per process (natively, node:crypto): its key stretching is slow by design. The
 * sandbox's HD seed for every key (src/providers/index.ts keySeeds) and for the accounts below.
 */
export function sandboxChainSeed(): Uint8Array {
  sandboxSeed ??= mnemonicToSeed(SANDBOX_CHAIN_MNEMONIC);
  return sandboxSeed;
}

const sandboxAccounts = new Map<number, HDAccount>();
let sandboxMasterKey: HDKey | undefined;

/** Account `index` of the sandbox seed (m/44'/60'/0'/0/index), derived once per process. */
export function sandboxAccount(index: number): HDAccount {
  let account = sandboxAccounts.get(index);
  if (!account) {
    sandboxMasterKey ??= HDKey.fromMasterSeed(sandboxChainSeed());
    account = hdKeyToAccount(sandboxMasterKey, { addressIndex: index });
    sandboxAccounts.set(index, account);
  }
  return account;
}

/** The sandbox treasury (account 0): deploys the tokens, owns them (only it mints), pays gas for sends. */
export const sandboxTreasury = () => sandboxAccount(0);

export const sandboxStablecoinAbi = artifact.abi as typeof artifact.abi;
export const sandboxStablecoinBytecode = artifact.bytecode as `0x${string}`;

export type SandboxToken = 'USDC' | 'USDT';

/** Where each token is: the treasury's contract creations with nonce 0 (USDC) and 1 (USDT). */
export function sandboxTokenAddresses(): Record<SandboxToken, Address> {
  const from = sandboxTreasury().address;
  return {
    USDC: getContractAddress({ from, nonce: 0n }),
    USDT: getContractAddress({ from, nonce: 1n }),
  };
}

export function sandboxChainClients(rpcUrl: string): { publicClient: PublicClient; walletClient: WalletClient } {
  const transport = http(rpcUrl, { timeout: 10_000, retryCount: 0 });
  return {
    publicClient: publicClient({ chain: sandboxChain, transport }),
    // Typed as the `WalletClient` returned, for the reason public-client.ts gives.
    walletClient: createWalletClient<Transport, Chain | undefined, Account | undefined, undefined, Tokens | undefined>({
      chain: sandboxChain,
      transport,
      account: sandboxTreasury(),
    }),
  };
}

/**
 * Deploys USDC then USDT from the treasury on a fresh node (nonces 0 and 1), or checks they are there already (a
 * node restarted from its state). Throws when the treasury has sent anything else first: the addresses would differ.
 */
export async function deploySandboxTokens(rpcUrl: string): Promise<Record<SandboxToken, Address>> {
  const { publicClient, walletClient } = sandboxChainClients(rpcUrl);
  const treasury = sandboxTreasury();
  const expected = sandboxTokenAddresses();
  const tokens: Array<[SandboxToken, string]> = [
    ['USDC', 'USD Coin (sandbox)'],
    ['USDT', 'Tether USD (sandbox)'],
  ];
  for (const [index, [symbol, name]] of tokens.entries()) {
    const code = await publicClient.getCode({ address: expected[symbol] });
    if (code && code !== '0x') continue;
    const nonce = await publicClient.getTransactionCount({ address: treasury.address });
    if (nonce !== index) throw new Error(`sandbox treasury nonce is ${nonce}; ${symbol} must be its creation ${index}`);
    const hash = await walletClient.deployContract({
      abi: sandboxStablecoinAbi,
      bytecode: sandboxStablecoinBytecode,
      args: [name, symbol, treasury.address],
      account: treasury,
      chain: sandboxChain,
    });
    const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: 30_000 });
    if (receipt.contractAddress?.toLowerCase() !== expected[symbol].toLowerCase()) {
      throw new Error(`${symbol} deployed at ${receipt.contractAddress}, expected ${expected[symbol]}`);
    }
  }
  return expected;
}

/** The sandbox's collection address on its chain (account 1): where payouts' stablecoin is sent. */
export const sandboxCollectionAddress = () => sandboxAccount(1).address;

/**
 * The sandbox off-ramp's deposit address on its chain (account 2): where leg 2 sends the stablecoin it sells. It
 * stands for the exchange's address, so it is outside the service's books (the reconciliation does not count it).
 */
export const sandboxOffRampAddress = () => sandboxAccount(2).address;

/** The treasury mints sandbox coin to `to` (the sandbox's faucet), once mined. */
export async function mintSandboxStablecoin(
  rpcUrl: string,
  token: SandboxToken,
  to: Address,
  amount: bigint,
): Promise<Hash> {
  const { publicClient, walletClient } = sandboxChainClients(rpcUrl);
  const hash = await walletClient.writeContract({
    address: sandboxTokenAddresses()[token],
    abi: sandboxStablecoinAbi,
    functionName: 'mint',
    args: [to, amount],
    account: sandboxTreasury(),
    chain: sandboxChain,
  });
  await publicClient.waitForTransactionReceipt({ hash, timeout: 30_000 });
  return hash;
}
