// The EVM sender's recovery paths on a node of its own (mining switched off and on at will): a transaction stuck in
// the mempool is replaced with a higher fee at the same nonce, a dropped one is broadcast again from the stored
// bytes, and either way the chain mines one transaction for the key. The node is this file's (not the run's shared
// one) because it stops mining; it sends from an address of its own (a key no other file uses, funded on this node
// only), so its stored nonces under `ethereum` are apart from those of the shared node's senders.
import { randomUUID } from 'node:crypto';
import { type Address, type Hash } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { type LocalAnvil, startAnvil } from '../scripts/lib/anvil';
import { type DatabaseClient } from '../src/persistence/database';
import { createPrismaClient, prismaOf } from '../src/persistence/internal/database';
import { findEvmSend, reserveEvmSend, storedNextNonce, storeSignedEvmSend } from '../src/persistence/evm-sends';
import { keySeeds } from '../src/providers';
import { EvmSender, evmClient } from '../src/providers/evm/sender';
import { SeedSigner } from '../src/providers/evm/signer';
import { loadConfig } from '../src/config';

let anvil: LocalAnvil;
let prisma: DatabaseClient;
let sender: EvmSender;
let signer: SeedSigner;
/** A BIP-44 account of this file's own: its address never sends on the shared node. */
const ownKeyReference = `bip44:m/44'/60'/${1_000 + Math.floor(Math.random() * 1_000_000)}'/0/0`;

const rpc = (method: string, params: unknown[] = []) =>
  fetch(anvil.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  }).then(async (response) => (await response.json()) as { result?: unknown; error?: unknown });

beforeAll(async () => {
  anvil = await startAnvil();
  prisma = createPrismaClient(process.env.DATABASE_URL!, { role: 'test', poolSize: 2 });
  const config = loadConfig({ ...process.env, APP_ENV: 'sandbox' });
  signer = new SeedSigner(keySeeds(config));
  const own = await signer.addressOf(ownKeyReference);
  expect(await rpc('anvil_setBalance', [own, `0x${(10n ** 21n).toString(16)}`])).not.toHaveProperty('error');
  sender = new EvmSender({
    prisma,
    signer,
    chain: { name: 'ethereum', chainId: anvil.chainId, client: evmClient(anvil.chainId, [anvil.rpcUrl]) },
    treasuryKeyReference: ownKeyReference,
    receiptWaitMs: 300,
    stuckAfterMs: 3_000,
  });
}, 60_000);
afterAll(async () => {
  await prismaOf(prisma)?.$disconnect();
  await anvil?.stop();
});

const payment = (to: Address) => ({
  idempotencyKey: `test:${randomUUID()}:send`,
  fromKeyReference: ownKeyReference,
  to,
  value: 12_345n,
  describe: { toAddress: to, token: null, amount: '12345' },
});

async function expectMinedOnce(key: string, to: Address): Promise<void> {
  const client = evmClient(anvil.chainId, [anvil.rpcUrl]);
  expect(await client.getBalance({ address: to })).toBe(12_345n);
  const row = (await findEvmSend(prisma, key))!;
  expect(row.status).toBe('mined');
  const own = await signer.addressOf(ownKeyReference);
  const chainNonce = await client.getTransactionCount({ address: own, blockTag: 'pending' });
  expect(chainNonce).toBe(row.nonce + 1);
  expect(await storedNextNonce(prisma, 'ethereum', own)).toBe(chainNonce);
}

it('replaces a transaction stuck in the mempool with a higher fee at the same nonce; one is mined', async () => {
  await rpc('evm_setAutomine', [false]);
  const to = privateKeyToAccount(generatePrivateKey()).address;
  const request = payment(to);
  const first = await sender.send(request);
  expect(first.state).toBe('pending');
  const stored = (await findEvmSend(prisma, request.idempotencyKey))!;
  expect(stored.txHash).toBe(first.txHash);
  // Not stuck yet: the same transaction, broadcast again.
  expect(await sender.send(request)).toEqual(first);
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const second = await sender.send(request);
  expect(second.state).toBe('pending');
  const replaced = (await findEvmSend(prisma, request.idempotencyKey))!;
  expect(replaced.nonce).toBe(stored.nonce);
  expect(replaced.replacedHashes).toEqual([stored.txHash]);
  expect(replaced.txHash).not.toBe(stored.txHash);
  expect(replaced.maxFeePerGas! > stored.maxFeePerGas!).toBe(true);
  await rpc('evm_mine');
  const done = await sender.send(request);
  expect(done).toMatchObject({ state: 'mined', succeeded: true, txHash: replaced.txHash as Hash });
  await expectMinedOnce(request.idempotencyKey, to);
  await rpc('evm_setAutomine', [true]);
});

it('broadcasts a dropped transaction again from the stored bytes', async () => {
  await rpc('evm_setAutomine', [false]);
  const to = privateKeyToAccount(generatePrivateKey()).address;
  const request = payment(to);
  const first = await sender.send(request);
  expect(first.state).toBe('pending');
  await rpc('anvil_dropTransaction', [first.txHash]);
  await rpc('evm_setAutomine', [true]);
  const done = await sender.send(request);
  expect(done).toMatchObject({ state: 'mined', succeeded: true, txHash: first.txHash });
  const row = (await findEvmSend(prisma, request.idempotencyKey))!;
  expect(row.broadcasts).toBe(2);
  expect(row.replacedHashes).toEqual([]);
  await expectMinedOnce(request.idempotencyKey, to);
});

