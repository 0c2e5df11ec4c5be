// Sends an EVM transaction exactly once per idempotency key (resource and step). The order is what makes it so:
// (1) the sender's nonce is reserved in PostgreSQL with the send's row (src/persistence/evm-sends.ts); (2) the
// transaction is signed at that nonce and stored with its hash; (3) only then broadcast. Whatever dies in between
// (a worker SIGKILLed after signing, or right after broadcasting), the next attempt finds the row: it looks the
// stored hashes up on the chain, broadcasts the stored transaction again when the node does not know it (dropped, or
// never sent), and replaces one stuck in the mempool with a higher fee at the same nonce. A send never takes a second
// nonce, so the chain can never execute it twice: one nonce, one transaction mined.
//
// Gas: the treasury (the HD seed's m/44'/60'/0'/0/0) holds ether and pays for its own sends; a send from any other
// address (a customer's wallet, a hot treasury address, the collection address) is preceded by a top-up from the
// treasury when the address holds less than the send's gas at its fee cap, itself an exactly-once send under
// `<key>:gas`. Hot addresses get enough for many sends at once, so the treasury's own nonce sequence is not in every
// settlement's path. A process checks one address's gas at a time (concurrent sends top it up once); two worker
// processes may each top it up, which costs ether, never coin.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  type Address,
  type Chain,
  fallback,
  type Hash,
  type Hex,
  http,
  keccak256,
  type PublicClient,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
} from 'viem';
import type { DatabaseClient } from '../../persistence/database';
import {
  countEvmBroadcast,
  type EvmSendKind,
  type EvmSendRow,
  findEvmSend,
  reserveEvmSend,
  settleEvmSend,
  signedEvmSendsBelow,
  storeSignedEvmSend,
  touchEvmReservation,
} from '../../persistence/evm-sends';
import type { Blockchain } from '../../domain/rails';
import { ProviderUnavailableError } from '../unavailable';
import { publicClient } from './public-client';
import type { Signer } from './signer';

export class EvmUnavailableError extends ProviderUnavailableError {
  override name = 'EvmUnavailableError';
}

export interface EvmChainConnection {
  /** The chain (the configuration entry's name, and the nonce store's `chain`). */
  name: Blockchain;
  chainId: number;
  client: PublicClient;
}

