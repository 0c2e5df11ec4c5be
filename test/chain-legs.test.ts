// The coin of every flow on the jest run's Anvil (issue 36): a fiat-to-fiat settlement's hidden legs (the sandbox
// on-ramp mints to the treasury, leg 2 sends it to the off-ramp's address), a pay-in delivering coin to the
// customer's wallet address, and a payout debited from that wallet sending from its address to the off-ramp. What a
// partner or operator can check: each move is one mined ERC-20 transaction with the amount the transaction says,
// its hash and block kept on the leg, and the wallet's balanceOf. The off-ramp's address is shared by every file on
// this node, so its moves are checked by their own receipts, not by its balance. A coin the chain refuses (a payout's,
// a pay-in's delivery, a settlement's mint) ends the transaction in error at once, and the operator's retry moves it
// once under the same key; the refusals are made on addresses of the test's own, never the shared ones'.
import crypto from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Address, erc20Abi, getAddress, type Hash } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { keySeeds, treasuryAddressCount } from '../src/providers';
import { SeedSigner } from '../src/providers/evm/signer';
import { treasuryPoolKeyReferences } from '../src/providers/wallet-addresses';
import { resolveErrorUpdate, settlementStateQuery } from '../workflows/settlement';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { workflowIds } from '../src/temporal/workflow-ids';
import { Decimal } from '../src/domain/money';
import { sandboxCollectionAddress, sandboxOffRampAddress, sandboxTreasury } from '../src/providers/evm/sandbox-chain';
import { findEvmSend, storedNextNonce } from '../src/persistence/evm-sends';
import { createWallet, type WalletBody } from './support/accounts';
import { Harness, startHarness } from './support/harness';
import {
  balanceOf,
  createPayin,
  createPayout,
  expectPaymentLedgerInvariants,
  payinQuoteBody,
  payoutQuoteBody,
} from './support/payments';
import {
  chainClient,
  chainDiscrepancies,
  giveEther,
  minedMove,
  type Move,
  sandboxUsdc,
  sendUsdcAs,
  walletAccountOf,
} from './support/chain';
import { sendUpdate } from './support/updates';
import { eventually } from './support/eventually';
import {
  createTransaction,
  deposit,
  eventTypesOf,
  expectTransactionInvariants,
  fiatToFiatQuoteBody,
  ledgerOf,
  type Parties,
  settlementHandle,
  setUpParties,
  transactionOf,
  waitForStatus,
} from './support/transactions';

let harness: Harness;
let parties: Parties;
let wallet: WalletBody;
const client = chainClient;
const usdc = sandboxUsdc;
const units = (amount: string) => BigInt(new Decimal(amount).times(1_000_000).toFixed(0));
const tokenBalance = (address: string) =>
  client().readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [address as Address] });

beforeAll(async () => {
  if (!process.env.TEST_CHAIN_RPC_URL) throw new Error('no chain node: run with npm test (global-setup starts it)');
  harness = await startHarness();
  parties = await setUpParties(harness);
  wallet = await createWallet(parties.partner.api, parties.customer.id, 'ethereum');
  parties = { ...parties, wallet };
}, 120_000);
afterAll(async () => {
  await harness?.teardown();
});

/** The keys of the sends stored for a transaction, sorted, gas top-ups aside. */
async function sentKeysOf(transactionId: string): Promise<string[]> {
  const sends = await harness.prisma.evmSend.findMany({ where: { idempotencyKey: { startsWith: transactionId } } });
  return sends
    .map((send) => send.idempotencyKey)
    .filter((key) => !key.endsWith(':gas'))
    .sort();
}

/** The hot treasury addresses of the harness's configuration (the treasury's first). */
async function hotAddresses(): Promise<Address[]> {
  const signer = new SeedSigner(keySeeds(harness.config));
  return Promise.all(
    treasuryPoolKeyReferences(treasuryAddressCount(harness.config)).map((ref) => signer.addressOf(ref)),
  );
}

