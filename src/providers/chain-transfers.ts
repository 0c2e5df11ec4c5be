// The outside system that sends stablecoin on chain from a service-managed wallet (wallet transfers):
// it signs with the wallet's key (found by its key reference, never stored here) and broadcasts.
// Every request carries an idempotency key (`<transferId>:send`): asking twice sends once and answers
// the first outcome, which is what lets a retried or re-run activity call it again safely.
//
// Outcomes: `sent` with the transaction hash; `rejected` (the network refused for good: the transfer
// fails and the money returns to the wallet); or a thrown ChainUnavailableError, which says nothing
// about whether the transfer was broadcast: when the retries run out the workflow asks `lookUp` with
// the same key, and the hold returns only when the chain reports the send never happened.
import { createHash } from 'node:crypto';
import type { Blockchain } from '../domain/rails';
import type { Money } from '../domain/money';
import type { WalletTransferSimulation } from '../domain/wallet-transfers';
import type { DatabaseClient } from '../persistence/database';
import { findSandboxOperation, recordSandboxOperation } from '../persistence/sandbox-operations';
import { OperationLookup, ProviderUnavailableError, Unconnected } from './unavailable';

export interface ChainTransferRequest {
  /** `<transferId>:send`: the same key always names the same transfer. */
  idempotencyKey: string;
  chain: Blockchain;
  fromAddress: string;
  /** How the signer finds the source wallet's key (a derivation path); never key material. */
  fromKeyReference: string;
  toAddress: string;
  amount: Money;
  /** Sandbox only: the failure the transfer asked for; real networks ignore it. */
  simulate: WalletTransferSimulation | null;
}

export type ChainTransferOutcome =
  /** `blockNumber`: the block that holds it, on a real chain (decimal string); absent on a simulated one. */
  { status: 'sent'; txHash: string; blockNumber?: string } | { status: 'rejected'; reason: string };

/**
 * The coin of a settlement leg (issue 36), keyed `<transactionId>:<step>:<move>`:
 * - `on_ramp_to_treasury`: leg 1's stablecoin reaching the treasury (the sandbox's on-ramp mints it there; in
 *   production the exchange sends it, and nothing is asked of the service's keys: answered null);
 * - `treasury_to_wallet`: a pay-in's stablecoin delivered to the customer's wallet address;
 * - `to_off_ramp`: leg 2's stablecoin sent to the off-ramp's address (configuration per chain), from the treasury,
 *   or from the wallet a payout is debited from (`from`);
 * - `collection_to_off_ramp`: a payout paid in on chain: its coin swept from the collection address straight to the
 *   off-ramp's (null where the service holds no key for the configured collection address);
 * - `wallet_fee`: a payout debited from a wallet: its fees sent from the wallet's address (`fromKeyReference`) to the
 *   service's fee address, before its coin leaves for the off-ramp;
 * - `back_to_wallet`: a refunded wallet-funded payout: what the send under `returns.key` moved (to the off-ramp, or the
 *   fees) comes back to the wallet's address (`toAddress`); null when that send never moved coin (not sent, reverted).
 */
export interface SettlementCoinMove {
  idempotencyKey: string;
  chain: Blockchain;
  kind:
    | 'on_ramp_to_treasury'
    | 'treasury_to_wallet'
    | 'to_off_ramp'
    | 'collection_to_off_ramp'
    | 'wallet_fee'
    | 'back_to_wallet';
  amount: Money;
  /** treasury_to_wallet, back_to_wallet: the wallet's address. */
  toAddress?: string;
  /** back_to_wallet: the earlier move it undoes (its key), and where that move's coin went. */
  returns?: { key: string; from: 'off_ramp' | 'fee' };
  /** to_off_ramp and wallet_fee from a wallet: its key reference (never key material); the treasury otherwise. */
  fromKeyReference?: string;
  /** What picks the settlement's hot treasury address (its transaction's id); absent: the key's first part. */
  treasuryKey?: string;
}

export class ChainUnavailableError extends ProviderUnavailableError {
  override name = 'ChainUnavailableError';
}

export interface ChainTransfers {
  send(request: ChainTransferRequest): Promise<ChainTransferOutcome>;
  /**
   * What became of the send under `request.idempotencyKey`; `round` counts the operator's rechecks (the sandbox's
   * simulations use it). A thrown ChainUnavailableError means unknown as well.
   */
  lookUp(request: ChainTransferRequest, round: number): Promise<OperationLookup<ChainTransferOutcome>>;
  /**
   * Moves a settlement leg's coin, exactly once per key; null when nothing moves on chain (a simulated chain, or the
   * on-ramp's own send in production). Throws ChainUnavailableError while the outcome is unknown (not mined yet, the
   * node unreachable): asking again with the same key drives the same transaction on.
   */
  moveSettlementCoin(move: SettlementCoinMove): Promise<ChainTransferOutcome | null>;
  /** Whether a send was ever started under the key (reading only): a leg asked again must not be thought unmade. */
  settlementCoinStarted(move: SettlementCoinMove): Promise<boolean>;
}

