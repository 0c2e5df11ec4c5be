// The chain watcher's tables (workflows/chain-watcher.ts, docs/chain.md "The chain watcher"): its cursor and the block
// hashes it saw per chain, the transfers to the service's addresses it read (chain_deposits: `seen`, then `credited`
// once deep enough), and payout hashes accepted before they were deep enough (payout_chain_claims).
import type { Currency } from '../domain/money';
import { randomUUID } from 'node:crypto';
import type { ChainDepositStatus, PayoutChainClaimStatus } from '../domain/chains';
import type { Blockchain } from '../domain/rails';
import {
  type DatabaseTransaction,
  type DatabaseClient,
  sqlOf,
  withDatabaseTransaction,
  prismaOf,
} from './internal/database';

export interface ScannedTransfer {
  txHash: string;
  logIndex: number;
  blockNumber: bigint;
  blockHash: string;
  currency: Currency;
  tokenAddress: string;
  from: string;
  to: string;
  amount: string;
}

export interface ChainDepositRow {
  id: string;
  chain: Blockchain;
  txHash: string;
  logIndex: number;
  blockNumber: bigint;
  blockHash: string;
  currency: Currency;
  toAddress: string;
  amount: string;
  status: ChainDepositStatus;
}

/** The next block the watcher reads on `chain`, or null before its first run. */
export async function chainCursor(db: DatabaseClient, chain: Blockchain): Promise<bigint | null> {
  const row = await prismaOf(db).chainCursor.findUnique({ where: { chain } });
  return row ? row.nextBlock : null;
}

/** The stored block hashes of `chain` from the highest down, at most `limit` (the reorganisation check walks them). */
export async function storedChainBlocks(
  db: DatabaseClient,
  chain: Blockchain,
  limit: number,
): Promise<Array<{ number: bigint; hash: string }>> {
  const rows = await prismaOf(db).chainBlock.findMany({ where: { chain }, orderBy: { number: 'desc' }, take: limit });
  return rows.map((row) => ({ number: row.number, hash: row.hash }));
}

/**
 * A range read: its transfers (each recorded once: a range read again after a crash or a rollback adds nothing twice),
 * the hashes of the blocks they are in and of the range's last block, and the cursor moved past it, together.
 */
export async function recordScannedRange(
  db: DatabaseClient,
  chain: Blockchain,
  range: { transfers: ScannedTransfer[]; blocks: Array<{ number: bigint; hash: string }>; next: bigint },
): Promise<number> {
  return withDatabaseTransaction(db, async (tx) => {
    let added = 0;
    if (range.transfers.length > 0) {
      const inserted = await sqlOf(tx)
        .insertInto('chainDeposits')
        .values(
          range.transfers.map((transfer) => ({
            id: randomUUID(),
            chain,
            txHash: transfer.txHash,
            logIndex: transfer.logIndex,
            blockNumber: transfer.blockNumber.toString(),
            blockHash: transfer.blockHash,
            currency: transfer.currency,
            tokenAddress: transfer.tokenAddress,
            fromAddress: transfer.from,
            toAddress: transfer.to,
            amount: transfer.amount,
            status: 'seen' as const,
          })),
        )
        .onConflict((conflict) => conflict.columns(['chain', 'txHash', 'logIndex']).doNothing())
        .returning('id')
        .execute();
      added = inserted.length;
    }
    for (const block of range.blocks) {
      await sqlOf(tx)
        .insertInto('chainBlocks')
        .values({ chain, number: block.number.toString(), hash: block.hash })
        .onConflict((conflict) => conflict.columns(['chain', 'number']).doUpdateSet({ hash: block.hash }))
        .execute();
    }
    await moveCursor(tx, chain, range.next);
    return added;
  });
}

async function moveCursor(tx: DatabaseTransaction, chain: Blockchain, next: bigint): Promise<void> {
  await sqlOf(tx)
    .insertInto('chainCursors')
    .values({ chain, nextBlock: next.toString(), updatedAt: new Date() })
    .onConflict((conflict) =>
      conflict.column('chain').doUpdateSet({ nextBlock: next.toString(), updatedAt: new Date() }),
    )
    .execute();
}

/**
 * A reorganisation: every block above `lastCommon` left the chain. Their hashes and the transfers seen in them (not
 * yet credited) are forgotten and the cursor goes back to the block after `lastCommon`, together. Credited transfers
 * are kept (a block deeper than the confirmation count is not expected to leave; the caller reports it).
 */