async function legRow(transactionId: string, kind: string) {
  return harness.prisma.transactionLeg.findFirstOrThrow({ where: { transactionId, kind: kind as never } });
}

/** For the note: one settlement's on-chain transactions as Anvil holds them. */
function print(title: string, moves: Move[]): void {
  const lines = moves.map(
    (move) =>
      `  ${move.key.split(':').slice(1).join(':').padEnd(31)} block ${String(move.block).padStart(5)}  ${move.txHash}  ` +
      `${move.from} -> ${move.to}  ${new Decimal(move.value.toString()).div(1_000_000).toFixed(6)} USDC`,
  );
  process.stdout.write(`${title}\n${lines.join('\n')}\n`);
}

it('moves a fiat-to-fiat settlement coin on chain: minted to the treasury by the on-ramp, then sent to the off-ramp', async () => {
  const created = await createTransaction(
    parties,
    fiatToFiatQuoteBody({ stablecoin: { currency: 'USDC', payment_rail: 'ethereum' } }),
  );
  await deposit(parties, created);
  expect(await settlementHandle(harness, created.id).result()).toBe('completed');
  const amount = units(created.stablecoin.amount);
  const minted = await minedMove(harness, `${created.id}:fiat_to_stablecoin:on_ramp`);
  // Minted to one of the hot treasury addresses, the one this settlement's coin then leaves from.
  const treasury = minted.to;
  expect(await hotAddresses()).toContain(treasury);
  expect(minted).toMatchObject({ from: '0x0000000000000000000000000000000000000000', to: treasury, value: amount });
  const sent = await minedMove(harness, `${created.id}:stablecoin_to_fiat:off_ramp`);
  expect(sent).toMatchObject({ from: treasury, to: sandboxOffRampAddress(), value: amount });
  expect(sent.block).toBeGreaterThan(minted.block);
  // Each leg keeps its coin's transaction and block.
  expect(await legRow(created.id, 'fiat_to_stablecoin')).toMatchObject({
    status: 'completed',
    chainTxHash: minted.txHash,
    chainBlockNumber: minted.block,
  });
  expect(await legRow(created.id, 'stablecoin_to_fiat')).toMatchObject({
    status: 'completed',
    chainTxHash: sent.txHash,
    chainBlockNumber: sent.block,
  });
  // Nothing else was sent for it (no faucet: the treasury held what leg 1 minted).
  // (A hot address other than the treasury has its gas topped up by the treasury on its first send: `<key>:gas`.)
  expect(await sentKeysOf(created.id)).toEqual([minted.key, sent.key]);
  print(`settlement ${created.id} (${created.stablecoin.amount} USDC on ethereum, Anvil):`, [minted, sent]);
}, 120_000);

