// POST /v1/payout/confirm checked on a real chain (issue 36): the API configured with the sandbox chain's node
// (Anvil, ETHEREUM_RPC_URL) takes a payout's `tx_hash` only when the node shows a transfer of the payout's
// stablecoin to its deposit address, for at least its amount, in enough blocks, and only once across payouts.
import { erc20Abi, type Hash, parseUnits } from 'viem';
import { type LocalAnvil, startAnvil } from '../scripts/lib/anvil';
import { EvmTransferVerifier } from '../src/providers/chain-verification';
import {
  mintSandboxStablecoin,
  sandboxAccount,
  sandboxChain,
  sandboxChainClients,
} from '../src/providers/evm/sandbox-chain';
import { Money } from '../src/domain/money';
import { ProviderUnavailableError } from '../src/providers/unavailable';
import { Harness, startHarness } from './support/harness';
import { createPayout, payoutQuoteBody } from './support/payments';
import { ledgerOf, Parties, setUpParties, settlementHandle, TransactionBody } from './support/transactions';

let anvil: LocalAnvil;
let harness: Harness;
let parties: Parties;
const sender = sandboxAccount(2);
// A collection address the service holds no key for (the seed's account 3), so nothing is swept from it: this file's
// node is not the run's shared one, but the nonces the service stores per (chain, sender) are in the database all files
// share, and a sweep from the sandbox collection here would move the stored nonce the shared node's sweeps use.
const ownCollection = sandboxAccount(3).address;

beforeAll(async () => {
  anvil = await startAnvil();
  harness = await startHarness({
    ETHEREUM_RPC_URL: anvil.rpcUrl,
    ETHEREUM_CONFIRMATIONS: '2',
    ETHEREUM_COLLECTION_ADDRESS: ownCollection,
  });
  parties = await setUpParties(harness);
  for (const token of ['USDC', 'USDT'] as const) {
    await mintSandboxStablecoin(anvil.rpcUrl, token, sender.address, parseUnits('10000', 6));
  }
}, 120_000);
afterAll(async () => {
  await harness?.teardown();
  await anvil?.stop();
});

const mine = (blocks: number) =>
  fetch(anvil.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_mine', params: [`0x${blocks.toString(16)}`] }),
  });

async function send(token: 'USDC' | 'USDT', to: `0x${string}`, amount: string): Promise<Hash> {
  const { publicClient, walletClient } = sandboxChainClients(anvil.rpcUrl);
  const hash = await walletClient.writeContract({
    address: anvil.tokens[token],
    abi: erc20Abi,
    functionName: 'transfer',
    args: [to, parseUnits(amount, 6)],
    account: sender,
    chain: sandboxChain,
  });
  await publicClient.waitForTransactionReceipt({ hash });
  return hash;
}

const ethereumPayout = () =>
  createPayout(
    parties,
    { wallet_id: undefined },
    payoutQuoteBody({ sender: { currency: 'USDC', payment_rail: 'ethereum', amount: '100.000000' } }),
  );
const confirm = (payout: TransactionBody, hash: string) =>
  parties.partner.api.post('/v1/payout/confirm').send({ transaction_id: payout.id, tx_hash: hash });
const refusal = async (payout: TransactionBody, hash: string) => {
  const response = await confirm(payout, hash);
  return [response.status, response.body.error?.code];
};

it('takes only the transfer owed, once deep enough, and never for a second payout', async () => {
  const payout = await ethereumPayout();
  expect(payout.status).toBe('awaiting_deposit');
  const collection = (payout.sender_deposit_instructions.ethereum as { address: `0x${string}` }).address;
  expect(collection).toBe(ownCollection);
  const amount = payout.sender.amount as string;

  expect(await refusal(payout, `0x${'ab'.repeat(32)}`)).toEqual([422, 'tx_hash_not_found']);
  expect(await refusal(payout, await send('USDT', collection, amount))).toEqual([422, 'tx_hash_wrong_token']);
  expect(await refusal(payout, await send('USDC', sender.address, amount))).toEqual([422, 'tx_hash_wrong_recipient']);
  expect(await refusal(payout, await send('USDC', collection, '99.99'))).toEqual([422, 'tx_hash_amount_too_low']);
  const paid = await send('USDC', collection, amount);
  // In one block; two are required: accepted, the payout still awaits it (the chain watcher, not running in this
  // file, would settle it; a confirm once it is deep enough settles it too).
  const waiting = await confirm(payout, paid);
  expect([waiting.status, waiting.body.status]).toEqual([200, 'awaiting_deposit']);
  expect((await parties.partner.api.get(`/v1/transactions/${payout.id}`)).body.status).toBe('awaiting_deposit');
  await mine(1);
  const confirmed = await confirm(payout, paid);
  expect(confirmed.status).toBe(200);
  expect(confirmed.body.status).toBe('processing');
  expect(await settlementHandle(harness, payout.id).result()).toBe('completed');
  const [deposit] = await harness.prisma.transactionDeposit.findMany({ where: { transactionId: payout.id } });
  expect(deposit).toMatchObject({ provider: 'ethereum', providerReference: paid.toLowerCase(), status: 'accepted' });
  expect((await ledgerOf(harness, payout.id)).references).toEqual([
    'deposit',
    'funding',
    'stablecoin_to_fiat',
    'payout',
  ]);

  // The same transfer offered for another payout.
  const other = await ethereumPayout();
  expect(await refusal(other, paid)).toEqual([422, 'tx_hash_already_used']);
  expect(await refusal(other, paid.toUpperCase().replace('0X', '0x'))).toEqual([422, 'tx_hash_already_used']);
  expect((await parties.partner.api.get(`/v1/transactions/${other.id}`)).body.status).toBe('awaiting_deposit');
  await parties.partner.api.put(`/v1/transactions/${other.id}`).send({ status: 'cancelled' });
});

it('answers the node being unreachable as unavailable (503 to the partner), within its bound', async () => {
  const verifier = new EvmTransferVerifier({
    rpcUrl: 'http://127.0.0.1:9',
    tokens: anvil.tokens,
    collectionAddress: ownCollection,
    confirmations: 1,
  });
  const started = Date.now();
  await expect(
    verifier.verify({ chain: 'ethereum', hash: `0x${'cd'.repeat(32)}`, minimum: Money.parse('USDC', '1') }),
  ).rejects.toBeInstanceOf(ProviderUnavailableError);
  expect(Date.now() - started).toBeLessThan(6_000);
});
