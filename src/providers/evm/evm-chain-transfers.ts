// Wallet transfers on an EVM chain: an ERC-20 `transfer` from the wallet's address, signed for its key reference
// and sent exactly once per idempotency key (sender.ts). Other chains (Solana, a simulation) and sandbox requests
// that ask for a simulated failure (`simulate`) go to the fallback, which talks the same protocol.
import { createHash } from 'node:crypto';
import { type Address, encodeFunctionData, erc20Abi, getAddress } from 'viem';
import type { DatabaseClient } from '../../persistence/database';
import {
  type ChainTransferOutcome,
  type ChainTransferRequest,
  type ChainTransfers,
  ChainUnavailableError,
  type SettlementCoinMove,
} from '../chain-transfers';
import type { OperationLookup } from '../unavailable';
import { ProviderUnavailableError } from '../unavailable';
import { sandboxStablecoinAbi } from './sandbox-chain';
import { type EvmChainConnection, EvmSender, type EvmSendOutcome } from './sender';
import type { Signer } from './signer';
import { COLLECTION_KEY_REFERENCE, FEE_KEY_REFERENCE } from '../wallet-addresses';

export interface EvmChainTransfersOptions {
  prisma: DatabaseClient;
  signer: Signer;
  /** The chain name (as in wallet rows: `ethereum`) and its connection, tokens by currency. */
  chain: EvmChainConnection & { tokens: Record<string, Address> };
  treasuryKeyReference: string;
  /**
   * The hot treasury addresses' key references, the treasury's first (wallet-addresses.ts treasuryPoolKeyReferences):
   * each settlement's coin moves from one of them, chosen by its transaction. Absent: the treasury alone.
   */
  treasuryPool?: readonly string[];
  /** The collection address (configured, or the sandbox's); its coin is swept when the signer holds its key. */
  collectionAddress?: Address | null;
  /** Where leg 2's coin goes on this chain (the off-ramp's deposit address); null: not configured, legs 2 wait. */
  offRampAddress: Address | null;
  /**
   * Sandbox only: the simulated off-ramp's key reference, with which it sends a refunded payout's coin back (used only
   * while the signer derives `offRampAddress` from it). Absent (production): the treasury advances that coin.
   */
  offRampKeyReference?: string | null;
  /** Where a wallet-funded payout's fees go (configured); absent or null: the seed's fee address (FEE_KEY_REFERENCE). */
  feeAddress?: Address | null;
  fallback: ChainTransfers;
  /**
   * Sandbox only: the treasury mints what a wallet's address lacks before it sends (the sandbox's stablecoin is
   * credited by simulated pay-ins that do not deliver coin on chain yet). Never in production: the treasury of a
   * real token cannot mint.
   */
  sandboxFaucet: boolean;
  receiptWaitMs?: number;
}

export class EvmChainTransfers implements ChainTransfers {
  private readonly sender: EvmSender;

  constructor(private readonly options: EvmChainTransfersOptions) {
    this.sender = new EvmSender({
      prisma: options.prisma,
      signer: options.signer,
      chain: options.chain,
      treasuryKeyReference: options.treasuryKeyReference,
      receiptWaitMs: options.receiptWaitMs,
      hotKeyReferences: [
        ...(options.treasuryPool ?? []).filter((ref) => ref !== options.treasuryKeyReference),
        COLLECTION_KEY_REFERENCE,
      ],
    });
  }

  /**
   * The hot treasury address of a settlement: the same for every move of its transaction (the coin minted to it is
   * sent on from it) and for every retry (so a send after a kill finds its own sender and nonce), spread evenly.
   */
  private treasuryOf(move: SettlementCoinMove): string {
    const pool = this.options.treasuryPool ?? [];
    if (pool.length <= 1) return this.options.treasuryKeyReference;
    const key = move.treasuryKey ?? move.idempotencyKey.split(':')[0]!;
    return pool[createHash('sha256').update(key).digest().readUInt32BE(0) % pool.length]!;
  }

  private onChain(request: ChainTransferRequest): boolean {
    return request.chain === this.options.chain.name && request.simulate === null;
  }