it('delivers a pay-in to the wallet address on chain, and sends a payout debited from that wallet to the off-ramp', async () => {
  const before = await tokenBalance(wallet.address);
  const payin = await createPayin(
    parties,
    payinQuoteBody({ receiver: { currency: 'USDC', payment_rail: 'ethereum' } }),
  );
  await deposit(parties, payin);
  expect(await settlementHandle(harness, payin.id).result()).toBe('completed');
  const credited = units(payin.stablecoin.amount);
  const minted = await minedMove(harness, `${payin.id}:fiat_to_stablecoin:on_ramp`);
  const treasury = minted.to;
  expect(await hotAddresses()).toContain(treasury);
  expect(minted).toMatchObject({ value: credited });
  const delivered = await minedMove(harness, `${payin.id}:fiat_to_stablecoin:delivery`);
  expect(delivered).toMatchObject({ from: treasury, to: getAddress(wallet.address), value: credited });
  expect(await legRow(payin.id, 'fiat_to_stablecoin')).toMatchObject({
    chainTxHash: delivered.txHash,
    chainBlockNumber: delivered.block,
  });
  // What the wallet shows is what its address holds.
  expect(await tokenBalance(wallet.address)).toBe(before + credited);
  expect(units(await balanceOf(parties.partner.api, wallet.id))).toBe(before + credited);

  const payout = await createPayout(
    parties,
    { wallet_id: wallet.id },
    payoutQuoteBody({ sender: { currency: 'USDC', payment_rail: 'ethereum', amount: '100.000000' } }),
  );
  expect(await settlementHandle(harness, payout.id).result()).toBe('completed');
  const sold = units(payout.stablecoin.amount);
  const sent = await minedMove(harness, `${payout.id}:stablecoin_to_fiat:off_ramp`);
  expect(sent).toMatchObject({ from: getAddress(wallet.address), to: sandboxOffRampAddress(), value: sold });
  // The wallet's address paid its gas with the treasury's top-up, and lost exactly the coin sold and its fees (sent
  // to the fee address first: test/chain-wallet-payouts.test.ts).
  expect(await findEvmSend(harness.prisma, `${payout.id}:stablecoin_to_fiat:fee:gas`)).toMatchObject({
    status: 'mined',
    kind: 'gas',
  });
  expect(await findEvmSend(harness.prisma, `${sent.key}:faucet`)).toBeNull();
  expect(await tokenBalance(wallet.address)).toBe(before + credited - units(payout.sender.amount));
  expect(units(await balanceOf(parties.partner.api, wallet.id))).toBe(before + credited - units(payout.sender.amount));
}, 120_000);

it('reconciles the service’s own sends with balanceOf, and names coin moved from a wallet behind its back', async () => {
  // After the flows above: the treasury (minted, delivered, sent to the off-ramp) and the wallet (delivered, sent)
  // hold on chain what the service's sends say.
  const ours = [...(await hotAddresses()), wallet.address].map((address) => address.toLowerCase());
  const mine = (rows: Array<{ subjectId: string }>) =>
    rows.filter((row) => ours.includes(row.subjectId.split(':')[2]!));
  expect(mine(await chainDiscrepancies(harness, parties.partner.partnerId))).toEqual([]);

  // The wallet's key, recovered from the seed as any wallet tool would, sends 1 USDC away: nothing in the service did.
  const account = await walletAccountOf(harness, wallet.id);
  expect(account.address).toBe(getAddress(wallet.address));
  await sendUsdcAs(account, sandboxOffRampAddress(), 1_000_000n);
  expect(mine(await chainDiscrepancies(harness, parties.partner.partnerId))).toEqual([
    {
      subjectId: `ethereum:USDC:${wallet.address.toLowerCase()}`,
      detail: expect.stringMatching(/balanceOf says .* \(-1\.000000 unexplained\)$/),
    },
  ]);
}, 120_000);