it('gives a reservation left unsigned its nonce to the next send, so a later transaction is not held behind a gap', async () => {
  const client = evmClient(anvil.chainId, [anvil.rpcUrl]);
  const own = await signer.addressOf(ownKeyReference);
  const start = await client.getTransactionCount({ address: own, blockTag: 'pending' });
  // What an attempt leaves when its workflow is terminated between reserving a nonce and signing.
  const abandonedKey = `test:${randomUUID()}:send`;
  const abandonedTo = privateKeyToAccount(generatePrivateKey()).address;
  const abandonedSend = {
    idempotencyKey: abandonedKey,
    chain: 'ethereum' as const,
    fromAddress: own,
    toAddress: abandonedTo,
    token: null,
    kind: 'transfer' as const,
    amount: '12345',
  };
  const abandoned = await reserveEvmSend(prisma, abandonedSend, start, 60 * 60_000);
  expect(abandoned).toMatchObject({ nonce: start, status: 'reserved' });
  // Reserved a moment ago, so not abandoned: the next send takes the nonce after it and waits behind the gap.
  const behindTo = privateKeyToAccount(generatePrivateKey()).address;
  const behind = payment(behindTo);
  expect((await sender.send(behind)).state).toBe('pending');
  expect((await findEvmSend(prisma, behind.idempotencyKey))!.nonce).toBe(start + 1);
  expect(await client.getTransactionCount({ address: own })).toBe(start);

  // Unsigned long enough: the next send takes its nonce, fills the gap, and the one behind it is mined.
  await prismaOf(prisma)!.evmSend.update({
    where: { idempotencyKey: abandonedKey },
    data: { updatedAt: new Date(Date.now() - 60 * 60_000) },
  });
  const fillerTo = privateKeyToAccount(generatePrivateKey()).address;
  const filler = payment(fillerTo);
  expect(await sender.send(filler)).toMatchObject({ state: 'mined', succeeded: true });
  expect((await findEvmSend(prisma, filler.idempotencyKey))!.nonce).toBe(start);
  expect(await findEvmSend(prisma, abandonedKey)).toBeNull();
  expect(await sender.send(behind)).toMatchObject({ state: 'mined', succeeded: true });

  // A lookup drives only what is reserved: the abandoned operation is "never sent", and stays so.
  await expect(
    sender.send({ ...payment(abandonedTo), idempotencyKey: abandonedKey, resumeOnly: true }),
  ).rejects.toMatchObject({ name: 'EvmUnavailableError' });
  expect(await findEvmSend(prisma, abandonedKey)).toBeNull();
  // Driven again after all, it reserves a nonce of its own; an attempt that had signed at the old nonce cannot store
  // that signature on the new reservation.
  const chainNow = await client.getTransactionCount({ address: own, blockTag: 'pending' });
  const again = await reserveEvmSend(prisma, { ...abandonedSend, idempotencyKey: abandonedKey }, chainNow, 60 * 60_000);
  expect(again.nonce).toBe(start + 2);
  const stale = { rawTransaction: '0x01', txHash: `0x${'ab'.repeat(32)}`, maxFeePerGas: 1n, nonce: start };
  expect(await storeSignedEvmSend(prisma, abandonedKey, stale, null)).toBe(false);
  expect(await sender.send({ ...payment(abandonedTo), idempotencyKey: abandonedKey })).toMatchObject({
    state: 'mined',
    succeeded: true,
  });
  expect((await findEvmSend(prisma, abandonedKey))!.nonce).toBe(start + 2);
  for (const to of [behindTo, fillerTo, abandonedTo]) expect(await client.getBalance({ address: to })).toBe(12_345n);
  const chainNonce = await client.getTransactionCount({ address: own, blockTag: 'pending' });
  expect(chainNonce).toBe(start + 3);
  expect(await storedNextNonce(prisma, 'ethereum', own)).toBe(chainNonce);
});

it('answers unavailable, within its bound, when the node cannot be reached; nothing is reserved', async () => {
  const offline = new EvmSender({
    prisma,
    signer,
    chain: {
      name: 'ethereum',
      chainId: anvil.chainId,
      client: evmClient(anvil.chainId, ['http://127.0.0.1:9'], 1_000),
    },
    treasuryKeyReference: ownKeyReference,
  });
  const request = payment(privateKeyToAccount(generatePrivateKey()).address);
  const started = Date.now();
  await expect(offline.send(request)).rejects.toMatchObject({ name: 'EvmUnavailableError' });
  expect(Date.now() - started).toBeLessThan(5_000);
  expect(await findEvmSend(prisma, request.idempotencyKey)).toBeNull();
});

it('refuses an EVM_CHAINS entry whose name is not a blockchain the database knows', () => {
  const entry = { chain_id: 8453, rpc_urls: ['http://127.0.0.1:1'] };
  expect(() => loadConfig({ ...process.env, APP_ENV: 'sandbox', EVM_CHAINS: JSON.stringify({ base: entry }) })).toThrow(
    'Invalid configuration: EVM_CHAINS',
  );
  const ethereum = loadConfig({ ...process.env, APP_ENV: 'sandbox', EVM_CHAINS: JSON.stringify({ ethereum: entry }) });
  expect(ethereum.evmChains.ethereum).toMatchObject({ chainId: 8453 });
});
