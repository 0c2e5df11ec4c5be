// Wallet transfers to outside addresses as real ERC-20 transfers on the jest run's Anvil (issue 36): visible on chain
// (balanceOf), gas paid by a top-up from the treasury, and sent exactly once through a worker SIGKILLed between
// signing and broadcast and right after broadcasting (a real worker process, reaching the node through a JSON-RPC
// proxy that holds the wallet's broadcast, or its answer, until the worker is dead). Exactly once is what the chain
// shows: the address's nonce equals the one stored, and the recipient holds the amount once.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Address, erc20Abi, getAddress, type Hex, recoverTransactionAddress } from 'viem';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { sandboxTokenAddresses, sandboxTreasury } from '../src/providers/evm/sandbox-chain';
import { evmClient } from '../src/providers/evm/sender';
import { findEvmSend, storedNextNonce } from '../src/persistence/evm-sends';
import { approvedCustomer, createWallet, WalletBody } from './support/accounts';
import { Harness, startHarness, TestPartner } from './support/harness';
import { failLostAttempts, ServiceProcess, startWorkerProcess } from './support/service-processes';
import { workflowIds } from '../src/temporal/workflow-ids';

type Mode = 'pass' | 'hold-broadcast' | 'hold-answer';

/** A JSON-RPC proxy in front of the node: holds raw transactions of the watched addresses, or their answers. */
class RpcProxy {
  /** By lower-case sender address: what happens to its raw transactions. */
  readonly modes = new Map<string, Mode>();
  /** Raw transactions held (never forwarded) or forwarded without answering, by lower-case sender. */
  readonly held = new Map<string, Hex[]>();
  /** Called as a raw transaction is held, before the proxy records it. */
  onHold: (sender: string, mode: Mode) => void = () => undefined;
  private readonly server = http.createServer((request, response) => void this.handle(request, response));
  url = '';

  constructor(private readonly upstream: string) {}

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString();
    const call = JSON.parse(body) as { method?: string; params?: unknown[] };
    // Either broadcast: the plain one, or the synchronous one that answers the receipt (EIP-7966).
    const broadcast = call.method === 'eth_sendRawTransaction' || call.method === 'eth_sendRawTransactionSync';
    const raw = broadcast ? (call.params?.[0] as Hex) : null;
    const sender = raw && (await recoverTransactionAddress({ serializedTransaction: raw as never })).toLowerCase();
    const mode: Mode = (sender ? this.modes.get(sender) : undefined) ?? 'pass';
    const hold = () => {
      this.onHold(sender!, mode);
      this.held.set(sender!, [...(this.held.get(sender!) ?? []), raw!]);
    };
    if (mode === 'hold-broadcast') {
      hold();
      return; // never forwarded, never answered: the worker waits until it is killed
    }
    const upstream = await fetch(this.upstream, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const answer = await upstream.text();
    if (mode === 'hold-answer') {
      hold();
      return; // on the chain now; the answer lost with the worker
    }
    response.writeHead(upstream.status, { 'content-type': 'application/json' }).end(answer);
  }
}

let harness: Harness;
let partner: TestPartner;
let proxy: RpcProxy;
let worker: ServiceProcess | null = null;
const rpcUrl = () => process.env.TEST_CHAIN_RPC_URL!;
const client = () => evmClient(31337, [rpcUrl()]);
const usdc = sandboxTokenAddresses().USDC;

const startWorker = async () => {
  worker = await startWorkerProcess(harness, { env: { ETHEREUM_RPC_URL: proxy.url, ETHEREUM_CONFIRMATIONS: '1' } });
};
async function killWorker(): Promise<void> {
  const killed = worker!;
  worker = null;
  await killed.stop('SIGKILL');
}

beforeAll(async () => {
  if (!process.env.TEST_CHAIN_RPC_URL) throw new Error('no chain node: run with npm test (global-setup starts it)');
  harness = await startHarness({}, { inProcessWorker: false });
  proxy = await new RpcProxy(rpcUrl()).start();
  await startWorker();
  partner = await harness.createPartner();
}, 120_000);
afterAll(async () => {
  if (worker) await killWorker();
  await proxy?.stop();
  await harness?.teardown();
});

async function until(probe: () => Promise<boolean>, what: string, skipTime = false): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    if (skipTime) await harness.env.sleep('10 seconds');
    else await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** An ethereum wallet of a new approved customer, holding `amount` USDC on the ledger (the sandbox's fund). */
async function fundedWallet(amount: string): Promise<WalletBody> {
  const customer = await approvedCustomer(harness, partner.api);
  const wallet = await createWallet(partner.api, customer.id, 'ethereum');
  const funded = await partner.api.post(`/v1/sandbox/wallets/${wallet.id}/fund`).send({ currency: 'USDC', amount });
  expect(funded.status).toBe(200);
  return wallet;
}

const outsideAddress = (): Address => privateKeyToAccount(generatePrivateKey()).address;
const tokenBalance = (address: Address) =>
  client().readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [address] });