it('does not stall the treasury behind a send signed and never broadcast: the next send broadcasts its stored bytes', async () => {
  // The sender's test hook holds leg 1's mint after it was signed and stored, before its broadcast (as a worker
  // SIGKILLed there would leave it); a pay-in's mint (the treasury mints every settlement's coin, as the tokens'
  // owner) takes the next nonce meanwhile.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'evm-holds-'));
  process.env.EVM_SEND_HOLD_DIR = dir;
  try {
    const held = await createTransaction(
      parties,
      fiatToFiatQuoteBody({ stablecoin: { currency: 'USDC', payment_rail: 'ethereum' } }),
    );
    writeFileSync(path.join(dir, 'after-sign'), `${held.id}:fiat_to_stablecoin:on_ramp`);
    await deposit(parties, held);
    const deadline = Date.now() + 30_000;
    while (!existsSync(path.join(dir, 'after-sign.held')) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const stored = await findEvmSend(harness.prisma, `${held.id}:fiat_to_stablecoin:on_ramp`);
    expect(stored).toMatchObject({ status: 'signed' });
    await expect(client().getTransactionReceipt({ hash: stored!.txHash as Hash })).rejects.toThrow();

    const payin = await createPayin(
      parties,
      payinQuoteBody({ receiver: { currency: 'USDC', payment_rail: 'ethereum' } }),
    );
    await deposit(parties, payin);
    // Completes while the other send is still held: its stored transaction went out first, at its own nonce.
    expect(await settlementHandle(harness, payin.id).result()).toBe('completed');
    const receipt = await client().getTransactionReceipt({ hash: stored!.txHash as Hash });
    expect(receipt.status).toBe('success');
    const minted = await minedMove(harness, `${payin.id}:fiat_to_stablecoin:on_ramp`);
    // At the next nonce: mined after the held one (in its block or a later one).
    expect(minted.block).toBeGreaterThanOrEqual(receipt.blockNumber);
    expect((await findEvmSend(harness.prisma, minted.key))!.nonce).toBeGreaterThan(stored!.nonce);
    rmSync(path.join(dir, 'after-sign'));
    expect(await settlementHandle(harness, held.id).result()).toBe('completed');
    expect(await findEvmSend(harness.prisma, `${held.id}:fiat_to_stablecoin:on_ramp`)).toMatchObject({
      status: 'mined',
      nonce: stored!.nonce,
      txHash: stored!.txHash,
    });
  } finally {
    delete process.env.EVM_SEND_HOLD_DIR;
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);

it('spreads settlements over the hot treasury addresses, each with its own nonce sequence and gas from the treasury', async () => {
  const hot = await hotAddresses();
  expect(hot.length).toBeGreaterThan(1);
  const created = await Promise.all(
    Array.from({ length: 6 }, () =>
      createTransaction(parties, fiatToFiatQuoteBody({ stablecoin: { currency: 'USDC', payment_rail: 'ethereum' } })),
    ),
  );
  await Promise.all(created.map((transaction) => deposit(parties, transaction)));
  for (const transaction of created) expect(await settlementHandle(harness, transaction.id).result()).toBe('completed');
  const senders = new Set<string>();
  for (const transaction of created) {
    const minted = await minedMove(harness, `${transaction.id}:fiat_to_stablecoin:on_ramp`);
    const sent = await minedMove(harness, `${transaction.id}:stablecoin_to_fiat:off_ramp`);
    // The coin leaves from the hot address it was minted to.
    expect(sent.from).toBe(minted.to);
    expect(hot).toContain(sent.from);
    senders.add(sent.from);
  }
  // Six settlements over four addresses all on one: about one run in a thousand.
  expect(senders.size).toBeGreaterThan(1);
  const treasury = sandboxTreasury().address;
  for (const address of senders) {
    // Each address's stored next nonce is the chain's: nothing sent twice, no nonce skipped. Other files send from
    // the same addresses on the shared node: compared once none of theirs is between its reservation and broadcast.
    const [stored, chainNonce] = await eventually(
      async () => [
        await storedNextNonce(harness.prisma, 'ethereum', address),
        await client().getTransactionCount({ address: address as Address, blockTag: 'pending' }),
      ],
      ([next, onChain]) => next === onChain,
    );
    expect(stored).toBe(chainNonce);
    if (address === treasury) continue;
    // A hot address beyond Anvil's funded accounts sends with ether the treasury topped it up with, once for many sends.
    // Other test files settle through the same hot addresses on the shared chain: count the top-ups of this test's
    // settlements, and every top-up of the address from the treasury.
    const topUps = await harness.prisma.evmSend.findMany({
      where: { kind: 'gas', toAddress: address, status: 'mined' },
    });
    expect(topUps.length).toBeGreaterThan(0);
    for (const topUp of topUps) expect(topUp.fromAddress).toBe(treasury);
    // One top-up is many sends' gas, and concurrent sends from one address top it up once: at most one is this test's.
    const ours = topUps.filter((topUp) =>
      created.some((transaction) => topUp.idempotencyKey.startsWith(transaction.id)),
    );
    expect(ours.length).toBeLessThanOrEqual(1);
  }
}, 180_000);

// The collection's gas comes from the treasury as a hot address's does (the test above); its ether is not taken away
// here, since other test files sweep through the same collection address on the shared chain meanwhile.
it('sweeps a payout paid in on chain from the collection address to the off-ramp, once', async () => {
  const collection = sandboxCollectionAddress();
  const payout = await createPayout(
    parties,
    { wallet_id: undefined },
    payoutQuoteBody({ sender: { currency: 'USDC', payment_rail: 'ethereum', amount: '100.000000' } }),
  );
  await deposit(parties, payout);
  expect(await settlementHandle(harness, payout.id).result()).toBe('completed');
  const sold = units(payout.stablecoin.amount);
  const swept = await minedMove(harness, `${payout.id}:stablecoin_to_fiat:off_ramp`);
  expect(swept).toMatchObject({ from: collection, to: sandboxOffRampAddress(), value: sold });
  expect(await legRow(payout.id, 'stablecoin_to_fiat')).toMatchObject({
    chainTxHash: swept.txHash,
    chainBlockNumber: swept.block,
  });
  // Swept once: one send under the key, one Transfer from the collection in its transaction.
  expect(
    await harness.prisma.evmSend.count({
      where: { idempotencyKey: { startsWith: payout.id }, fromAddress: collection, kind: 'transfer' },
    }),
  ).toBe(1);
  // The ledger's postings keep their meaning: the payout's references as before the sweep.
  expect((await ledgerOf(harness, payout.id)).references).toEqual([
    'deposit',
    'funding',
    'stablecoin_to_fiat',
    'payout',
  ]);
}, 120_000);

it('ends a payout whose coin the chain refuses in error, and the operator’s retry sends it once under the same key', async () => {
  // A wallet of its own, funded on chain by a pay-in.
  const own = await createWallet(parties.partner.api, parties.customer.id, 'ethereum');
  const mine = { ...parties, wallet: own };
  const payin = await createPayin(mine, payinQuoteBody({ receiver: { currency: 'USDC', payment_rail: 'ethereum' } }));
  await deposit(mine, payin);
  expect(await settlementHandle(harness, payin.id).result()).toBe('completed');
  const held = await tokenBalance(own.address);
  expect(held).toBe(units(payin.stablecoin.amount));

  // Behind the service's back, the wallet's recovered key sends all its coin to an address of the test's own.
  const walletAccount = await walletAccountOf(harness, own.id);
  expect(walletAccount.address).toBe(getAddress(own.address));
  const aside = privateKeyToAccount(generatePrivateKey());
  // Ether for the gas of these outside sends (the wallet's address has none before its first service send).
  for (const address of [walletAccount.address, aside.address]) await giveEther(address);
  await sendUsdcAs(walletAccount, aside.address, held);
  expect(await tokenBalance(own.address)).toBe(0n);

  // The books still hold the coin, so the payout is accepted; leg 2's send would revert: refused, nothing sent.
  // The sandbox's faucet would mint the shortfall to the wallet's address (books-only balances have no coin): off
  // here, as in production, where nothing covers it.
  const { chainTransfers: transfers } = harness.services as unknown as {
    chainTransfers: { options: { sandboxFaucet: boolean } };
  };
  expect(transfers.options.sandboxFaucet).toBe(true);
  transfers.options.sandboxFaucet = false;
  let payout: Awaited<ReturnType<typeof createPayout>>;
  try {
    payout = await createPayout(
      mine,
      { wallet_id: own.id },
      payoutQuoteBody({ sender: { currency: 'USDC', payment_rail: 'ethereum', amount: '100.000000' } }),
    );
    await waitForStatus(harness, payout.id, 'error');
  } finally {
    transfers.options.sandboxFaucet = true;
  }
  const sendKey = `${payout.id}:stablecoin_to_fiat:off_ramp`;
  expect(await transactionOf(mine, payout.id)).toMatchObject({ status: 'error', failure_reason: 'payout_failed' });
  expect(await eventTypesOf(harness, payout.id)).toContain('payout.error');
  expect(await findEvmSend(harness.prisma, sendKey)).toBeNull();
  expect(await legRow(payout.id, 'stablecoin_to_fiat')).toMatchObject({ chainTxHash: null });
  // Nothing on the books moved for the payout's coin beyond its funding.
  expect((await ledgerOf(harness, payout.id)).references).not.toContain('stablecoin_to_fiat');
  expect(await tokenBalance(own.address)).toBe(0n);

  // The coin comes back on chain; the operator retries: the same key, sent once, the payout completes.
  await sendUsdcAs(aside, walletAccount.address, held);
  expect(
    await sendUpdate(settlementHandle(harness, payout.id), resolveErrorUpdate, { args: [{ action: 'retry' }] }),
  ).toBe('retry');
  expect(await settlementHandle(harness, payout.id).result()).toBe('completed');
  const sold = units(payout.stablecoin.amount);
  const sent = await minedMove(harness, sendKey);
  expect(sent).toMatchObject({ from: getAddress(own.address), to: sandboxOffRampAddress(), value: sold });
  expect(await legRow(payout.id, 'stablecoin_to_fiat')).toMatchObject({
    status: 'completed',
    chainTxHash: sent.txHash,
    chainBlockNumber: sent.block,
  });
  // Exactly one transfer under each of the payout's keys (its fees, its coin), and the wallet's stored next nonce is
  // the chain's (its outside send took nonce 0, the service's the next two).
  expect(
    await harness.prisma.evmSend.count({
      where: { idempotencyKey: { startsWith: payout.id }, fromAddress: { equals: own.address, mode: 'insensitive' } },
    }),
  ).toBe(2);
  const chainNonce = await client().getTransactionCount({ address: walletAccount.address, blockTag: 'pending' });
  expect(chainNonce).toBe(3);
  expect(await storedNextNonce(harness.prisma, 'ethereum', walletAccount.address)).toBe(chainNonce);
  expect(await tokenBalance(own.address)).toBe(held - units(payout.sender.amount));
  const types = await eventTypesOf(harness, payout.id);
  expect(types.indexOf('payout.error')).toBeLessThan(types.lastIndexOf('payout.completed'));
  const completed = await transactionOf(mine, payout.id);
  expect(completed.status).toBe('completed');
  expectPaymentLedgerInvariants(await ledgerOf(harness, payout.id), completed, parties.partner.partnerId);
}, 180_000);

/** The harness's chain adapter's options, which the refusal tests below change for their own settlements. */
function chainOptions(): { sandboxFaucet: boolean; treasuryPool?: readonly string[]; treasuryKeyReference: string } {
  return (harness.services as unknown as { chainTransfers: { options: ReturnType<typeof chainOptions> } })
    .chainTransfers.options;
}

/** A key reference of the service's own account 0 that no other file derives (for an address this test controls). */
async function ownKey(): Promise<{ ref: string; address: Address }> {
  const ref = `bip44:m/44'/60'/0'/0/${100_000 + crypto.randomInt(1_000_000_000)}`;
  return { ref, address: (await new SeedSigner(keySeeds(harness.config)).addressOf(ref)) as Address };
}

/**
 * A leg 1 whose coin the chain refused: in error at once (its leg workflow asked nothing again and waited on no
 * timer), its event, nothing sent under `refusedKey`, no leg-1 postings, the exchange asked once, and no refund.
 */
async function expectRefusedLegOne(transaction: { id: string }, who: Parties, refusedKey: string): Promise<void> {
  await waitForStatus(harness, transaction.id, 'error');
  expect(await transactionOf(who, transaction.id)).toMatchObject({
    status: 'error',
    failure_reason: 'conversion_failed',
  });
  // A fiat-to-fiat transaction's events are payin.* as a pay-in's are.
  expect(await eventTypesOf(harness, transaction.id)).toContain('payin.error');
  expect(await findEvmSend(harness.prisma, refusedKey)).toBeNull();
  expect(await legRow(transaction.id, 'fiat_to_stablecoin')).toMatchObject({ status: 'processing', chainTxHash: null });
  expect((await ledgerOf(harness, transaction.id)).references).toEqual(['deposit']);
  expect(await conversionRequests(transaction.id)).toBe(1);
  const { events } = await harness.env.client.workflow
    .getHandle(`${workflowIds.transaction(transaction.id)}-fiat-to-stablecoin`)
    .fetchHistory();
  const scheduled = events!.map((event) => event.activityTaskScheduledEventAttributes?.activityType?.name);
  expect(scheduled.filter(Boolean)).toEqual(['convertFiatToStablecoin']);
  expect(events!.filter((event) => event.timerStartedEventAttributes)).toEqual([]);
  // The exchange made the conversion: its coin was bought, so the operator's refund is refused; a retry moves it.
  const state = await settlementHandle(harness, transaction.id).query(settlementStateQuery);
  expect(state.refundBlocked).toMatch(/conversion of transaction .* was made, and the chain refuses its/);
  const refused = await sendUpdate(settlementHandle(harness, transaction.id), resolveErrorUpdate, {
    args: [{ action: 'refund' }],
  }).catch((error: unknown) => error);
  expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
  expect(((refused as WorkflowUpdateFailedError).cause as Error).message).toMatch(/^No refund: /);
}

/** How often the sandbox exchange was asked for the transaction's conversion (a repeated request counts up). */
async function conversionRequests(transactionId: string): Promise<number> {
  const operation = await harness.prisma.sandboxRailOperation.findUniqueOrThrow({
    where: { idempotencyKey: `${transactionId}:fiat_to_stablecoin` },
  });
  expect(operation.kind).toBe('conversion');
  return operation.requests;
}

it('ends a pay-in whose delivery the chain refuses in error at once, and the operator’s retry moves only the coin, once', async () => {
  const own = await createWallet(parties.partner.api, parties.customer.id, 'ethereum');
  const mine = { ...parties, wallet: own };
  // The settlement's hot treasury address is one of the test's own, empty; with the sandbox's faucet off (as in
  // production: the on-ramp mints nothing and nothing covers a shortfall) the delivery from it would revert.
  const hot = await ownKey();
  expect(await tokenBalance(hot.address)).toBe(0n);
  const options = chainOptions();
  const pool = options.treasuryPool;
  // Two entries: a pool of one is the treasury itself (EvmChainTransfers.treasuryOf).
  options.treasuryPool = [hot.ref, hot.ref];
  try {
    options.sandboxFaucet = false;
    let payin: Awaited<ReturnType<typeof createPayin>>;
    try {
      payin = await createPayin(mine, payinQuoteBody({ receiver: { currency: 'USDC', payment_rail: 'ethereum' } }));
      await deposit(mine, payin);
      await expectRefusedLegOne(payin, mine, `${payin.id}:fiat_to_stablecoin:delivery`);
    } finally {
      options.sandboxFaucet = true;
    }
    expect(await findEvmSend(harness.prisma, `${payin.id}:fiat_to_stablecoin:on_ramp`)).toBeNull();
    expect(await tokenBalance(own.address)).toBe(0n);

    // The coin can be had again (the faucet on: the on-ramp mints); the operator retries: the conversion is not asked
    // again, the coin moves once under the leg's keys, the pay-in completes.
    expect(
      await sendUpdate(settlementHandle(harness, payin.id), resolveErrorUpdate, { args: [{ action: 'retry' }] }),
    ).toBe('retry');
    expect(await settlementHandle(harness, payin.id).result()).toBe('completed');
    const credited = units(payin.stablecoin.amount);
    const minted = await minedMove(harness, `${payin.id}:fiat_to_stablecoin:on_ramp`);
    expect(minted).toMatchObject({ to: hot.address, value: credited });
    const delivered = await minedMove(harness, `${payin.id}:fiat_to_stablecoin:delivery`);
    expect(delivered).toMatchObject({ from: hot.address, to: getAddress(own.address), value: credited });
    expect(await legRow(payin.id, 'fiat_to_stablecoin')).toMatchObject({
      status: 'completed',
      chainTxHash: delivered.txHash,
      chainBlockNumber: delivered.block,
    });
    expect(await conversionRequests(payin.id)).toBe(1);
    expect(await sentKeysOf(payin.id)).toEqual([delivered.key, minted.key].sort());
    // One nonce for the hot address's one send: the refused attempt took none.
    const chainNonce = await client().getTransactionCount({ address: hot.address, blockTag: 'pending' });
    expect(chainNonce).toBe(1);
    expect(await storedNextNonce(harness.prisma, 'ethereum', hot.address)).toBe(chainNonce);
    expect(await tokenBalance(hot.address)).toBe(0n);
    expect(await tokenBalance(own.address)).toBe(credited);
    const types = await eventTypesOf(harness, payin.id);
    expect(types.indexOf('payin.error')).toBeLessThan(types.lastIndexOf('payin.completed'));
    const completed = await transactionOf(mine, payin.id);
    expect(completed.status).toBe('completed');
    expectPaymentLedgerInvariants(await ledgerOf(harness, payin.id), completed, parties.partner.partnerId);
  } finally {
    options.treasuryPool = pool;
  }
}, 180_000);

it('ends a settlement whose on-ramp coin the chain refuses in error at once, and the operator’s retry mints it once', async () => {
  // The on-ramp's mint would revert: its minter, for this test, is an address of the test's own that does not own the
  // token (OwnableUnauthorizedAccount), with ether for its gas.
  const minter = await ownKey();
  await giveEther(minter.address);
  const options = chainOptions();
  const treasuryKeyReference = options.treasuryKeyReference;
  options.treasuryKeyReference = minter.ref;
  let created: Awaited<ReturnType<typeof createTransaction>>;
  try {
    created = await createTransaction(
      parties,
      fiatToFiatQuoteBody({ stablecoin: { currency: 'USDC', payment_rail: 'ethereum' } }),
    );
    await deposit(parties, created);
    await expectRefusedLegOne(created, parties, `${created.id}:fiat_to_stablecoin:on_ramp`);
  } finally {
    options.treasuryKeyReference = treasuryKeyReference;
  }
  expect(await client().getTransactionCount({ address: minter.address, blockTag: 'pending' })).toBe(0);

  expect(
    await sendUpdate(settlementHandle(harness, created.id), resolveErrorUpdate, { args: [{ action: 'retry' }] }),
  ).toBe('retry');
  expect(await settlementHandle(harness, created.id).result()).toBe('completed');
  const amount = units(created.stablecoin.amount);
  const minted = await minedMove(harness, `${created.id}:fiat_to_stablecoin:on_ramp`);
  expect(minted).toMatchObject({ from: '0x0000000000000000000000000000000000000000', value: amount });
  expect(await hotAddresses()).toContain(minted.to);
  const sent = await minedMove(harness, `${created.id}:stablecoin_to_fiat:off_ramp`);
  expect(sent).toMatchObject({ from: minted.to, to: sandboxOffRampAddress(), value: amount });
  expect(await legRow(created.id, 'fiat_to_stablecoin')).toMatchObject({
    status: 'completed',
    chainTxHash: minted.txHash,
  });
  expect(await conversionRequests(created.id)).toBe(1);
  expect(await sentKeysOf(created.id)).toEqual([minted.key, sent.key].sort());
  const types = await eventTypesOf(harness, created.id);
  expect(types.indexOf('payin.error')).toBeLessThan(types.lastIndexOf('payin.completed'));
  const { transaction: completed, ledger } = await expectTransactionInvariants(harness, parties, created.id);
  expect(completed.status).toBe('completed');
  expect(ledger.references).toEqual(['deposit', 'fiat_to_stablecoin', 'stablecoin_to_fiat', 'payout']);
}, 180_000);
