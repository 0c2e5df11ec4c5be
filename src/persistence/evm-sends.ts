// EVM sends exactly once (src/providers/evm/sender.ts): the durable nonce of each (chain, sender) and one send per
// idempotency key, whose nonce is reserved first and whose signed transaction and hash are stored before any
// broadcast. A send keeps its nonce for good: a replacement (higher fee) is stored at the same nonce, the hashes it
// replaced kept, so that whichever of them the chain mined is found.
import { sql } from 'kysely';
import type { Blockchain } from '../domain/rails';
import { type DatabaseClient, type Database, sqlOf, withDatabaseTransaction } from './internal/database';

export type EvmSendStatus = 'reserved' | 'signed' | 'mined' | 'failed';

export interface EvmSendRow {
  idempotencyKey: string;
  chain: Blockchain;
  fromAddress: string;
  nonce: number;
  toAddress: string;
  token: string | null;
  amount: string;
  kind: EvmSendKind;
  txHash: string | null;
  rawTransaction: string | null;
  maxFeePerGas: bigint | null;
  replacedHashes: string[];
  status: EvmSendStatus;
  blockNumber: bigint | null;
  broadcasts: number;
  /** When the current transaction was signed (or the send settled). */
  updatedAt: Date;
}

export type EvmSendKind = 'transfer' | 'mint' | 'gas';

export interface NewEvmSend {
  idempotencyKey: string;
  chain: Blockchain;
  fromAddress: string;
  toAddress: string;
  token: string | null;
  /** What the send does with `amount` (the reconciliation's chain check counts transfers and mints). */
  kind: EvmSendKind;
  /** Minor units of the token, or wei for a gas top-up, as a decimal string. */
  amount: string;
}

type Row = Awaited<ReturnType<typeof selectRow>>;
const selectRow = (db: Database, key: string) =>
  sqlOf(db).selectFrom('evmSends').selectAll().where('idempotencyKey', '=', key).executeTakeFirst();

function rowOf(row: NonNullable<Row>): EvmSendRow {
  return {
    idempotencyKey: row.idempotencyKey,
    chain: row.chain,
    fromAddress: row.fromAddress,
    nonce: Number(row.nonce),
    toAddress: row.toAddress,
    token: row.token,
    amount: row.amount,
    kind: row.kind as EvmSendKind,
    txHash: row.txHash,
    rawTransaction: row.rawTransaction,
    maxFeePerGas: row.maxFeePerGas === null ? null : BigInt(row.maxFeePerGas),
    replacedHashes: row.replacedHashes ?? [],
    status: row.status as EvmSendStatus,
    blockNumber: row.blockNumber === null ? null : BigInt(row.blockNumber),
    broadcasts: row.broadcasts,
    updatedAt: new Date(row.updatedAt),
  };
}

export async function findEvmSend(db: Database, idempotencyKey: string): Promise<EvmSendRow | null> {
  const row = await selectRow(db, idempotencyKey);
  return row ? rowOf(row) : null;
}

/**
 * The send under the key, or a new one with the sender's next nonce: the stored next nonce, or the chain's pending
 * count when that is higher (something outside the service sent from the address), taken under the nonce row's lock
 * in the same transaction as the send's row, so two sends never share a nonce and a repeated key never takes a second.
 *
 * A reservation no attempt has touched for `abandonedAfterMs` (touchEvmReservation; its workflow terminated, or gave
 * up, between reserving and signing) would leave a gap that holds every later transaction from the address in the
 * node's queue: the new send takes its nonce, and its row goes. Nothing was signed under it, so nothing of it can be
 * on chain; an attempt of it still alive can no longer store a signature (storeSignedEvmSend wants its row, reserved,
 * at that nonce) and reserves anew.
 */