export async function rollBackChain(
  db: DatabaseClient,
  chain: Blockchain,
  lastCommon: bigint,
): Promise<{ forgotten: number; creditedAbove: ChainDepositRow[] }> {
  return withDatabaseTransaction(db, async (tx) => {
    await sqlOf(tx)
      .deleteFrom('chainBlocks')
      .where('chain', '=', chain)
      .where('number', '>', lastCommon.toString())
      .execute();
    const forgotten = await sqlOf(tx)
      .deleteFrom('chainDeposits')
      .where('chain', '=', chain)
      .where('status', '=', 'seen')
      .where('blockNumber', '>', lastCommon.toString())
      .executeTakeFirst();
    const creditedAbove = await sqlOf(tx)
      .selectFrom('chainDeposits')
      .selectAll()
      .where('chain', '=', chain)
      .where('status', '=', 'credited')
      .where('blockNumber', '>', lastCommon.toString())
      .execute();
    await moveCursor(tx, chain, lastCommon + 1n);
    return { forgotten: Number(forgotten.numDeletedRows), creditedAbove: creditedAbove.map(asDepositRow) };
  });
}

/** Transfers seen and not yet credited in blocks up to `deep`, oldest first, at most `limit`. */
export async function seenChainDeposits(
  db: DatabaseClient,
  chain: Blockchain,
  deep: bigint,
  limit: number,
): Promise<ChainDepositRow[]> {
  const rows = await sqlOf(db)
    .selectFrom('chainDeposits')
    .selectAll()
    .where('chain', '=', chain)
    .where('status', '=', 'seen')
    .where('blockNumber', '<=', deep.toString())
    .orderBy('blockNumber')
    .orderBy('logIndex')
    .limit(limit)
    .execute();
  return rows.map(asDepositRow);
}

