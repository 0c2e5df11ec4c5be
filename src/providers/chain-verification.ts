// Whether the stablecoin a partner says it sent for a payout (POST /v1/payout/confirm, `tx_hash`) really arrived:
// read on the chain's own node, never taken on the partner's word. Ethereum (any EVM chain: its node, token contracts,
// collection address and confirmation count are configuration) is checked by EvmTransferVerifier; a chain without a
// configured node cannot be checked (the sandbox then takes a well-formed hash, production refuses: see
// src/services/transactions/payout-confirmation.ts).
import { type Address, type Hash, http, parseUnits, type PublicClient } from 'viem';
import { decimalsOf, type Money } from '../domain/money';
import type { Blockchain } from '../domain/rails';
import { publicClient } from './evm/public-client';
import { verifyTokenTransfer, type TransferVerdict } from './evm/token-transfers';
import { ProviderUnavailableError } from './unavailable';

export interface StablecoinTransferCheck {
  chain: Blockchain;
  hash: string;
  /** What must have arrived at least (the payout's stablecoin amount). */
  minimum: Money;
}

export interface ChainTransferVerifier {
  /** The collection address of a chain whose transfers are checked; null when this chain's are not. */
  collectionAddress(chain: Blockchain): string | null;
  /** The chain's verdict; a node that cannot be reached throws ProviderUnavailableError. */
  verify(check: StablecoinTransferCheck): Promise<TransferVerdict>;
}

export interface EvmChainSettings {
  rpcUrl: string;
  tokens: { USDC: string; USDT: string };
  collectionAddress: string;
  confirmations: number;
}

export class EvmTransferVerifier implements ChainTransferVerifier {
  private readonly client: PublicClient;

  constructor(private readonly settings: EvmChainSettings) {
    // Bounded: an API request waits for the node at most this long, then answers 503.
    this.client = publicClient({
      transport: http(settings.rpcUrl, { timeout: 5_000, retryCount: 0 }),
    });
  }

  collectionAddress(chain: Blockchain): string | null {
    return chain === 'ethereum' ? this.settings.collectionAddress : null;
  }

  async verify(check: StablecoinTransferCheck): Promise<TransferVerdict> {
    if (check.chain !== 'ethereum') throw new ProviderUnavailableError(`${check.chain} transfers are not checked`);
    const currency = check.minimum.currency as keyof EvmChainSettings['tokens'];
    try {
      return await verifyTokenTransfer(this.client, {
        hash: check.hash as Hash,
        token: this.settings.tokens[currency] as Address,
        to: this.settings.collectionAddress as Address,
        minimum: parseUnits(check.minimum.toString(), decimalsOf(check.minimum.currency)),
        confirmations: this.settings.confirmations,
      });
    } catch (error) {
      throw new ProviderUnavailableError(`the ethereum node could not be asked: ${(error as Error).message}`);
    }
  }
}

/** No chain node configured: nothing is checked. */
export class UncheckedChains implements ChainTransferVerifier {
  collectionAddress(): null {
    return null;
  }

  async verify(check: StablecoinTransferCheck): Promise<never> {
    throw new ProviderUnavailableError(`no ${check.chain} node is configured to check transfers`);
  }
}

/**
 * What an accepted payout hash that is not (yet) confirmed comes to, as the error code a confirm with it answers from
 * then on; null while it may still confirm. Pending and unknown hashes wait (a dropped transaction may be broadcast
 * again) until their bound (`expired`); a mined transfer that moved the wrong coin is refused at once.
 */
export function claimRefusalOf(state: Exclude<TransferVerdict['state'], 'confirmed'>, expired: boolean): string | null {
  switch (state) {
    case 'pending':
    case 'not_found':
      return expired ? 'tx_hash_confirmation_timeout' : null;
    default:
      return `tx_hash_${state}`;
  }
}