export async function reserveEvmSend(
  prisma: DatabaseClient,
  send: NewEvmSend,
  chainNonce: number,
  abandonedAfterMs: number,
): Promise<EvmSendRow> {
  return withDatabaseTransaction(prisma, async (tx) => {
    const existing = await selectRow(tx, send.idempotencyKey);
    if (existing) return rowOf(existing);
    const db = sqlOf(tx);
    await db
      .insertInto('evmNonces')
      .values({ chain: send.chain, address: send.fromAddress, nextNonce: '0' })
      .onConflict((conflict) => conflict.doNothing())
      .execute();
    const { nextNonce } = await db
      .selectFrom('evmNonces')
      .select('nextNonce')
      .where('chain', '=', send.chain)
      .where('address', '=', send.fromAddress)
      .forUpdate()
      .executeTakeFirstOrThrow();
    // A concurrent request with the same key waited on the lock above: it finds the send now.
    const raced = await selectRow(tx, send.idempotencyKey);
    if (raced) return rowOf(raced);
    const abandoned = await db
      .selectFrom('evmSends')
      .select(['idempotencyKey', 'nonce'])
      .where('chain', '=', send.chain)
      .where('fromAddress', '=', send.fromAddress)
      .where('status', '=', 'reserved')
      .where('updatedAt', '<', abandonedSince(abandonedAfterMs))
      .where('nonce', '>=', String(chainNonce))
      .orderBy('nonce')
      .limit(1)
      .executeTakeFirst();
    const takenOver =
      abandoned !== undefined && (await removeReservation(tx, abandoned.idempotencyKey, abandonedAfterMs));
    const nonce = takenOver ? Number(abandoned.nonce) : Math.max(Number(nextNonce), chainNonce);
    await db
      .insertInto('evmSends')
      .values({ ...send, nonce: String(nonce), status: 'reserved' })
      .execute();
    if (!takenOver) {
      await db
        .updateTable('evmNonces')
        .set({ nextNonce: String(nonce + 1), updatedAt: new Date() })
        .where('chain', '=', send.chain)
        .where('address', '=', send.fromAddress)
        .execute();
    }
    return rowOf((await selectRow(tx, send.idempotencyKey))!);
  });
}

/** The database's own clock, like the reservations' times: a worker's clock may differ. */
const abandonedSince = (abandonedAfterMs: number) =>
  sql<Date>`now() - make_interval(secs => ${abandonedAfterMs / 1000})`;

/**
 * Removes a reservation still abandoned; false when an attempt of it signed or touched it meanwhile (the delete
 * waited for that update).
 */
async function removeReservation(db: Database, idempotencyKey: string, abandonedAfterMs: number): Promise<boolean> {
  const removed = await sqlOf(db)
    .deleteFrom('evmSends')
    .where('idempotencyKey', '=', idempotencyKey)
    .where('status', '=', 'reserved')
    .where('updatedAt', '<', abandonedSince(abandonedAfterMs))
    .executeTakeFirst();
  return Number(removed.numDeletedRows) === 1;
}

/**
 * An attempt about to sign the send's reserved nonce says it is alive (reserveEvmSend takes only reservations no
 * attempt touched for a while). False when the reservation is gone (taken over) or no longer at that nonce.
 */
export async function touchEvmReservation(db: Database, idempotencyKey: string, nonce: number): Promise<boolean> {
  const touched = await sqlOf(db)
    .updateTable('evmSends')
    .set({ updatedAt: sql<Date>`now()` })
    .where('idempotencyKey', '=', idempotencyKey)
    .where('status', '=', 'reserved')
    .where('nonce', '=', String(nonce))
    .executeTakeFirst();
  return Number(touched.numUpdatedRows) === 1;
}

/**
 * Stores a signed transaction at the send's nonce before it is broadcast: the first (from reserved), or a
 * replacement of `replaces` (the hash stored now). False when another attempt stored one first: use the stored one.
 */
