// What the chain watcher reads from an EVM node (workflows/chain-watcher.ts): the head and the block it counts as deep
// enough, the hash of a block by number (to notice a reorganisation), and the ERC-20 `Transfer` logs of the chain's
// token contracts to the service's addresses in a bounded block range. Pure reading; what a transfer means is the
// activity's business (activities/chain-watcher.ts).
import { type Address, erc20Abi, formatUnits, type Hash, http, type PublicClient } from 'viem';
import { publicClient } from './public-client';
import type { Blockchain } from '../../domain/rails';
import { ProviderUnavailableError } from '../unavailable';

export type StablecoinSymbol = 'USDC' | 'USDT';

export interface ObservedTransfer {
  txHash: string;
  logIndex: number;
  blockNumber: bigint;
  blockHash: string;
  currency: StablecoinSymbol;
  tokenAddress: string;
  from: string;
  to: string;
  /** A decimal string in the token's units (6 decimals). */
  amount: string;
}

export interface ChainHead {
  latest: bigint;
  /** The highest block whose transfers are credited: `confirmations` deep, or the node's `finalized` block. */
  deep: bigint;
}

export interface WatchedChain {
  readonly chain: Blockchain;
  /** The service's addresses whose incoming transfers are read. */
  readonly addresses: readonly string[];
  /**
   * The service's own sending addresses (the hot treasury addresses), lower case: the chain check compares each even
   * before it ever sent (coin sent to it behind the service's back is found).
   */
  sendingAddresses(): Promise<string[]>;
  /**
   * Addresses that are not the service's though it may send from them (the sandbox's off-ramp, whose returns it signs),
   * lower case: the chain check never counts them.
   */
  readonly outsideAddresses?: readonly string[];
  head(): Promise<ChainHead>;
  /** The hash the node has at `number` now, null when it has no such block (the chain got shorter). */
  blockHash(number: bigint): Promise<string | null>;
  transfers(fromBlock: bigint, toBlock: bigint): Promise<ObservedTransfer[]>;
  /**
   * `balanceOf` of each token at each of the watched addresses, or at `addresses` when given (the service's sending
   * and wallet addresses), at `blockNumber` (decimal strings; addresses in lower case).
   */
  balances(
    blockNumber: bigint,
    addresses?: readonly string[],
  ): Promise<Array<{ address: string; currency: StablecoinSymbol; amount: string }>>;
  /** The block of a mined transaction and whether it succeeded; null when the node has no receipt for it. */
  receipt(hash: string): Promise<{ blockNumber: bigint; succeeded: boolean } | null>;
}

export interface EvmWatchSettings {
  chain: Blockchain;
  rpcUrl: string;
  tokens: Record<StablecoinSymbol, string>;
  addresses: string[];
  /** A count of blocks (1: mined), or the node's `finalized` tag. */
  confirmations: number | 'finalized';
  /** The hot treasury addresses (derived from key references by the signer). */
  sendingAddresses?: () => Promise<string[]>;
  /** Not the service's (WatchedChain.outsideAddresses). */
  outsideAddresses?: string[];
}

const TOKEN_DECIMALS = 6;

export class EvmChainWatch implements WatchedChain {
  private readonly client: PublicClient;
  readonly chain: Blockchain;
  readonly addresses: readonly string[];
  readonly outsideAddresses: readonly string[];

  constructor(private readonly settings: EvmWatchSettings) {
    this.chain = settings.chain;
    this.addresses = settings.addresses.map((address) => address.toLowerCase());
    this.outsideAddresses = (settings.outsideAddresses ?? []).map((address) => address.toLowerCase());
    // Bounded: an activity waits for the node at most this long per call, then retries on its own policy.
    this.client = publicClient({
      transport: http(settings.rpcUrl, { timeout: 10_000, retryCount: 0 }),
    });
  }

