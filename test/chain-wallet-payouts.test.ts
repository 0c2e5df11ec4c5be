// A payout debited from a wallet, on the jest run's Anvil (issue 36): its fees leave the wallet's address for the
// service's fee address and its coin for the off-ramp's, each one ERC-20 transfer under its own key; refunded after
// the off-ramp refused it, both come back to the wallet's address. What a partner or operator can check: the wallet's
// balanceOf equals the balance the API shows, each key one mined transaction with one Transfer, the reconciliation's
// chain check clean for the wallet and the fee address, and an activity run again (a retry after a kill) sending
// nothing more. Fresh wallets of this file's own, funded on chain by pay-ins; the fee and off-ramp addresses are shared
// by every file on this node, so their moves are checked by their own receipts, not by their balances.
import crypto from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Address, erc20Abi, getAddress, type Hash } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createTransactionActivities } from '../activities/transactions';
import type { ActivityServices } from '../activities/services';
import { keySeeds, treasuryAddressCount } from '../src/providers';
import { SeedSigner } from '../src/providers/evm/signer';
import { FEE_KEY_REFERENCE, treasuryPoolKeyReferences } from '../src/providers/wallet-addresses';
import { sandboxOffRampAddress } from '../src/providers/evm/sandbox-chain';
import { findEvmSend, storedNextNonce } from '../src/persistence/evm-sends';
import { resolveErrorUpdate } from '../workflows/settlement';
import { Decimal } from '../src/domain/money';
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
import {
  deposit,
  eventTypesOf,
  ledgerOf,
  type Parties,
  settlementHandle,
  setUpParties,
  transactionOf,
  type TransactionBody,
  waitForStatus,
} from './support/transactions';

let harness: Harness;
let parties: Parties;
let feeAddress: Address;
let activities: ReturnType<typeof createTransactionActivities>;
const client = chainClient;
const usdc = sandboxUsdc;
const offRamp = sandboxOffRampAddress();
const units = (amount: string) => BigInt(new Decimal(amount).times(1_000_000).toFixed(0));
const tokenBalance = (address: string) =>
  client().readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [address as Address] });
const ethereumPayout = () =>
  payoutQuoteBody({ sender: { currency: 'USDC', payment_rail: 'ethereum', amount: '100.000000' } });

beforeAll(async () => {
  if (!process.env.TEST_CHAIN_RPC_URL) throw new Error('no chain node: run with npm test (global-setup starts it)');
  harness = await startHarness();
  parties = await setUpParties(harness);
  feeAddress = await new SeedSigner(keySeeds(harness.config)).addressOf(FEE_KEY_REFERENCE);
  // The worker's own activities, for running one again by hand as a retry after a kill would.
  activities = createTransactionActivities(harness.services as unknown as ActivityServices);
}, 120_000);
afterAll(async () => {
  await harness?.teardown();
});

