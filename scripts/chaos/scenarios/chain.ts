// Scenario 8, the chain: wallet transfers to outside addresses (ERC-20 transfers on the stack's Anvil) while the node
// is restarted mid-run, then while it is down for a while (the RPC unreachable). Every transfer must end (completed,
// or failed with its money back) within a bound once the node is back, never hang; and the chain must show each
// completed transfer exactly once: the recipient holds the amount, a failed one's recipient nothing, and the wallet
// address's nonce on chain equals the nonce the service stored (nothing sent twice, no nonce skipped).
import { randomUUID } from 'node:crypto';
import { type Address, createPublicClient, erc20Abi, getAddress, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { storedNextNonce } from '../../../src/persistence/evm-sends';
import {
  call,
  externalAccount,
  createCustomer,
  idOf,
  individualCustomer,
  individualDocuments,
  reviewWithOutcome,
  uploadDocuments,
  waitForCustomerStatus,
} from '../fixtures';
import type { HttpClient } from '../http';
import { RunSize, ScenarioReport } from '../report';
import { ChaosSystem } from '../system';
import { pause, waitUntil } from '../../lib/wait';

const FINAL_WITHIN_MS = 180_000;

interface Sent {
  id: string;
  to: Address;
  units: bigint;
}

export async function chainScenario(system: ChaosSystem, report: ScenarioReport, size: RunSize): Promise<void> {
  const chain = system.stack.chain;
  if (!chain) throw new Error('the chaos stack has no chain node');
  const client = createPublicClient({ transport: http(chain.rpcUrl, { timeout: 3_000, retryCount: 0 }) });
  const { api } = await system.createPartner('chain chaos');
  const customerId = await createCustomer(api, individualCustomer({ email: `${randomUUID()}@example.com` }));
  await uploadDocuments(api, customerId, individualDocuments);
  await reviewWithOutcome(api, customerId, 'approved');
  await waitForCustomerStatus(api, customerId, 'approved');
  const walletId = idOf(
    await call(
      api,
      { method: 'POST', path: '/v1/wallets', json: { customer_id: customerId, name: 'Chaos', chain: 'ethereum' } },
      201,
      'wallet',
    ),
  );
  await call(
    api,
    { method: 'POST', path: `/v1/sandbox/wallets/${walletId}/fund`, json: { currency: 'USDC', amount: '1000' } },
    200,
    'fund',
  );
  const wallet = (await call(api, { method: 'GET', path: `/v1/wallets/${walletId}` }, 200, 'wallet')).body as {
    address: string;
  };
  const perCase = size.quick ? 2 : 6;
  const sent: Sent[] = [];

  const startTransfers = async (count: number) => {
    for (let index = 0; index < count; index += 1) {
      const to = privateKeyToAccount(generatePrivateKey()).address;
      const amount = `${index + 1}.25`;
      const created = await call(
        api,
        {
          method: 'POST',
          path: '/v1/wallet-transfer',
          json: { from_wallet_id: walletId, to_address: to, currency: 'USDC', amount },
        },
        201,
        'wallet transfer',
      );
      sent.push({ id: idOf(created), to, units: BigInt(Math.round((index + 1.25) * 1e6)) });
    }
  };

  // Case 1: the node restarted (SIGTERM: it writes its state, and loads it again) while transfers are under way.
  await startTransfers(perCase);
  await pause(300);
  await system.stack.restart('anvil', 'SIGTERM');
  report.restarts += 1;
  report.cases += 1;

  // An ethereum payout awaiting its stablecoin: confirming it needs the node.
  const speiAccountId = idOf(
    await call(
      api,
      { method: 'POST', path: '/v1/external-accounts', json: externalAccount(customerId, 'spei') },
      201,
      'spei account',
    ),
  );
  const quoteId = idOf(
    await call(
      api,
      {
        method: 'POST',
        path: '/v1/quote',
        json: {
          sender: { currency: 'USDC', payment_rail: 'ethereum', amount: '10.000000' },
          receiver: { currency: 'MXN', payment_rail: 'spei' },
        },
      },
      201,
      'ethereum payout quote',
    ),
  );
  const payoutId = idOf(
    await call(
      api,
      {
        method: 'POST',
        path: '/v1/payout',
        json: { quote_id: quoteId, customer_id: customerId, external_account_id: speiAccountId },
      },
      201,
      'ethereum payout',
    ),
  );

  // Case 2: the node down (its RPC unreachable) while transfers start and a payout is confirmed.
  await system.stack.kill('anvil', 'SIGTERM');
  await startTransfers(perCase);
  const readyWhileDown = await timed(() => system.isReady());
  report.check(readyWhileDown.ms < 10_000, () => `/health/ready took ${readyWhileDown.ms} ms with the chain down`);
  const confirm = await timed(() =>
    api.send({
      method: 'POST',
      path: '/v1/payout/confirm',
      headers: { 'Idempotency-Key': randomUUID() },
      json: { transaction_id: payoutId, tx_hash: `0x${'ab'.repeat(32)}` },
      timeoutMs: 30_000,
    }),
  );
  const answer = confirm.value;
  report.check(
    answer.kind === 'response' && answer.status === 503 && answer.headers['retry-after'] !== undefined,
    () =>
      `payout confirm with the chain down: ${answer.kind === 'response' ? `${answer.status} ${JSON.stringify(answer.body)}` : answer.kind}, expected 503 with Retry-After`,
  );
  report.check(confirm.ms < 15_000, () => `payout confirm with the chain down took ${confirm.ms} ms`);
  report.notes.confirmMs = confirm.ms;
  await pause(size.quick ? 8_000 : 30_000);
  await system.stack.process('anvil').start();
  report.restarts += 1;
  report.cases += 1;

  // Every transfer ends, and the chain shows each completed one once.
  const statuses = new Map<string, string>();
  const ended = await waitUntil(
    async () => {
      for (const one of sent) {
        if (['completed', 'failed'].includes(statuses.get(one.id) ?? '')) continue;
        statuses.set(one.id, await statusOf(api, one.id));
      }
      return sent.every((one) => ['completed', 'failed'].includes(statuses.get(one.id) ?? ''));
    },
    FINAL_WITHIN_MS,
    1_000,
  );
  report.check(
    ended,
    () =>
      `transfers not final within ${FINAL_WITHIN_MS / 1000} s: ${sent
        .filter((one) => !['completed', 'failed'].includes(statuses.get(one.id) ?? ''))
        .map((one) => `${one.id}=${statuses.get(one.id)}`)
        .join(', ')}`,
  );
  const token = chain.tokens.USDC as Address;
  for (const one of sent) {
    const balance = await client.readContract({
      address: token,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [one.to],
    });
    const status = statuses.get(one.id);
    const expected = status === 'completed' ? one.units : 0n;
    report.check(
      balance === expected,
      () => `transfer ${one.id} (${status}): the recipient holds ${balance}, expected ${expected}`,
    );
  }
  const address = getAddress(wallet.address);
  const chainNonce = await client.getTransactionCount({ address, blockTag: 'pending' });
  const stored = await storedNextNonce(system.prisma, 'ethereum', address);
  report.check(chainNonce === (stored ?? 0), () => `the wallet's nonce on chain is ${chainNonce}, stored ${stored}`);
  report.notes.completed = [...statuses.values()].filter((status) => status === 'completed').length;
  report.notes.failed = [...statuses.values()].filter((status) => status === 'failed').length;
  report.notes.nonce = chainNonce;
  report.eventsChecked += sent.length;
}

async function statusOf(api: HttpClient, id: string): Promise<string> {
  const response = await api.send({ method: 'GET', path: `/v1/wallet-transfers/${id}`, timeoutMs: 5_000 });
  return response.kind === 'response' ? String((response.body as { status?: string }).status) : 'unanswered';
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await work();
  return { value, ms: Date.now() - started };
}