export async function storeSignedEvmSend(
  db: Database,
  idempotencyKey: string,
  signed: { rawTransaction: string; txHash: string; maxFeePerGas: bigint; nonce: number },
  replaces: string | null,
): Promise<boolean> {
  let update = sqlOf(db)
    .updateTable('evmSends')
    .set((eb) => ({
      rawTransaction: signed.rawTransaction,
      txHash: signed.txHash,
      maxFeePerGas: signed.maxFeePerGas.toString(),
      status: 'signed',
      updatedAt: new Date(),
      ...(replaces
        ? { replacedHashes: eb.fn<string[]>('array_append', [eb.ref('replacedHashes'), eb.val(replaces)]) }
        : {}),
    }))
    .where('idempotencyKey', '=', idempotencyKey)
    // Signed at the row's nonce: a reservation taken over and made again under the key has another.
    .where('nonce', '=', String(signed.nonce));
  update = replaces
    ? update.where('txHash', '=', replaces).where('status', '=', 'signed')
    : update.where('status', '=', 'reserved');
  const result = await update.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function countEvmBroadcast(db: Database, idempotencyKey: string): Promise<void> {
  await sqlOf(db)
    .updateTable('evmSends')
    .set((eb) => ({ broadcasts: eb('broadcasts', '+', 1) }))
    .where('idempotencyKey', '=', idempotencyKey)
    .execute();
}

/** The chain mined one of the send's transactions (`txHash`, maybe a replaced one): its final state. */
export async function settleEvmSend(
  db: Database,
  idempotencyKey: string,
  mined: { txHash: string; blockNumber: bigint; succeeded: boolean },
): Promise<void> {
  await sqlOf(db)
    .updateTable('evmSends')
    .set({
      txHash: mined.txHash,
      blockNumber: mined.blockNumber.toString(),
      status: mined.succeeded ? 'mined' : 'failed',
      updatedAt: new Date(),
    })
    .where('idempotencyKey', '=', idempotencyKey)
    .execute();
}

/** The stored next nonce of a sender (tests and operators compare it with the chain's count). */
export async function storedNextNonce(db: Database, chain: Blockchain, address: string): Promise<number | null> {
  const row = await sqlOf(db)
    .selectFrom('evmNonces')
    .select('nextNonce')
    .where('chain', '=', chain)
    .where('address', '=', address)
    .executeTakeFirst();
  return row ? Number(row.nextNonce) : null;
}

/** What the service's own mined token sends moved on a chain up to a block, by (kind, from, to, token). */
export interface EvmSendMovement {
  kind: EvmSendKind;
  /** Lower case. */
  fromAddress: string;
  toAddress: string;
  token: string;
  /** Minor units of the token. */
  units: bigint;
  /** Whether `toAddress` is a service-managed wallet's (coin that stays the service's to hold). */
  toServiceWallet: boolean;
}

/**
 * The service's token sends mined (and not reverted) on `chain` at or below `block`, summed by kind, sender,
 * recipient and token, for the reconciliation's chain check (activities/reconciliation.ts).
 */
export async function evmSendMovements(db: Database, chain: Blockchain, block: bigint): Promise<EvmSendMovement[]> {
  const rows = await sqlOf(db)
    .selectFrom('evmSends as s')
    .leftJoin('wallets as w', (join) =>
      join.on('w.chain', '=', chain).on(sql`lower(w.address)`, '=', sql`lower(s.to_address)`),
    )
    .select([
      's.kind',
      sql<string>`lower(s.from_address)`.as('fromAddress'),
      sql<string>`lower(s.to_address)`.as('toAddress'),
      sql<string>`s.token`.as('token'),
      sql<string>`sum(s.amount::numeric)::text`.as('units'),
      sql<boolean>`bool_or(w.id is not null)`.as('toServiceWallet'),
    ])
    .where('s.chain', '=', chain)
    .where('s.token', 'is not', null)
    .where('s.status', '=', 'mined')
    .where('s.blockNumber', '<=', block.toString())
    .groupBy(['s.kind', sql`lower(s.from_address)`, sql`lower(s.to_address)`, 's.token'])
    .execute();
  return rows.map((row) => ({
    kind: row.kind as EvmSendKind,
    fromAddress: row.fromAddress,
    toAddress: row.toAddress,
    token: row.token,
    units: BigInt(row.units),
    toServiceWallet: row.toServiceWallet,
  }));
}

/** Token sends signed (maybe broadcast, maybe mined) whose outcome the service has not recorded yet. */
export async function unsettledEvmSends(
  db: Database,
  chain: Blockchain,
): Promise<Array<{ idempotencyKey: string; hashes: string[] }>> {
  const rows = await sqlOf(db)
    .selectFrom('evmSends')
    .select(['idempotencyKey', 'txHash', 'replacedHashes'])
    .where('chain', '=', chain)
    .where('token', 'is not', null)
    .where('status', '=', 'signed')
    .execute();
  return rows.map((row) => ({
    idempotencyKey: row.idempotencyKey,
    hashes: [row.txHash, ...(row.replacedHashes ?? [])].filter((hash): hash is string => hash !== null),
  }));
}

/**
 * The signed transactions of a sender below `nonce` still unmined as far as the service knows (status signed): a send
 * behind them on the chain's nonce waits until they are broadcast, and their stored bytes may be broadcast by anyone.
 * Only those signed before `signedBefore` (older ones have no live attempt broadcasting them).
 */
export async function signedEvmSendsBelow(
  db: Database,
  chain: Blockchain,
  fromAddress: string,
  nonce: number,
  signedBefore: Date,
): Promise<string[]> {
  const rows = await sqlOf(db)
    .selectFrom('evmSends')
    .select('rawTransaction')
    .where('chain', '=', chain)
    .where('fromAddress', '=', fromAddress)
    .where('status', '=', 'signed')
    .where('nonce', '<', String(nonce))
    .where('updatedAt', '<', signedBefore)
    .orderBy('nonce')
    .limit(20)
    .execute();
  return rows.map((row) => row.rawTransaction).filter((raw): raw is string => raw !== null);
}