/** Credits a seen transfer still in the block it was seen in; false when it was credited already (or is gone). */
export async function creditChainDeposit(db: DatabaseClient, id: string, blockHash: string): Promise<boolean> {
  const result = await sqlOf(db)
    .updateTable('chainDeposits')
    .set({ status: 'credited', creditedAt: new Date() })
    .where('id', '=', id)
    .where('status', '=', 'seen')
    .where('blockHash', '=', blockHash)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/** Forgets stored block hashes below `below`: too deep to be reorganised away (the most recent is always kept). */
export async function pruneChainBlocks(db: DatabaseClient, chain: Blockchain, below: bigint): Promise<void> {
  await prismaOf(db).chainBlock.deleteMany({ where: { chain, number: { lt: below } } });
}

/**
 * Forgets what the watcher read of `chain` (its cursor, block hashes and transfers; not the payouts' claims), so that
 * its next run reads the chain again from the start: for a node that was replaced by a fresh one (a test, chaos).
 */
export async function forgetChainReadings(db: DatabaseClient, chain: Blockchain): Promise<void> {
  // Its watcher is stopped meanwhile (the caller's part), so the three need not be one transaction.
  await prismaOf(db).chainDeposit.deleteMany({ where: { chain } });
  await prismaOf(db).chainBlock.deleteMany({ where: { chain } });
  await prismaOf(db).chainCursor.deleteMany({ where: { chain } });
}

/** The credited transfers of `chain` to `address` (the operator's and the tests' view). */
export async function chainDepositsOf(db: DatabaseClient, chain: Blockchain): Promise<ChainDepositRow[]> {
  const rows = await sqlOf(db)
    .selectFrom('chainDeposits')
    .selectAll()
    .where('chain', '=', chain)
    .orderBy('blockNumber')
    .orderBy('logIndex')
    .execute();
  return rows.map(asDepositRow);
}

function asDepositRow(row: {
  id: string;
  chain: Blockchain;
  txHash: string;
  logIndex: number;
  blockNumber: string;
  blockHash: string;
  currency: Currency;
  toAddress: string;
  amount: { toString(): string };
  status: 'seen' | 'credited';
}): ChainDepositRow {
  return {
    id: row.id,
    chain: row.chain,
    txHash: row.txHash,
    logIndex: row.logIndex,
    blockNumber: BigInt(row.blockNumber),
    blockHash: row.blockHash,
    currency: row.currency,
    toAddress: row.toAddress,
    amount: row.amount.toString(),
    status: row.status,
  };
}

// ---- payout hashes accepted before they were deep enough ----

export interface PayoutChainClaimRow {
  transactionId: string;
  chain: Blockchain;
  txHash: string;
  status: PayoutChainClaimStatus;
  refusal: string | null;
  expiresAt: Date;
}

/** The claim on a hash (any payout's), or null. */
export async function findPayoutChainClaim(
  db: DatabaseClient,
  chain: Blockchain,
  txHash: string,
): Promise<PayoutChainClaimRow | null> {
  return prismaOf(db).payoutChainClaim.findUnique({ where: { chain_txHash: { chain, txHash } } });
}

/**
 * Claims `txHash` for a payout until `expiresAt`; a payout's earlier refused claim is replaced. Returns the claim that
 * holds the hash: this one, or another payout's (the hash counts once).
 */
export async function claimPayoutTxHash(
  db: DatabaseClient,
  claim: { transactionId: string; chain: Blockchain; txHash: string; expiresAt: Date },
): Promise<PayoutChainClaimRow> {
  return withDatabaseTransaction(db, async (tx) => {
    const holder = await sqlOf(tx)
      .selectFrom('payoutChainClaims')
      .selectAll()
      .where('chain', '=', claim.chain)
      .where('txHash', '=', claim.txHash)
      .executeTakeFirst();
    if (holder) return holder;
    const own = await sqlOf(tx)
      .selectFrom('payoutChainClaims')
      .selectAll()
      .where('transactionId', '=', claim.transactionId)
      .forUpdate()
      .executeTakeFirst();
    // A payout waits on one hash at a time: a second pending one is the first (the caller refuses another).
    if (own?.status === 'pending') return own;
    await sqlOf(tx).deleteFrom('payoutChainClaims').where('transactionId', '=', claim.transactionId).execute();
    return sqlOf(tx)
      .insertInto('payoutChainClaims')
      .values({ ...claim, status: 'pending', updatedAt: new Date() })
      .onConflict((conflict) => conflict.columns(['chain', 'txHash']).doNothing())
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}

/** The pending claims of `chain`, oldest first, at most `limit`. */
export async function pendingPayoutChainClaims(
  db: DatabaseClient,
  chain: Blockchain,
  limit: number,
): Promise<PayoutChainClaimRow[]> {
  return prismaOf(db).payoutChainClaim.findMany({
    where: { chain, status: 'pending' },
    orderBy: { createdAt: 'asc' },
    take: limit,
  });
}

/** Closes a pending claim (settled, or refused with its code); false when it was closed already. */
export async function closePayoutChainClaim(
  db: DatabaseClient,
  transactionId: string,
  outcome: { status: 'settled' } | { status: 'refused'; refusal: string },
): Promise<boolean> {
  const result = await prismaOf(db).payoutChainClaim.updateMany({
    where: { transactionId, status: 'pending' },
    data: { status: outcome.status, refusal: outcome.status === 'refused' ? outcome.refusal : null },
  });
  return result.count === 1;
}

/** The claim of a payout, or null (the API shows a payout's waiting hash). */
export async function payoutChainClaimOf(
  db: DatabaseClient,
  transactionId: string,
): Promise<PayoutChainClaimRow | null> {
  return prismaOf(db).payoutChainClaim.findUnique({ where: { transactionId } });
}

// ---- the reconciliation's chain check ----

/**
 * What the service's books say each of its addresses on `chain` holds of each currency up to `block`: the transfers
 * the watcher read to it in blocks up to there (credited, or seen and deep enough to be credited by the next step).
 * Coin the service sends from these addresses is subtracted once its sends are recorded (issue 36 part A).
 */
export async function chainBookBalances(
  db: DatabaseClient,
  chain: Blockchain,
  block: bigint,
): Promise<Array<{ address: string; currency: Currency; amount: string }>> {
  const rows = await sqlOf(db)
    .selectFrom('chainDeposits')
    .select(['toAddress', 'currency', (eb) => eb.fn.sum<string>('amount').as('total')])
    .where('chain', '=', chain)
    .where('blockNumber', '<=', block.toString())
    .groupBy(['toAddress', 'currency'])
    .execute();
  return rows.map((row) => ({ address: row.toAddress, currency: row.currency, amount: String(row.total) }));
}