  async sendingAddresses(): Promise<string[]> {
    return ((await this.settings.sendingAddresses?.()) ?? []).map((address) => address.toLowerCase());
  }

  async head(): Promise<ChainHead> {
    return this.asked(async () => {
      const latest = await this.client.getBlockNumber({ cacheTime: 0 });
      if (this.settings.confirmations === 'finalized') {
        const finalized = await this.client.getBlock({ blockTag: 'finalized' });
        return { latest, deep: finalized.number ?? -1n };
      }
      return { latest, deep: latest - BigInt(this.settings.confirmations) + 1n };
    });
  }

  async blockHash(number: bigint): Promise<string | null> {
    return this.asked(async () => {
      const block = await this.client.getBlock({ blockNumber: number }).catch((error: unknown) => {
        if ((error as Error).name === 'BlockNotFoundError') return null;
        throw error;
      });
      return block?.hash?.toLowerCase() ?? null;
    });
  }

  async transfers(fromBlock: bigint, toBlock: bigint): Promise<ObservedTransfer[]> {
    const symbols = new Map(
      Object.entries(this.settings.tokens).map(([symbol, address]) => [address.toLowerCase(), symbol]),
    );
    const logs = await this.asked(() =>
      this.client.getLogs({
        address: Object.values(this.settings.tokens) as Address[],
        event: erc20Abi.find((item) => item.type === 'event' && item.name === 'Transfer')!,
        args: { to: this.addresses as Address[] },
        fromBlock,
        toBlock,
        strict: true,
      }),
    );
    return logs
      .filter((log) => !log.removed && log.blockHash && log.transactionHash && log.logIndex !== null)
      .map((log) => ({
        txHash: log.transactionHash!.toLowerCase(),
        logIndex: log.logIndex!,
        blockNumber: log.blockNumber!,
        blockHash: log.blockHash!.toLowerCase(),
        currency: symbols.get(log.address.toLowerCase()) as StablecoinSymbol,
        tokenAddress: log.address.toLowerCase(),
        from: log.args.from.toLowerCase(),
        to: log.args.to.toLowerCase(),
        amount: formatUnits(log.args.value, TOKEN_DECIMALS),
      }));
  }

  async balances(
    blockNumber: bigint,
    only?: readonly string[],
  ): Promise<Array<{ address: string; currency: StablecoinSymbol; amount: string }>> {
    const addresses = [...new Set((only ?? this.addresses).map((address) => address.toLowerCase()))];
    const result: Array<{ address: string; currency: StablecoinSymbol; amount: string }> = [];
    for (const [currency, token] of Object.entries(this.settings.tokens) as Array<[StablecoinSymbol, string]>) {
      // A few calls in flight at a time: many wallets, one node.
      for (let start = 0; start < addresses.length; start += 16) {
        const batch = addresses.slice(start, start + 16);
        const balances = await Promise.all(
          batch.map((address) =>
            this.asked(() =>
              this.client.readContract({
                address: token as Address,
                abi: erc20Abi,
                functionName: 'balanceOf',
                args: [address as Address],
                blockNumber,
              }),
            ),
          ),
        );
        batch.forEach((address, index) =>
          result.push({ address, currency, amount: formatUnits(balances[index]!, TOKEN_DECIMALS) }),
        );
      }
    }
    return result;
  }

  async receipt(hash: string): Promise<{ blockNumber: bigint; succeeded: boolean } | null> {
    return this.asked(async () => {
      const receipt = await this.client.getTransactionReceipt({ hash: hash as Hash }).catch((error: unknown) => {
        if ((error as Error).name === 'TransactionReceiptNotFoundError') return null;
        throw error;
      });
      return receipt ? { blockNumber: receipt.blockNumber, succeeded: receipt.status === 'success' } : null;
    });
  }

  private async asked<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw new ProviderUnavailableError(`the ${this.chain} node could not be asked: ${(error as Error).message}`);
    }
  }
}