/** The token sends stored for a transaction (gas top-ups aside): one row per key, by key. */
async function sendsOf(transactionId: string): Promise<Array<{ key: string; txHash: string | null; nonce: bigint }>> {
  const rows = await harness.prisma.evmSend.findMany({
    where: { idempotencyKey: { startsWith: transactionId }, kind: { not: 'gas' } },
  });
  return rows
    .map((row) => ({ key: row.idempotencyKey, txHash: row.txHash, nonce: row.nonce }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The USDC Transfers on chain between two addresses since `fromBlock`. */
async function transfersOnChain(from: Address, to: Address, fromBlock: bigint) {
  return client().getContractEvents({
    address: usdc,
    abi: erc20Abi,
    eventName: 'Transfer',
    args: { from, to },
    fromBlock,
    toBlock: await client().getBlockNumber({ cacheTime: 0 }),
  });
}

/** A wallet of its own, funded on chain by a pay-in delivered to its address; the block it was delivered in. */
async function fundedWallet(): Promise<{ mine: Parties; wallet: WalletBody; since: bigint }> {
  const wallet = await createWallet(parties.partner.api, parties.customer.id, 'ethereum');
  const mine = { ...parties, wallet };
  const payin = await createPayin(mine, payinQuoteBody({ receiver: { currency: 'USDC', payment_rail: 'ethereum' } }));
  await deposit(mine, payin);
  expect(await settlementHandle(harness, payin.id).result()).toBe('completed');
  const delivered = await minedMove(harness, `${payin.id}:fiat_to_stablecoin:delivery`);
  await expectBalancesAgree(mine, wallet);
  return { mine, wallet, since: delivered.block };
}

/** What the API shows the wallet holding is what its address holds on chain; answers it. */
async function expectBalancesAgree(mine: Parties, wallet: WalletBody): Promise<bigint> {
  const onChain = await tokenBalance(wallet.address);
  expect(units(await balanceOf(mine.partner.api, wallet.id))).toBe(onChain);
  return onChain;
}

/** A reconciliation run's chain_balances discrepancies at the wallet, the fee address and the hot treasury addresses. */
async function discrepanciesAt(wallet: WalletBody): Promise<Array<{ subjectId: string; detail: string }>> {
  const signer = new SeedSigner(keySeeds(harness.config));
  const hot = await Promise.all(
    treasuryPoolKeyReferences(treasuryAddressCount(harness.config)).map((ref) => signer.addressOf(ref)),
  );
  const ours = [...hot, feeAddress, wallet.address].map((address) => address.toLowerCase());
  return (await chainDiscrepancies(harness, parties.partner.partnerId)).filter((row) =>
    ours.includes(row.subjectId.split(':')[2]!),
  );
}

/** For the note: a payout's on-chain transactions as Anvil holds them. */
function print(title: string, moves: Move[]): void {
  const lines = moves.map(
    (move) =>
      `  ${move.key.split(':').slice(1).join(':').padEnd(29)} block ${String(move.block).padStart(5)}  ${move.txHash}  ` +
      `${move.from} -> ${move.to}  ${new Decimal(move.value.toString()).div(1_000_000).toFixed(6)} USDC`,
  );
  process.stdout.write(`${title}\n${lines.join('\n')}\n`);
}

/** The payout's fees (what the wallet paid beyond the coin sold), in the token's units. */
const feesOf = (payout: TransactionBody) => units(payout.sender.amount) - units(payout.stablecoin.amount);

it('sends a wallet-funded payout’s fees to the fee address and its coin to the off-ramp, once each', async () => {
  const { mine, wallet, since } = await fundedWallet();
  const held = await tokenBalance(wallet.address);
  const payout = await createPayout(mine, { wallet_id: wallet.id }, ethereumPayout());
  expect(await settlementHandle(harness, payout.id).result()).toBe('completed');
  const walletAddress = getAddress(wallet.address);
  const fees = feesOf(payout);
  expect(fees).toBeGreaterThan(0n);
  const fee = await minedMove(harness, `${payout.id}:stablecoin_to_fiat:fee`);
  expect(fee).toMatchObject({ from: walletAddress, to: feeAddress, value: fees });
  const sent = await minedMove(harness, `${payout.id}:stablecoin_to_fiat:off_ramp`);
  expect(sent).toMatchObject({ from: walletAddress, to: offRamp, value: units(payout.stablecoin.amount) });
  // The fees leave first, in the same activity; the leg keeps its coin's transaction (the off-ramp's).
  expect(sent.block).toBeGreaterThanOrEqual(fee.block);
  expect(
    await harness.prisma.transactionLeg.findFirstOrThrow({
      where: { transactionId: payout.id, kind: 'stablecoin_to_fiat' },
    }),
  ).toMatchObject({ status: 'completed', chainTxHash: sent.txHash });
  // The wallet lost on chain exactly what the API took from it: the sender amount, fees included.
  expect(await expectBalancesAgree(mine, wallet)).toBe(held - units(payout.sender.amount));
  const sends = await sendsOf(payout.id);
  expect(sends.map((send) => send.key)).toEqual([fee.key, sent.key]);
  expect(await findEvmSend(harness.prisma, `${fee.key}:faucet`)).toBeNull();

  // Leg 2's activity run again (a worker killed after it moved the coin, before Temporal heard): nothing more sent.
  await activities.payOutTransaction(payout.id, 0);
  expect(await sendsOf(payout.id)).toEqual(sends);
  expect(await transfersOnChain(walletAddress, feeAddress, since)).toHaveLength(1);
  expect(await transfersOnChain(walletAddress, offRamp, since)).toHaveLength(1);
  expect(await tokenBalance(wallet.address)).toBe(held - units(payout.sender.amount));
  const completed = await transactionOf(mine, payout.id);
  expectPaymentLedgerInvariants(await ledgerOf(harness, payout.id), completed, parties.partner.partnerId);

  expect(await discrepanciesAt(wallet)).toEqual([]);
  print(`payout ${payout.id} from wallet ${wallet.address} (${payout.sender.amount} USDC, Anvil):`, [fee, sent]);
}, 180_000);

it('sends a refunded wallet-funded payout’s fees and coin back to the wallet, once', async () => {
  const { mine, wallet, since } = await fundedWallet();
  const before = await balanceOf(mine.partner.api, wallet.id);
  const payout = await createPayout(mine, { wallet_id: wallet.id, simulate: 'payout_rejected' }, ethereumPayout());
  expect(await settlementHandle(harness, payout.id).result()).toBe('refunded');
  expect(await transactionOf(mine, payout.id)).toMatchObject({ status: 'refunded', failure_reason: 'payout_rejected' });
  const walletAddress = getAddress(wallet.address);
  const fees = feesOf(payout);
  const sold = units(payout.stablecoin.amount);
  // Out before the off-ramp refused it, back after: each under its own key.
  const fee = await minedMove(harness, `${payout.id}:stablecoin_to_fiat:fee`);
  const sent = await minedMove(harness, `${payout.id}:stablecoin_to_fiat:off_ramp`);
  const feeBack = await minedMove(harness, `${payout.id}:refund:fee`);
  const coinBack = await minedMove(harness, `${payout.id}:refund:off_ramp`);
  expect(fee).toMatchObject({ from: walletAddress, to: feeAddress, value: fees });
  expect(sent).toMatchObject({ from: walletAddress, to: offRamp, value: sold });
  // The fee address is the service's: its key sends the fees back. The sandbox's off-ramp returns the coin it got.
  expect(feeBack).toMatchObject({ from: feeAddress, to: walletAddress, value: fees });
  expect(coinBack).toMatchObject({ from: offRamp, to: walletAddress, value: sold });
  expect(coinBack.block).toBeGreaterThan(sent.block);
  expect(
    await harness.prisma.transactionLeg.findFirstOrThrow({ where: { transactionId: payout.id, kind: 'refund' } }),
  ).toMatchObject({ status: 'completed', chainTxHash: coinBack.txHash });
  // The API gives the wallet its balance back, and its address holds it.
  expect(await balanceOf(mine.partner.api, wallet.id)).toBe(before);
  expect(await expectBalancesAgree(mine, wallet)).toBe(units(before));
  // The ledger's postings keep their meaning: the funding, and its reversal by the refund.
  const ledger = await ledgerOf(harness, payout.id);
  expect(ledger.references).toEqual(['funding', 'refund']);
  expectPaymentLedgerInvariants(ledger, await transactionOf(mine, payout.id), parties.partner.partnerId);

  // The refund's activity run again: nothing more sent.
  const sends = await sendsOf(payout.id);
  expect(sends.map((send) => send.key)).toEqual([feeBack.key, coinBack.key, fee.key, sent.key].sort());
  await activities.returnTransactionFunds(payout.id, 0);
  expect(await sendsOf(payout.id)).toEqual(sends);
  expect(await transfersOnChain(offRamp, walletAddress, since)).toHaveLength(1);
  expect(await transfersOnChain(feeAddress, walletAddress, since)).toHaveLength(1);
  expect(await tokenBalance(wallet.address)).toBe(units(before));

  expect(await discrepanciesAt(wallet)).toEqual([]);
  print(`payout ${payout.id} refunded (payout_rejected) to wallet ${wallet.address} (Anvil):`, [
    fee,
    sent,
    feeBack,
    coinBack,
  ]);
}, 180_000);

it('returns the coin once when the refund dies between signing and broadcast and runs again', async () => {
  const { mine, wallet, since } = await fundedWallet();
  const before = await balanceOf(mine.partner.api, wallet.id);
  // The sender's test hook holds the coin's return after it was signed and stored, before its broadcast (where a
  // SIGKILLed worker would leave it); the refund's activity is then run again, as Temporal's retry would.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'evm-holds-'));
  process.env.EVM_SEND_HOLD_DIR = dir;
  try {
    const payout = await createPayout(mine, { wallet_id: wallet.id, simulate: 'payout_rejected' }, ethereumPayout());
    const key = `${payout.id}:refund:off_ramp`;
    writeFileSync(path.join(dir, 'after-sign'), key);
    const deadline = Date.now() + 60_000;
    while (!existsSync(path.join(dir, 'after-sign.held')) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const stored = await findEvmSend(harness.prisma, key);
    expect(stored).toMatchObject({ status: 'signed', fromAddress: offRamp });
    await expect(client().getTransactionReceipt({ hash: stored!.txHash as Hash })).rejects.toThrow();

    // The run again broadcasts the stored transaction: the same nonce and hash.
    await activities.returnTransactionFunds(payout.id, 0);
    expect(await findEvmSend(harness.prisma, key)).toMatchObject({
      status: 'mined',
      nonce: stored!.nonce,
      txHash: stored!.txHash,
    });
    rmSync(path.join(dir, 'after-sign'));
    expect(await settlementHandle(harness, payout.id).result()).toBe('refunded');
    const walletAddress = getAddress(wallet.address);
    expect(await transfersOnChain(offRamp, walletAddress, since)).toHaveLength(1);
    expect(await transfersOnChain(feeAddress, walletAddress, since)).toHaveLength(1);
    expect(await storedNextNonce(harness.prisma, 'ethereum', offRamp)).toBe(
      await client().getTransactionCount({ address: offRamp, blockTag: 'pending' }),
    );
    expect(await balanceOf(mine.partner.api, wallet.id)).toBe(before);
    expect(await expectBalancesAgree(mine, wallet)).toBe(units(before));
  } finally {
    delete process.env.EVM_SEND_HOLD_DIR;
    rmSync(dir, { recursive: true, force: true });
  }
}, 180_000);

it('gives back fees that left alone when the coin could not follow, on an operator’s refund', async () => {
  const { mine, wallet, since } = await fundedWallet();
  const before = await balanceOf(mine.partner.api, wallet.id);
  const held = await tokenBalance(wallet.address);
  const walletAddress = getAddress(wallet.address);
  // Behind the service's back, the wallet's recovered key moves all but 10 USDC to an address of the test's own: enough
  // for a payout's fees, not for its coin.
  const walletAccount = await walletAccountOf(harness, wallet.id);
  const aside = privateKeyToAccount(generatePrivateKey());
  for (const address of [walletAccount.address, aside.address]) await giveEther(address);
  const left = 10_000_000n;
  await sendUsdcAs(walletAccount, aside.address, held - left);

  // The sandbox's faucet would mint the shortfall: off here, as in production, where nothing covers it.
  const { chainTransfers: transfers } = harness.services as unknown as {
    chainTransfers: { options: { sandboxFaucet: boolean } };
  };
  transfers.options.sandboxFaucet = false;
  let payout: TransactionBody;
  try {
    payout = await createPayout(mine, { wallet_id: wallet.id }, ethereumPayout());
    await waitForStatus(harness, payout.id, 'error');
  } finally {
    transfers.options.sandboxFaucet = true;
  }
  const fees = feesOf(payout);
  expect(fees).toBeLessThan(left);
  // The fees left; the coin would revert, so nothing was sent under its key, and the leg is in error at once (a fees-only
  // send does not make a payout: no "may have been made").
  const fee = await minedMove(harness, `${payout.id}:stablecoin_to_fiat:fee`);
  expect(fee).toMatchObject({ from: walletAddress, to: feeAddress, value: fees });
  expect(await findEvmSend(harness.prisma, `${payout.id}:stablecoin_to_fiat:off_ramp`)).toBeNull();
  expect(await tokenBalance(wallet.address)).toBe(left - fees);

  // The operator refunds: the fees come back from the fee address; no coin to bring back from the off-ramp.
  expect(
    await sendUpdate(settlementHandle(harness, payout.id), resolveErrorUpdate, { args: [{ action: 'refund' }] }),
  ).toBe('refund');
  expect(await settlementHandle(harness, payout.id).result()).toBe('refunded');
  expect(await transactionOf(mine, payout.id)).toMatchObject({
    status: 'refunded',
    failure_reason: 'refunded_by_operator',
  });
  expect(await eventTypesOf(harness, payout.id)).toContain('payout.refunded');
  const feeBack = await minedMove(harness, `${payout.id}:refund:fee`);
  expect(feeBack).toMatchObject({ from: feeAddress, to: walletAddress, value: fees });
  expect(await findEvmSend(harness.prisma, `${payout.id}:refund:off_ramp`)).toBeNull();
  expect(await transfersOnChain(feeAddress, walletAddress, since)).toHaveLength(1);
  expect(await tokenBalance(wallet.address)).toBe(left);

  // The coin moved aside comes back: the API's balance and the address's agree again.
  await sendUsdcAs(aside, walletAccount.address, held - left);
  expect(await balanceOf(mine.partner.api, wallet.id)).toBe(before);
  expect(await expectBalancesAgree(mine, wallet)).toBe(units(before));
  expect(await discrepanciesAt(wallet)).toEqual([]);
}, 180_000);

it('has the settlement’s hot treasury address advance the coin where the service holds no off-ramp key (production)', async () => {
  const { mine, wallet, since } = await fundedWallet();
  const before = await balanceOf(mine.partner.api, wallet.id);
  const signer = new SeedSigner(keySeeds(harness.config));
  const hot = await Promise.all(
    treasuryPoolKeyReferences(treasuryAddressCount(harness.config)).map((ref) => signer.addressOf(ref)),
  );
  // Production passes no off-ramp key: the exchange's address is not the service's to send from.
  const { chainTransfers: transfers } = harness.services as unknown as {
    chainTransfers: { options: { offRampKeyReference: string | null } };
  };
  const offRampKey = transfers.options.offRampKeyReference;
  transfers.options.offRampKeyReference = null;
  let payout: TransactionBody;
  try {
    payout = await createPayout(mine, { wallet_id: wallet.id, simulate: 'payout_rejected' }, ethereumPayout());
    expect(await settlementHandle(harness, payout.id).result()).toBe('refunded');
  } finally {
    transfers.options.offRampKeyReference = offRampKey;
  }
  const walletAddress = getAddress(wallet.address);
  const coinBack = await minedMove(harness, `${payout.id}:refund:off_ramp`);
  expect(hot).toContain(coinBack.from);
  expect(coinBack).toMatchObject({ to: walletAddress, value: units(payout.stablecoin.amount) });
  // The off-ramp keeps what it got (the service's balance at the exchange); nothing came from it.
  expect(await transfersOnChain(offRamp, walletAddress, since)).toHaveLength(0);
  expect(await transfersOnChain(feeAddress, walletAddress, since)).toHaveLength(1);
  expect(await balanceOf(mine.partner.api, wallet.id)).toBe(before);
  expect(await expectBalancesAgree(mine, wallet)).toBe(units(before));
  expect(await discrepanciesAt(wallet)).toEqual([]);
}, 180_000);