  /** `resumeOnly`: drive only a send already reserved under the key (a lookup's, whose "never sent" must stay so). */
  async send(request: ChainTransferRequest, { resumeOnly = false } = {}): Promise<ChainTransferOutcome> {
    if (!this.onChain(request)) return this.options.fallback.send(request);
    const token = this.options.chain.tokens[request.amount.currency];
    if (!token) return { status: 'rejected', reason: `no ${request.amount.currency} contract on ${request.chain}` };
    const amount = request.amount.toMinorUnits();
    return this.guarded(request.chain, async () => {
      if (this.options.sandboxFaucet) await this.fundInSandbox(request, token, amount);
      return this.sender.send({
        idempotencyKey: request.idempotencyKey,
        fromKeyReference: request.fromKeyReference,
        to: token,
        data: encodeFunctionData({
          abi: erc20Abi,
          functionName: 'transfer',
          args: [getAddress(request.toAddress), amount],
        }),
        describe: { toAddress: request.toAddress, token: request.amount.currency, amount: amount.toString() },
        resumeOnly,
      });
    });
  }

  async moveSettlementCoin(move: SettlementCoinMove): Promise<ChainTransferOutcome | null> {
    if (move.chain !== this.options.chain.name) return this.options.fallback.moveSettlementCoin(move);
    const { treasuryKeyReference, signer } = this.options;
    const hot = this.treasuryOf(move);
    const treasury = await signer.addressOf(hot);
    const transfer = (fromKeyReference: string, toAddress: string) =>
      this.send({ ...move, fromAddress: '', fromKeyReference, toAddress, simulate: null });
    switch (move.kind) {
      case 'on_ramp_to_treasury': {
        // A real token's treasury cannot mint: in production the exchange sends the coin it sold. In the sandbox the
        // token's owner (the treasury) mints it to the settlement's hot address.
        if (!this.options.sandboxFaucet) return null;
        const token = this.options.chain.tokens[move.amount.currency];
        if (!token) return { status: 'rejected', reason: `no ${move.amount.currency} contract on ${move.chain}` };
        const amount = move.amount.toMinorUnits();
        return this.guarded(move.chain, () =>
          this.sender.send({
            idempotencyKey: move.idempotencyKey,
            fromKeyReference: treasuryKeyReference,
            to: token,
            data: encodeFunctionData({ abi: sandboxStablecoinAbi, functionName: 'mint', args: [treasury, amount] }),
            describe: { toAddress: treasury, token: move.amount.currency, amount: amount.toString(), kind: 'mint' },
          }),
        );
      }
      case 'treasury_to_wallet':
        return transfer(hot, move.toAddress!);
      case 'to_off_ramp':
        if (!this.options.offRampAddress)
          throw new ChainUnavailableError(`no off-ramp address is configured for ${move.chain}`);
        return transfer(move.fromKeyReference ?? hot, this.options.offRampAddress);
      case 'collection_to_off_ramp': {
        // Swept from the collection address with its own key (gas topped up by the treasury, like any other sender's).
        // A configured collection address the seed does not derive is not the service's to send from: it stays.
        const collection = this.options.collectionAddress;
        if (
          !collection ||
          (await signer.addressOf(COLLECTION_KEY_REFERENCE)).toLowerCase() !== collection.toLowerCase()
        )
          return null;
        if (!this.options.offRampAddress)
          throw new ChainUnavailableError(`no off-ramp address is configured for ${move.chain}`);
        return transfer(COLLECTION_KEY_REFERENCE, this.options.offRampAddress);
      }
      case 'wallet_fee':
        return transfer(move.fromKeyReference!, await this.feeAddress());
      case 'back_to_wallet': {
        const returns = move.returns!;
        // Once started, a return is driven on under its own key; before, only coin that really left comes back.
        if (!(await this.sender.started(move.idempotencyKey))) {
          const forward = await this.sender.lookUp(returns.key).catch((error: unknown) => {
            if (error instanceof ProviderUnavailableError) throw new ChainUnavailableError(error.message);
            throw error;
          });
          if (!forward) return null;
          if (forward.state === 'pending') throw new ChainUnavailableError(`${returns.key}: not mined yet`);
          if (!forward.succeeded) return null;
        }
        // Sent back from where it went when the service holds that address's key (the fee address; the sandbox's
        // off-ramp). Otherwise the settlement's hot treasury address advances it: the customer's refund does not wait
        // for the exchange, whose coin stays the service's balance there (docs/chain.md).
        const holder =
          returns.from === 'fee'
            ? await this.keyFor(FEE_KEY_REFERENCE, await this.feeAddress())
            : await this.keyFor(this.options.offRampKeyReference, this.options.offRampAddress);
        return transfer(holder ?? hot, move.toAddress!);
      }
    }
  }