/** A public client on a chain's RPC URLs, tried in order; every call bounded. */
export function evmClient(chainId: number, rpcUrls: string[], timeoutMs = 5_000): PublicClient {
  const chain = {
    id: chainId,
    name: `evm-${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: rpcUrls } },
  } as const satisfies Chain;
  const transports = rpcUrls.map((url) => http(url, { timeout: timeoutMs, retryCount: 0 }));
  return publicClient({
    chain,
    transport: transports.length === 1 ? transports[0]! : fallback(transports, { retryCount: 0 }),
    // Polling for receipts: a block a second in dev, instant in tests.
    pollingInterval: 250,
  });
}

export interface EvmSendRequest {
  idempotencyKey: string;
  fromKeyReference: string;
  /** The recipient of ether, or the contract called. */
  to: Address;
  data?: Hex;
  value?: bigint;
  /** For the row (operators): who gets what, in the token's minor units or wei. */
  describe: { toAddress: string; token: string | null; amount: string; kind?: EvmSendKind };
  /** Drive only a send already reserved under the key, never reserve one (a lookup: "never sent" must stay so). */
  resumeOnly?: boolean;
}

export type EvmSendOutcome =
  | { state: 'mined'; txHash: Hash; blockNumber: bigint; succeeded: boolean }
  /** Broadcast (or stored), not mined within the wait: ask again with the same key. */
  | { state: 'pending'; txHash: Hash | null };

export interface EvmSenderOptions {
  prisma: DatabaseClient;
  signer: Signer;
  chain: EvmChainConnection;
  treasuryKeyReference: string;
  /** How long one call waits for the receipt before answering pending (bounded, whatever the chain does). */
  receiptWaitMs?: number;
  /** A replacement's fee cap over the stuck transaction's, in percent (nodes want at least +10%). */
  feeBumpPercent?: number;
  /** How long a transaction the node holds may stay unmined before it counts as stuck and is replaced. */
  stuckAfterMs?: number;
  /** Addresses that send often (the hot treasury addresses, the collection): topped up for many sends at once. */
  hotKeyReferences?: readonly string[];
  /** How long a reserved nonce may stay untouched by any attempt before the next send from the address takes it. */
  abandonedReservationAfterMs?: number;
}

/** A hot address's top-up: this many sends' gas at the fee cap of the moment. */
const HOT_TOP_UP_SENDS = 50n;
/** How long the node's fee suggestion is reused (about a block): two sends in that time ask once. */
const FEES_TTL_MS = 1_000;
/** A signed transaction this much older than now has no live attempt broadcasting it (for broadcastEarlier). */
const ORPHANED_AFTER_MS = 5_000;

const FALLBACK_GAS = 120_000n;

export class EvmSender {
  private readonly receiptWaitMs: number;
  private readonly feeBumpPercent: bigint;

  constructor(private readonly options: EvmSenderOptions) {
    this.receiptWaitMs = options.receiptWaitMs ?? 20_000;
    this.feeBumpPercent = BigInt(options.feeBumpPercent ?? 25);
    this.stuckAfterMs = options.stuckAfterMs ?? 60_000;
    this.abandonedReservationAfterMs = options.abandonedReservationAfterMs ?? 10 * 60_000;
  }

  private readonly stuckAfterMs: number;
  private readonly abandonedReservationAfterMs: number;
  /** One gas check at a time per address in this process: concurrent sends from a hot address top it up once. */
  private readonly gasChecks = new Map<string, Promise<void>>();
  private fees: { at: number; value: Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> } | null = null;
  /** Whether the node answers eth_sendRawTransactionSync (EIP-7966): the receipt with the broadcast, in one call. */
  private syncSend: boolean | null = null;

  private get client(): PublicClient {
    return this.options.chain.client;
  }

  /** Drives the send under the key as far as it goes within the receipt wait. Throws EvmUnavailableError (unknown). */
  async send(request: EvmSendRequest): Promise<EvmSendOutcome> {
    try {
      return await this.drive(request);
    } catch (error) {
      if (error instanceof ProviderUnavailableError) throw error;
      if (isRpcFailure(error)) throw new EvmUnavailableError(`${this.options.chain.name}: ${shortMessage(error)}`);
      throw error;
    }
  }

  /** Whether a nonce was ever reserved under the key (the database only: the node need not answer). */
  async started(idempotencyKey: string): Promise<boolean> {
    return (await findEvmSend(this.options.prisma, idempotencyKey)) !== null;
  }

  /** What became of the send under the key without sending anything new: null when no nonce was ever reserved. */
  async lookUp(idempotencyKey: string): Promise<EvmSendOutcome | null> {
    const row = await findEvmSend(this.options.prisma, idempotencyKey);
    if (!row) return null;
    try {
      return (await this.minedOutcome(row)) ?? { state: 'pending', txHash: row.txHash as Hash | null };
    } catch (error) {
      if (isRpcFailure(error)) throw new EvmUnavailableError(`${this.options.chain.name}: ${shortMessage(error)}`);
      throw error;
    }
  }

  private async drive(request: EvmSendRequest): Promise<EvmSendOutcome> {
    const { prisma, signer, chain } = this.options;
    const from = await signer.addressOf(request.fromKeyReference);
    let row = await findEvmSend(prisma, request.idempotencyKey);
    if (row && (row.status === 'mined' || row.status === 'failed')) return (await this.minedOutcome(row))!;
    let gas: bigint | null = null;
    // Reserved by this very call: fresh, so no other send can take it now, and there is nothing to touch.
    let reservedHere = false;
    if (!row) {
      if (request.resumeOnly) throw new EvmUnavailableError(`${request.idempotencyKey}: no send to resume`);
      // Estimated before the nonce is taken: a send the chain would refuse outright (no balance) takes none.
      gas = await this.estimateGas(from, request);
      await this.ensureGas(request, from, gas);
      const chainNonce = await this.client.getTransactionCount({ address: from, blockTag: 'pending' });
      row = await reserveEvmSend(
        prisma,
        {
          idempotencyKey: request.idempotencyKey,
          chain: chain.name,
          fromAddress: from,
          ...request.describe,
          kind: request.describe.kind ?? (request.describe.token === null ? 'gas' : 'transfer'),
        },
        chainNonce,
        this.abandonedReservationAfterMs,
      );
      reservedHere = true;
    }
    let justSigned = false;
    // Its nonce went to a later send while no attempt touched it (reserveEvmSend): the next attempt reserves anew.
    const takenOver = () => new EvmUnavailableError(`${request.idempotencyKey}: reservation taken over`);
    if (
      row.status === 'reserved' &&
      !reservedHere &&
      !(await touchEvmReservation(prisma, request.idempotencyKey, row.nonce))
    ) {
      // Signed meanwhile by another attempt (this one goes on from its row), or gone.
      const current = await findEvmSend(prisma, request.idempotencyKey);
      if (!current || current.status === 'reserved') throw takenOver();
      row = current;
    }
    if (row.status === 'reserved') {
      gas ??= await this.estimateGas(from, request).catch(() => FALLBACK_GAS);
      await this.ensureGas(request, from, gas);
      const signed = await this.sign(request, row.nonce, gas, null);
      justSigned = await storeSignedEvmSend(prisma, request.idempotencyKey, { ...signed, nonce: row.nonce }, null);
      const stored = await findEvmSend(prisma, request.idempotencyKey);
      // Not stored here nor by another attempt: what was signed here is dropped, never broadcast.
      if (!stored || stored.status === 'reserved') throw takenOver();
      row = stored;
      await holdForTest('after-sign', request.idempotencyKey);
    }
    // A transaction signed a moment ago by this very call cannot have been mined: no receipt to ask for.
    if (!justSigned) {
      const mined = await this.minedOutcome(row);
      if (mined) return mined;
    }
    await this.broadcastEarlier(row);
    const synced = await this.broadcast(row);
    if (synced?.state === 'mined') return synced;
    // Broadcast synchronously and not mined within its wait: asked once more, not waited for again.
    const receipt = synced ? await this.minedOutcome(row) : await this.waitForAny(row);
    if (receipt) return receipt;
    // Not mined within the wait. Unknown to the node: dropped; the next call broadcasts it again. Known, and signed
    // longer ago than stuckAfterMs: stuck at its fee; replaced now at the same nonce with a higher one (stored before
    // it is broadcast).
    const known = await this.client.getTransaction({ hash: row.txHash as Hash }).catch((error: unknown) => {
      if (error instanceof TransactionNotFoundError) return null;
      throw error;
    });
    if (!known || Date.now() - row.updatedAt.getTime() < this.stuckAfterMs)
      return { state: 'pending', txHash: row.txHash as Hash };
    const replacement = await this.sign(
      request,
      row.nonce,
      known.gas,
      ((row.maxFeePerGas ?? known.maxFeePerGas ?? 0n) * (100n + this.feeBumpPercent)) / 100n,
    );
    if (await storeSignedEvmSend(prisma, request.idempotencyKey, { ...replacement, nonce: row.nonce }, row.txHash)) {
      await this.broadcast((await findEvmSend(prisma, request.idempotencyKey))!);
    }
    return { state: 'pending', txHash: replacement.txHash as Hash };
  }

  private async estimateGas(from: Address, request: EvmSendRequest): Promise<bigint> {
    const estimate = await this.client.estimateGas({
      account: from,
      to: request.to,
      data: request.data,
      value: request.value,
    });
    // Room for state that changes between the estimate and the block: a sender's earlier transaction mined first may
    // empty a balance this one fills again (a storage slot from zero: about 20,000 more gas). Unused gas is not paid.
    return (estimate * 12n) / 10n + 25_000n;
  }

  /** A customer address pays its gas with ether the treasury sent it (exactly once, under `<key>:gas`). */
  private async ensureGas(request: EvmSendRequest, from: Address, gas: bigint): Promise<void> {
    const address = from.toLowerCase();
    const previous = this.gasChecks.get(address) ?? Promise.resolve();
    const check = previous.catch(() => undefined).then(() => this.ensureGasNow(request, from, gas));
    this.gasChecks.set(address, check);
    try {
      await check;
    } finally {
      if (this.gasChecks.get(address) === check) this.gasChecks.delete(address);
    }
  }

  private async ensureGasNow(request: EvmSendRequest, from: Address, gas: bigint): Promise<void> {
    const treasury = await this.options.signer.addressOf(this.options.treasuryKeyReference);
    if (from.toLowerCase() === treasury.toLowerCase()) return;
    const fees = await this.currentFees();
    const needed = gas * fees.maxFeePerGas;
    const topUpKey = `${request.idempotencyKey}:gas`;
    const toppedUp = await findEvmSend(this.options.prisma, topUpKey);
    if (!toppedUp && (await this.client.getBalance({ address: from })) >= needed) return;
    // Twice the need: a replacement at a higher fee still has its gas. A hot address: many sends' worth.
    const hot = this.options.hotKeyReferences?.includes(request.fromKeyReference) ?? false;
    const value = needed * (hot ? HOT_TOP_UP_SENDS : 2n);
    const outcome = await this.send({
      idempotencyKey: topUpKey,
      fromKeyReference: this.options.treasuryKeyReference,
      to: from,
      value,
      describe: { toAddress: from, token: null, amount: value.toString() },
    });
    if (outcome.state !== 'mined') throw new EvmUnavailableError(`gas top-up of ${from} not mined yet`);
    if (!outcome.succeeded) throw new Error(`gas top-up of ${from} failed on chain (${outcome.txHash})`);
  }

  private async sign(
    request: EvmSendRequest,
    nonce: number,
    gas: bigint,
    minimumFee: bigint | null,
  ): Promise<{ rawTransaction: Hex; txHash: Hash; maxFeePerGas: bigint }> {
    const fees = await this.currentFees();
    const maxFeePerGas = minimumFee && minimumFee > fees.maxFeePerGas ? minimumFee : fees.maxFeePerGas;
    const tip =
      minimumFee && minimumFee > fees.maxFeePerGas
        ? (fees.maxPriorityFeePerGas * (100n + this.feeBumpPercent)) / 100n
        : fees.maxPriorityFeePerGas;
    const rawTransaction = await this.options.signer.signTransaction(request.fromKeyReference, {
      type: 'eip1559',
      chainId: this.options.chain.chainId,
      nonce,
      to: request.to,
      data: request.data,
      value: request.value ?? 0n,
      gas,
      maxFeePerGas,
      maxPriorityFeePerGas: tip > maxFeePerGas ? maxFeePerGas : tip,
    });
    return { rawTransaction, txHash: keccak256(rawTransaction), maxFeePerGas };
  }

  /** The node's fee suggestion, asked at most once a second (a block's worth) for all sends of this process. */
  private currentFees(): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> {
    if (!this.fees || Date.now() - this.fees.at > FEES_TTL_MS) {
      const value = this.client.estimateFeesPerGas();
      this.fees = { at: Date.now(), value };
      // A failed ask is not kept: the next send asks again.
      value.catch(() => {
        if (this.fees?.value === value) this.fees = null;
      });
    }
    return this.fees.value;
  }

  /**
   * Broadcasts the row's transaction. Where the node answers eth_sendRawTransactionSync (EIP-7966; Anvil does), the
   * same call waits (bounded) for the block and answers the receipt: the send's outcome, settled here. Null: broadcast
   * only (or known already), the receipt to be asked for.
   */
  private async broadcast(row: EvmSendRow): Promise<EvmSendOutcome | null> {
    await countEvmBroadcast(this.options.prisma, row.idempotencyKey);
    const serializedTransaction = row.rawTransaction as Hex;
    try {
      if (this.syncSend !== false) {
        try {
          // No timeout parameter (Anvil refuses it): the receipt wait bounds it here, the client's timeout below.
          const call = this.client.request(
            { method: 'eth_sendRawTransactionSync', params: [serializedTransaction] } as never,
            { retryCount: 0 },
          );
          call.catch(() => undefined); // answered after the bound: whatever it says, the receipt is asked again
          let timer: NodeJS.Timeout | undefined;
          const receipt = await Promise.race([
            call,
            new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), this.receiptWaitMs))),
          ]).finally(() => clearTimeout(timer));
          this.syncSend = true;
          // On chain, the outcome not yet recorded: the point a worker killed after broadcast loses the answer at.
          await holdForTest('after-broadcast', row.idempotencyKey);
          if (receipt === null) return { state: 'pending', txHash: row.txHash as Hash };
          return await this.settledBy(row, receipt as { transactionHash: Hash; blockNumber: Hex; status: Hex });
        } catch (error) {
          // The node took the transaction and the block did not come within the request's timeout: broadcast, not
          // mined yet (were it lost, the next attempt broadcasts the stored bytes again).
          if ((error as { name?: string }).name === 'TimeoutError')
            return { state: 'pending', txHash: row.txHash as Hash };
          if (!isMethodUnsupported(error)) throw error;
          this.syncSend = false;
        }
      }
      await this.client.sendRawTransaction({ serializedTransaction });
      await holdForTest('after-broadcast', row.idempotencyKey);
      return null;
    } catch (error) {
      // Already in the node's pool, or its nonce used (by this very send, mined: the receipt says so next).
      if (/already known|nonce too low|replacement transaction underpriced|already imported/i.test(String(error)))
        return null;
      throw error;
    }
  }

  private async settledBy(
    row: EvmSendRow,
    receipt: { transactionHash: Hash; blockNumber: Hex; status: Hex },
  ): Promise<EvmSendOutcome> {
    const blockNumber = BigInt(receipt.blockNumber);
    const succeeded = BigInt(receipt.status) === 1n;
    await settleEvmSend(this.options.prisma, row.idempotencyKey, {
      txHash: receipt.transactionHash,
      blockNumber,
      succeeded,
    });
    return { state: 'mined', txHash: receipt.transactionHash, blockNumber, succeeded };
  }

  /**
   * The sender's earlier transactions, signed and stored but maybe never broadcast (their worker died in between):
   * this one cannot be mined before them, so their stored bytes go out first rather than waiting for their own
   * retries (a minute after a kill). The same bytes, so the same transaction: nothing new is sent.
   */
  private async broadcastEarlier(row: EvmSendRow): Promise<void> {
    // Only the orphaned: one signed moments ago is being broadcast by its own live attempt.
    const earlier = await signedEvmSendsBelow(
      this.options.prisma,
      row.chain,
      row.fromAddress,
      row.nonce,
      new Date(Date.now() - ORPHANED_AFTER_MS),
    );
    for (const raw of earlier) {
      // Known, mined, or replaced by a higher fee: nothing to fill. A node down fails this send's own broadcast next.
      await this.client.sendRawTransaction({ serializedTransaction: raw as Hex }).catch(() => undefined);
    }
  }

  /** The receipt of whichever of the send's transactions the chain mined, as the row's final state. */
  private async minedOutcome(row: EvmSendRow): Promise<EvmSendOutcome | null> {
    for (const hash of [row.txHash, ...row.replacedHashes]) {
      if (!hash) continue;
      const receipt = await this.client.getTransactionReceipt({ hash: hash as Hash }).catch((error: unknown) => {
        if (error instanceof TransactionReceiptNotFoundError) return null;
        throw error;
      });
      if (!receipt) continue;
      const succeeded = receipt.status === 'success';
      if (row.status !== 'mined' && row.status !== 'failed')
        await settleEvmSend(this.options.prisma, row.idempotencyKey, {
          txHash: hash,
          blockNumber: receipt.blockNumber,
          succeeded,
        });
      return { state: 'mined', txHash: hash as Hash, blockNumber: receipt.blockNumber, succeeded };
    }
    return null;
  }

  private async waitForAny(row: EvmSendRow): Promise<EvmSendOutcome | null> {
    const deadline = Date.now() + this.receiptWaitMs;
    for (;;) {
      const mined = await this.minedOutcome(row);
      if (mined || Date.now() >= deadline) return mined;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/**
 * A test hook for chaos (docs/chaos.md, scenario 14 chain-legs), off unless EVM_SEND_HOLD_DIR is set and never in production: when the
 * directory holds a file named after the point (`after-sign`: the signed transaction stored, not broadcast;
 * `after-broadcast`) whose text starts the send's key, the send writes `<point>.held` with its key there and waits
 * while the file stays (at most a minute), so a scenario kills the worker at exactly that point.
 */
async function holdForTest(point: 'after-sign' | 'after-broadcast', idempotencyKey: string): Promise<void> {
  const dir = process.env.EVM_SEND_HOLD_DIR;
  if (!dir || process.env.APP_ENV === 'production') return;
  const trigger = path.join(dir, point);
  const prefix = await readFile(trigger, 'utf8').catch(() => null);
  if (prefix === null || !prefix.trim() || !idempotencyKey.startsWith(prefix.trim())) return;
  await writeFile(`${trigger}.held`, idempotencyKey);
  const deadline = Date.now() + 60_000;
  while (existsSync(trigger) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
}

/** The node could not be asked (down, timed out, refused the connection): the outcome is unknown, try again. */
function isRpcFailure(error: unknown): boolean {
  const name = (error as { name?: string })?.name ?? '';
  return (
    /HttpRequestError|TimeoutError|RpcRequestError|UnknownRpcError|InternalRpcError|LimitExceededRpcError/.test(name) ||
    /fetch failed|ECONNREFUSED|ECONNRESET|socket hang up|took too long/i.test(String(error))
  );
}

/** The node does not have eth_sendRawTransactionSync (JSON-RPC -32601, or a provider's own words for it). */
function isMethodUnsupported(error: unknown): boolean {
  const code = (error as { code?: number }).code ?? (error as { cause?: { code?: number } }).cause?.code;
  return (
    code === -32601 ||
    (error as { name?: string }).name === 'MethodNotFoundRpcError' ||
    /method not found|not supported|does not exist|unknown method|not available/i.test(String(error))
  );
}

function shortMessage(error: unknown): string {
  return (error as { shortMessage?: string }).shortMessage ?? String((error as Error).message ?? error).slice(0, 200);
}