async function transfer(wallet: WalletBody, to: Address, amount: string): Promise<string> {
  const created = await partner.api
    .post('/v1/wallet-transfer')
    .send({ from_wallet_id: wallet.id, to_address: to, currency: 'USDC', amount });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

const statusOf = async (id: string) => (await partner.api.get(`/v1/wallet-transfers/${id}`)).body.status as string;

/** One transfer on chain: mined once, the chain's nonce of the wallet's address the one stored after it. */
async function expectSentOnce(wallet: WalletBody, id: string, to: Address, units: bigint): Promise<void> {
  const body = (await partner.api.get(`/v1/wallet-transfers/${id}`)).body;
  expect(body.status).toBe('completed');
  const send = (await findEvmSend(harness.prisma, `${id}:send`))!;
  expect(send).toMatchObject({ status: 'mined', fromAddress: getAddress(wallet.address), txHash: body.tx_hash });
  const receipt = await client().getTransactionReceipt({ hash: body.tx_hash });
  expect(receipt.status).toBe('success');
  expect(receipt.from.toLowerCase()).toBe(wallet.address.toLowerCase());
  expect(await tokenBalance(to)).toBe(units);
  const chainNonce = await client().getTransactionCount({ address: wallet.address as Address, blockTag: 'pending' });
  expect(chainNonce).toBe(send.nonce + 1);
  expect(await storedNextNonce(harness.prisma, 'ethereum', getAddress(wallet.address))).toBe(chainNonce);
}

it('sends a wallet transfer to an outside address as an ERC-20 transfer, its gas topped up by the treasury', async () => {
  const wallet = await fundedWallet('25');
  const to = outsideAddress();
  const id = await transfer(wallet, to, '7.5');
  await until(async () => (await statusOf(id)) === 'completed', 'the transfer completed');
  await expectSentOnce(wallet, id, to, 7_500_000n);
  // Gas: the treasury sent the wallet's address ether once (under `<id>:send:gas`), and the transfer spent some.
  const topUp = (await findEvmSend(harness.prisma, `${id}:send:gas`))!;
  expect(topUp).toMatchObject({ status: 'mined', fromAddress: sandboxTreasury().address, token: null });
  const left = await client().getBalance({ address: wallet.address as Address });
  expect(left).toBeGreaterThan(0n);
  expect(left).toBeLessThan(BigInt(topUp.amount));
}, 120_000);

it('sends once through a worker SIGKILLed between signing and broadcast, and one SIGKILLed right after broadcast', async () => {
  // Both sends, one worker kill. The wallets one after the other: while one customer's approval is awaited (time
  // skipping unlocked), the other's verification would wait for its check with no timer, and the test server, with
  // nothing else due, skips to the ten-year execution timeout it gives such a workflow (docs/development.md "Time
  // skipping").
  const cases: { mode: Mode; wallet: WalletBody; to: Address }[] = [];
  for (const mode of ['hold-broadcast', 'hold-answer'] as const) {
    const wallet = await fundedWallet('10');
    proxy.modes.set(wallet.address.toLowerCase(), mode);
    cases.push({ mode, wallet, to: outsideAddress() });
  }
  const heldOf = (wallet: WalletBody) => proxy.held.get(wallet.address.toLowerCase()) ?? [];
  // The held broadcast first: its transaction never reaches the node, so it stays signed however long the worker
  // waits. Then the other, whose answer is lost: the worker is SIGKILLed the moment the node has answered, before
  // its request's timeout would send it to ask for the receipt.
  const [unsent, answered] = cases as [(typeof cases)[0], (typeof cases)[0]];
  const unsentId = await transfer(unsent.wallet, unsent.to, '3');
  await until(async () => heldOf(unsent.wallet).length > 0, 'the first signed and tried to broadcast');
  const doomed = worker!;
  proxy.onHold = (sender, mode) => {
    if (mode === 'hold-answer' && sender === answered.wallet.address.toLowerCase()) doomed.child.kill('SIGKILL');
  };
  const answeredId = await transfer(answered.wallet, answered.to, '3');
  await until(async () => heldOf(answered.wallet).length > 0, 'the second broadcast and its answer held');
  await killWorker();
  const started = [
    { ...unsent, id: unsentId },
    { ...answered, id: answeredId },
  ];
  const stored = new Map<string, number>();
  for (const { mode, wallet, to, id } of started) {
    const send = (await findEvmSend(harness.prisma, `${id}:send`))!;
    // Stored before the broadcast: what the proxy got is exactly the stored transaction. The one on chain may be
    // settled already, not by the dead worker but by another file's reconciliation (it settles every signed send
    // whose receipt the node has, service-wide, on the run's shared node and database).
    expect(mode === 'hold-answer' ? ['signed', 'mined'] : ['signed']).toContain(send.status);
    expect(send.rawTransaction).toBe(heldOf(wallet)[0]);
    // Held before the node (nothing on chain), or after it (mined, the answer lost).
    expect(await tokenBalance(to)).toBe(mode === 'hold-answer' ? 3_000_000n : 0n);
    stored.set(id, send.nonce);
  }
  proxy.onHold = () => undefined;
  proxy.modes.clear();
  await startWorker();
  // The dead worker's attempts are failed as the server would once their timeout passed.
  await failLostAttempts(
    harness,
    started.map(({ id }) => workflowIds.walletTransfer(id)),
  );
  await until(
    async () => (await Promise.all(started.map(({ id }) => statusOf(id)))).every((status) => status === 'completed'),
    'both transfers completed',
    true,
  );
  for (const { wallet, to, id } of started) {
    await expectSentOnce(wallet, id, to, 3_000_000n);
    const after = (await findEvmSend(harness.prisma, `${id}:send`))!;
    expect(after.nonce).toBe(stored.get(id));
    expect(after.replacedHashes).toEqual([]);
  }
}, 180_000);