  /** The service's fee address on this chain: configured, or the seed's. */
  async feeAddress(): Promise<Address> {
    return this.options.feeAddress ?? (await this.options.signer.addressOf(FEE_KEY_REFERENCE));
  }

  /** `reference` when the signer derives `address` from it (the service can send its coin); null otherwise. */
  private async keyFor(reference: string | null | undefined, address: string | null): Promise<string | null> {
    if (!reference || !address) return null;
    const derived = await this.options.signer.addressOf(reference);
    return derived.toLowerCase() === address.toLowerCase() ? reference : null;
  }

  async settlementCoinStarted(move: SettlementCoinMove): Promise<boolean> {
    if (move.chain !== this.options.chain.name) return this.options.fallback.settlementCoinStarted(move);
    return this.sender.started(move.idempotencyKey);
  }

  /** A send's outcome; the node unreachable or the send unmined is ChainUnavailableError, a sure revert `rejected`. */
  private async guarded(chain: string, send: () => Promise<EvmSendOutcome>): Promise<ChainTransferOutcome> {
    try {
      return outcomeOf(await send());
    } catch (error) {
      if (error instanceof ProviderUnavailableError) throw new ChainUnavailableError(error.message);
      // The chain would refuse the transfer outright (estimated to revert): no nonce was taken, nothing sent.
      if (/EstimateGasExecutionError|reverted/i.test(`${(error as Error).name} ${String(error)}`))
        return { status: 'rejected', reason: `${chain}: the transfer would revert (${shortReason(error)})` };
      throw error;
    }
  }

  async lookUp(request: ChainTransferRequest, round: number): Promise<OperationLookup<ChainTransferOutcome>> {
    if (!this.onChain(request)) return this.options.fallback.lookUp(request, round);
    const found = await this.sender.lookUp(request.idempotencyKey);
    if (!found) return { state: 'not_executed' };
    if (found.state === 'pending') {
      // Reserved or broadcast, not mined: drive it on (rebroadcast, replace) rather than leave a nonce gap.
      const driven = await this.send(request, { resumeOnly: true }).catch(() => null);
      if (driven) return { state: 'executed', outcome: driven };
      return { state: 'unknown' };
    }
    return { state: 'executed', outcome: outcomeOf(found) };
  }

  private async fundInSandbox(request: ChainTransferRequest, token: Address, amount: bigint): Promise<void> {
    const from = await this.options.signer.addressOf(request.fromKeyReference);
    const faucetKey = `${request.idempotencyKey}:faucet`;
    const { client } = this.options.chain;
    const balance = await client.readContract({
      address: token,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [from],
    });
    const already = await this.sender.lookUp(faucetKey);
    if (!already && balance >= amount) return;
    const shortfall = amount - balance > 0n ? amount - balance : 0n;
    const minted = await this.sender.send({
      idempotencyKey: faucetKey,
      fromKeyReference: this.options.treasuryKeyReference,
      to: token,
      data: encodeFunctionData({ abi: sandboxStablecoinAbi, functionName: 'mint', args: [from, shortfall] }),
      describe: { toAddress: from, token: request.amount.currency, amount: shortfall.toString(), kind: 'mint' },
    });
    if (minted.state !== 'mined') throw new ChainUnavailableError(`sandbox faucet for ${from} not mined yet`);
  }
}

function outcomeOf(outcome: EvmSendOutcome): ChainTransferOutcome {
  if (outcome.state === 'pending') throw new ChainUnavailableError(`broadcast, not mined yet (${outcome.txHash})`);
  if (!outcome.succeeded) return { status: 'rejected', reason: `reverted on chain (${outcome.txHash})` };
  return { status: 'sent', txHash: outcome.txHash, blockNumber: outcome.blockNumber.toString() };
}

function shortReason(error: unknown): string {
  const text = (error as { shortMessage?: string }).shortMessage ?? String((error as Error).message ?? error);
  return text.split('\n')[0]!.slice(0, 200);
}
