// Scenario 14, the legs' coin on chain: fiat-to-fiat settlements and pay-ins on ethereum whose coin moves on the
// stack's Anvil (the on-ramp's mint to the treasury, the delivery to the wallet, leg 2 to the off-ramp), through
// - the worker SIGKILLed between signing and broadcast (the send held at `after-sign` by the sender's test hook),
// - the worker SIGKILLed right after broadcast (held at `after-broadcast`: on chain, the answer lost with the worker),
// - Anvil restarted (SIGTERM: state kept) while settlements are under way,
// - Anvil down (its RPC unreachable) while more settle: reads of the API answer within their bound meanwhile.
// Every settlement must complete once the node is back; each move is one mined transaction with the amount the
// transaction says (nothing sent twice: the chain's nonce of the treasury and the wallet equals the stored one, and
// the off-ramp got each leg 2 once); the wallet holds on chain exactly the pay-ins delivered (nothing credited twice),
// which is what the API shows.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Address, createPublicClient, erc20Abi, getAddress, type Hash, http, parseEventLogs } from 'viem';
import { findEvmSend, storedNextNonce } from '../../../src/persistence/evm-sends';
import { mnemonicToAccount } from 'viem/accounts';
import { SANDBOX_CHAIN_MNEMONIC, sandboxOffRampAddress } from '../../../src/providers/evm/sandbox-chain';
import { treasuryPoolKeyReferences } from '../../../src/providers/wallet-addresses';
import { call, externalAccount, approvedCustomer, idOf } from '../fixtures';
import type { HttpClient } from '../http';
import { RunSize, ScenarioReport } from '../report';
import { ChaosSystem, chaosDataDir } from '../system';
import { pause, waitUntil } from '../../lib/wait';

const FINAL_WITHIN_MS = 240_000;
const holdDir = path.join(chaosDataDir, 'evm-holds');

interface Flow {
  id: string;
  type: 'fiat_to_fiat' | 'payin';
  stablecoin: string;
  case: string;
}