/**
 * Sandbox: "sends" at once. The transaction hash derives from the idempotency key, and each broadcast is recorded in
 * sandbox_rail_operations (kind chain_send) under that key, so a repeated request finds exactly the first outcome,
 * as a real network keeps one transaction per key. `simulate`: network_rejected -> rejected; network_unavailable ->
 * unavailable on every attempt, before any broadcast (the lookup finds nothing, the transfer fails);
 * send_timeout_after_broadcast -> broadcast, then every answer lost (the lookup finds it sent);
 * send_outcome_unknown -> the same, and the lookup cannot tell until the operator's first recheck.
 */
export class SandboxChainTransfers implements ChainTransfers {
  constructor(private readonly prisma: DatabaseClient) {}

  async send(request: ChainTransferRequest): Promise<ChainTransferOutcome> {
    if (request.simulate === 'network_unavailable') {
      throw new ChainUnavailableError('sandbox: the network is unavailable (simulate: network_unavailable)');
    }
    if (request.simulate === 'network_rejected') {
      return { status: 'rejected', reason: 'sandbox: the network rejected the transfer (simulate: network_rejected)' };
    }
    await recordSandboxOperation(this.prisma, request.idempotencyKey, {
      kind: 'chain_send',
      currency: request.amount.currency,
      amount: request.amount.toString(),
      outcome: 'completed',
    });
    if (request.simulate === 'send_timeout_after_broadcast' || request.simulate === 'send_outcome_unknown') {
      throw new ChainUnavailableError(`sandbox: broadcast, the answer lost (simulate: ${request.simulate})`);
    }
    return { status: 'sent', txHash: sandboxTxHash(request.chain, request.idempotencyKey) };
  }

  /** Solana stays a simulation (docs): its legs move no coin anywhere, their postings are the books. */
  async moveSettlementCoin(): Promise<null> {
    return null;
  }
  async settlementCoinStarted(): Promise<boolean> {
    return false;
  }

  async lookUp(request: ChainTransferRequest, round: number): Promise<OperationLookup<ChainTransferOutcome>> {
    if (request.simulate === 'send_outcome_unknown' && round === 0) return { state: 'unknown' };
    if (request.simulate === 'network_rejected') {
      return { state: 'executed', outcome: await this.send(request) };
    }
    const row = await findSandboxOperation(this.prisma, request.idempotencyKey);
    if (!row) return { state: 'not_executed' };
    return {
      state: 'executed',
      outcome: { status: 'sent', txHash: sandboxTxHash(request.chain, request.idempotencyKey) },
    };
  }
}

/** A hash in the chain's format: 0x + 64 hex digits (ethereum), 64 hex digits (solana signature stand-in). */
function sandboxTxHash(chain: Blockchain, key: string): string {
  const digest = createHash('sha256').update(`sandbox-chain-transfer:${key}`).digest('hex');
  return chain === 'ethereum' ? `0x${digest}` : digest;
}

/** Production until a signer and a node are connected: every send is unavailable. */
export class UnconnectedChainTransfers implements ChainTransfers, Unconnected {
  readonly unconnected = 'no on-chain signer is connected (src/providers/chain-transfers.ts ChainTransfers)';

  async send(): Promise<never> {
    throw new ChainUnavailableError(this.unconnected);
  }
  async lookUp(): Promise<never> {
    throw new ChainUnavailableError(this.unconnected);
  }
  async moveSettlementCoin(): Promise<never> {
    throw new ChainUnavailableError(this.unconnected);
  }
  async settlementCoinStarted(): Promise<never> {
    throw new ChainUnavailableError(this.unconnected);
  }
}

/**
 * The chains production cannot serve (for the per-flow production refusal, src/providers/index.ts): Solana always
 * (a simulation only), ethereum until an EVM chain entry is configured (src/config.ts evmChains).
 */
export function chainsRefusedInProduction(config: {
  evmChains: Partial<Record<string, { offRampAddress: string | null }>>;
}): Blockchain[] {
  // Without an off-ramp address a settlement's coin has nowhere to go before the payout: its legs would wait forever.
  return config.evmChains.ethereum?.offRampAddress ? ['solana'] : ['ethereum', 'solana'];
}