export async function chainLegsScenario(system: ChaosSystem, report: ScenarioReport, size: RunSize): Promise<void> {
  const chain = system.stack.chain;
  if (!chain) throw new Error('the chaos stack has no chain node');
  rmSync(holdDir, { recursive: true, force: true });
  mkdirSync(holdDir, { recursive: true });
  const client = createPublicClient({ transport: http(chain.rpcUrl, { timeout: 3_000, retryCount: 0 }) });
  const { api } = await system.createPartner('chain legs chaos');
  const customerId = await approvedCustomer(api);
  const wallet = (
    await call(
      api,
      { method: 'POST', path: '/v1/wallets', json: { customer_id: customerId, name: 'Legs', chain: 'ethereum' } },
      201,
      'wallet',
    )
  ).body as { id: string; address: string };
  const speiAccountId = idOf(
    await call(
      api,
      { method: 'POST', path: '/v1/external-accounts', json: externalAccount(customerId, 'spei') },
      201,
      'spei account',
    ),
  );
  const flows: Flow[] = [];
  const startBlock = await client.getBlockNumber({ cacheTime: 0 });

  async function start(
    type: Flow['type'],
    label: string,
    beforeDeposit: (id: string) => void = () => undefined,
  ): Promise<Flow> {
    const quoteBody =
      type === 'payin'
        ? {
            sender: { currency: 'USD', payment_rail: 'wire', amount: '250.00' },
            receiver: { currency: 'USDC', payment_rail: 'ethereum' },
          }
        : {
            sender: { currency: 'BRL', payment_rail: 'pix', amount: '500.00' },
            stablecoin: { currency: 'USDC', payment_rail: 'ethereum' },
            receiver: { currency: 'MXN', payment_rail: 'spei' },
          };
    const quoteId = idOf(
      await call(
        api,
        { method: 'POST', path: type === 'payin' ? '/v1/quote' : '/v1/quote/fiat-to-fiat', json: quoteBody },
        201,
        `${type} quote`,
      ),
    );
    const body =
      type === 'payin'
        ? {
            quote_id: quoteId,
            customer_id: customerId,
            wallet_id: wallet.id,
            sender: { name: 'Ana Souza', document: { type: 'passport', number: 'x1234567' } },
          }
        : {
            quote_id: quoteId,
            customer_id: customerId,
            wallet_id: wallet.id,
            sender: { name: 'João Pereira', document: { type: 'cpf', number: '529.982.247-25' } },
            receiver: { external_account_id: speiAccountId },
          };
    const created = (
      await call(
        api,
        { method: 'POST', path: type === 'payin' ? '/v1/payin' : '/v1/fiat-to-fiat', json: body },
        201,
        type,
      )
    ).body as { id: string; sender: { amount: string }; stablecoin: { amount: string } };
    beforeDeposit(created.id);
    await call(
      api,
      {
        method: 'POST',
        path: `/v1/sandbox/transactions/${created.id}/deposit`,
        json: { amount: created.sender.amount },
      },
      201,
      'deposit',
    );
    const flow = { id: created.id, type, stablecoin: created.stablecoin.amount, case: label };
    flows.push(flow);
    return flow;
  }

  /** One flow held at `point` on the send under `key`, the worker SIGKILLed there, the hold lifted, a worker again. */
  async function killAt(point: 'after-sign' | 'after-broadcast', type: Flow['type'], move: string): Promise<void> {
    const trigger = path.join(holdDir, point);
    rmSync(`${trigger}.held`, { force: true });
    // Armed before the deposit (the settlement starts with it), for this flow's send only.
    const flow = await start(type, `worker SIGKILL ${point} (${type} ${move})`, (id) =>
      writeFileSync(trigger, `${id}:${move}`),
    );
    const held = await waitUntil(async () => existsSync(`${trigger}.held`), 60_000, 100);
    report.check(held, () => `${flow.case}: the send never reached ${point}`);
    if (held) {
      const key = readFileSync(`${trigger}.held`, 'utf8');
      const send = await findEvmSend(system.prisma, key);
      // Between signing and broadcast: stored signed, nothing on chain; after broadcast: on chain already.
      const onChain = send?.txHash
        ? await client.getTransactionReceipt({ hash: send.txHash as Hash }).then(
            () => true,
            () => false,
          )
        : false;
      report.check(send?.status === 'signed', () => `${flow.case}: the send is ${send?.status} at ${point}`);
      report.check(onChain === (point === 'after-broadcast'), () => `${flow.case}: on chain ${onChain} at ${point}`);
    }
    await system.stack.restart('worker', 'SIGKILL');
    rmSync(trigger, { force: true });
    report.restarts += 1;
    report.cases += 1;
  }

  // Case 1 and 2: the worker killed between signing and broadcast, and right after broadcast.
  await killAt('after-sign', 'fiat_to_fiat', 'stablecoin_to_fiat:off_ramp');
  await killAt('after-broadcast', 'payin', 'fiat_to_stablecoin:delivery');

  // Case 3: Anvil restarted while settlements are under way.
  const perCase = size.quick ? 2 : 6;
  for (let index = 0; index < perCase; index += 1) await start(index % 2 ? 'payin' : 'fiat_to_fiat', 'anvil restart');
  await system.stack.restart('anvil', 'SIGTERM');
  report.restarts += 1;
  report.cases += 1;

  // Case 4: Anvil down while more settle; the API's reads answer meanwhile.
  await system.stack.kill('anvil', 'SIGTERM');
  for (let index = 0; index < perCase; index += 1) await start(index % 2 ? 'payin' : 'fiat_to_fiat', 'anvil down');
  const read = Date.now();
  const answered = await api.send({ method: 'GET', path: `/v1/transactions/${flows.at(-1)!.id}`, timeoutMs: 10_000 });
  const readMs = Date.now() - read;
  report.check(
    answered.kind === 'response' && answered.status === 200 && readMs < 5_000,
    () => `GET a transaction with the chain down: ${answered.kind} in ${readMs} ms`,
  );
  await pause(size.quick ? 8_000 : 30_000);
  await system.stack.process('anvil').start();
  report.restarts += 1;
  report.cases += 1;

  // Every settlement completes.
  const statuses = new Map<string, string>();
  const ended = await waitUntil(
    async () => {
      for (const flow of flows) {
        if (statuses.get(flow.id) === 'completed') continue;
        statuses.set(flow.id, await statusOf(api, flow.id));
      }
      return flows.every((flow) => statuses.get(flow.id) === 'completed');
    },
    FINAL_WITHIN_MS,
    1_000,
  );
  report.check(
    ended,
    () =>
      `settlements not completed within ${FINAL_WITHIN_MS / 1000} s: ${flows
        .filter((flow) => statuses.get(flow.id) !== 'completed')
        .map((flow) => `${flow.id} (${flow.case})=${statuses.get(flow.id)}`)
        .join(', ')}`,
  );

  // Each move: one mined transaction, its one Transfer of the transaction's amount, where it belongs.
  // The sandbox's hot treasury addresses (ETHEREUM_TREASURY_ADDRESSES unset: 4): each settlement's coin is minted to
  // one and leaves from the same one.
  const hot = treasuryPoolKeyReferences(4).map(
    (ref) =>
      mnemonicToAccount(SANDBOX_CHAIN_MNEMONIC, { path: ref.slice('bip44:'.length) as `m/44'/60'/${string}` }).address,
  );
  const offRamp = sandboxOffRampAddress();
  const walletAddress = getAddress(wallet.address);
  const ourOffRampHashes = new Set<string>();
  let delivered = 0n;
  for (const flow of flows) {
    const amount = BigInt(Math.round(Number(flow.stablecoin) * 1e6));
    const minted = await findEvmSend(system.prisma, `${flow.id}:fiat_to_stablecoin:on_ramp`);
    const treasury = minted ? getAddress(minted.toAddress) : zeroAddress;
    report.check(hot.includes(treasury), () => `${flow.id}: minted to ${treasury}, not a hot treasury address`);
    const moves: Array<[string, Address, Address]> = [[`fiat_to_stablecoin:on_ramp`, zeroAddress, treasury]];
    if (flow.type === 'payin') moves.push(['fiat_to_stablecoin:delivery', treasury, walletAddress]);
    else moves.push(['stablecoin_to_fiat:off_ramp', treasury, offRamp]);
    for (const [move, from, to] of moves) {
      const key = `${flow.id}:${move}`;
      const send = await findEvmSend(system.prisma, key);
      if (!send?.txHash || send.status !== 'mined') {
        report.check(false, () => `${key} (${flow.case}): ${send?.status ?? 'never sent'}`);
        continue;
      }
      const receipt = await client.getTransactionReceipt({ hash: send.txHash as Hash });
      const logs = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs });
      const one = logs.length === 1 ? logs[0]!.args : null;
      report.check(
        one !== null && getAddress(one.from) === from && getAddress(one.to) === to && one.value === amount,
        () =>
          `${key} (${flow.case}): ${JSON.stringify(logs.map((log) => ({ ...log.args, value: String(log.args.value) })))}, expected ${amount} ${from} -> ${to}`,
      );
      if (to === offRamp) ourOffRampHashes.add(send.txHash.toLowerCase());
      if (to === walletAddress) delivered += amount;
    }
  }
  // Nothing sent twice: the off-ramp got the treasury's coin only by the stored sends, and the nonces agree.
  const endBlock = await client.getBlockNumber({ cacheTime: 0 });
  const toOffRamp = await client.getContractEvents({
    address: chain.tokens.USDC as Address,
    abi: erc20Abi,
    eventName: 'Transfer',
    args: { from: hot, to: offRamp },
    fromBlock: startBlock + 1n,
    toBlock: endBlock,
  });
  const extra = toOffRamp.filter((log) => !ourOffRampHashes.has(log.transactionHash.toLowerCase()));
  report.check(
    extra.length === 0,
    () => `the off-ramp got ${extra.length} transfer(s) from the treasury no send stored`,
  );
  for (const address of [...hot, walletAddress]) {
    const chainNonce = await client.getTransactionCount({ address, blockTag: 'pending' });
    const stored = await storedNextNonce(system.prisma, 'ethereum', address);
    report.check(
      address === walletAddress || address !== hot[0] ? (stored ?? 0) === chainNonce : stored === chainNonce,
      () => `${address}: nonce on chain ${chainNonce}, stored ${stored}`,
    );
  }
  // Nothing credited twice: the wallet holds on chain what the pay-ins delivered, and the API says the same.
  const held = await client.readContract({
    address: chain.tokens.USDC as Address,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [walletAddress],
  });
  report.check(held === delivered, () => `the wallet holds ${held} on chain, the pay-ins delivered ${delivered}`);
  const shown = (await call(api, { method: 'GET', path: `/v1/wallets/${wallet.id}` }, 200, 'wallet')).body as {
    balances: Array<{ currency: string; amount: string }>;
  };
  const usdc = shown.balances.find((balance) => balance.currency === 'USDC')?.amount ?? '0';
  report.check(
    BigInt(Math.round(Number(usdc) * 1e6)) === delivered,
    () => `the API shows ${usdc} USDC in the wallet, the chain ${delivered}`,
  );
  report.notes.settlements = flows.length;
  report.notes.completed = [...statuses.values()].filter((status) => status === 'completed').length;
  report.notes.offRampSends = ourOffRampHashes.size;
  report.notes.treasuryNonce = await client.getTransactionCount({ address: hot[0]!, blockTag: 'pending' });
  report.eventsChecked += flows.length;
  rmSync(holdDir, { recursive: true, force: true });
}

const zeroAddress = '0x0000000000000000000000000000000000000000' as Address;

async function statusOf(api: HttpClient, id: string): Promise<string> {
  const response = await api.send({ method: 'GET', path: `/v1/transactions/${id}`, timeoutMs: 5_000 });
  return response.kind === 'response' ? String((response.body as { status?: string }).status) : 'unanswered';
}
