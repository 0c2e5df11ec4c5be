// Production mode end to end (APP_ENV=production): a fiat-to-fiat from EUR (SEPA) to USD (wire) from quote to
// completed, against the jest run's bank simulator process (ISO 20022: the deposit notified by camt.054, the wire sent
// as a validated pain.001 and settled; the liquidity provider's firm quotes for both legs) and its Anvil node (the
// ethereum chain row), and a BRL (Pix) -> EUR (SEPA) one (the Pix charge and its payment through the simulator's API
// Pix; the webhook is received by this test, as the service's route of the Pix branch will). What stays a simulation: the bank and the liquidity provider are the simulator (the real
// protocol, no real bank); screening is a deny-list stand-in set here, since no list is connected in this branch
// (production without it refuses the flows, tested below); the liquidity simulator executes quotes but sends no coin
// on chain, so the treasury is funded here once (coin and gas), as the provider's deliveries would fund it, and leg 2 sends the coin
// from it to the off-ramp address for real (docs/production.md). Flows production has no adapter for (solana, spei) are refused with
// flow_not_available, nothing created.
import type { WorkflowHandle } from '@temporalio/client';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiPixClient } from '../src/providers/pix/api-pix';
import { depositsFromPixWebhook, pixTxidFor } from '../src/providers/pix/collections';
import { receiveDepositByReference } from '../src/services/transactions/deposits';
import { DEV_PIX_CLIENT } from '../simulators/bank/pix/channel';
import { endToEndIdOf } from '../src/providers/iso20022/messages';
import { mintSandboxStablecoin } from '../src/providers/evm/sandbox-chain';
import { SeedSigner } from '../src/providers/evm/signer';
import { anvilRpc } from '../scripts/lib/anvil';
import { keySeeds } from '../src/providers';
import { TREASURY_KEY_REFERENCE } from '../src/providers/wallet-addresses';
import { DenyListScreening, UnconnectedScreening } from '../src/providers/screening';
import { approvedCustomer, createWallet } from './support/accounts';
import {
  productionOutsideWorldEnv,
  bankScenario,
  bankTransfer,
  startBankReportReader,
  startTestBank,
} from './support/bank';
import type { LocalBankSimulator } from '../scripts/lib/bank-simulator';
import { createExternalAccount, externalAccount } from './support/fixtures';
import { type Harness, startHarness, type TestPartner } from './support/harness';
import { eventTypesOf, type TransactionBody } from './support/transactions';

let harness: Harness;
let reader: WorkflowHandle;
let partner: TestPartner;
let customerId: string;
let walletId: string;
let wireAccountId: string;
let sepaAccountId: string;
let pixReceiver: http.Server;
let pixClient: ApiPixClient;
const PIX_KEY = '11222333000181';

let bank: LocalBankSimulator;
const chainUrl = process.env.TEST_CHAIN_RPC_URL;

beforeAll(async () => {
  if (!chainUrl) throw new Error('run with npm test: Anvil comes from its set-up');
  bank = await startTestBank();
  harness = await startHarness(
    {
      ...productionOutsideWorldEnv(bank, chainUrl),
      PIX_API_URL: `${bank.url}/pix`,
      PIX_CLIENT_ID: DEV_PIX_CLIENT.id,
      PIX_CLIENT_SECRET: DEV_PIX_CLIENT.secret,
      PIX_COLLECTION_KEY: PIX_KEY,
    },
    { bank },
  );
  harness.services.accountScreening = new DenyListScreening([]);
  const treasury = await new SeedSigner(keySeeds(harness.config)).addressOf(TREASURY_KEY_REFERENCE);
  await mintSandboxStablecoin(chainUrl, 'USDC', treasury, 100_000_000_000n);
  // And its gas, which an operator keeps topped up in production (docs/chain.md).
  await anvilRpc(chainUrl, 'anvil_setBalance', [treasury, `0x${(10n ** 20n).toString(16)}`]);
  partner = await harness.createPartner();
  const customer = await approvedCustomer(harness, partner.api);
  customerId = customer.id;
  walletId = (await createWallet(partner.api, customer.id, 'ethereum')).id;
  wireAccountId = (await createExternalAccount(partner.api, externalAccount(customer.id, 'wire'))).id;
  sepaAccountId = (await createExternalAccount(partner.api, externalAccount(customer.id, 'sepa'))).id;
  reader = await startBankReportReader(harness);
  // The bank's Pix webhook: what the service's webhook route (the Pix branch) does with POST <url>/pix, here in the
  // test until that route lands: each payment to receiveDepositByReference, the path of every credit.
  pixReceiver = http.createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    req.on('end', () => {
      void (async () => {
        for (const deposit of depositsFromPixWebhook(JSON.parse(text)).deposits) {
          await receiveDepositByReference(harness.services, deposit);
        }
        res.writeHead(200).end();
      })().catch(() => res.writeHead(500).end());
    });
  });
  await new Promise<void>((resolve) => pixReceiver.listen(0, '127.0.0.1', resolve));
  pixClient = new ApiPixClient({
    baseUrl: `${bank.url}/pix`,
    clientId: DEV_PIX_CLIENT.id,
    clientSecret: DEV_PIX_CLIENT.secret,
  });
  await pixClient.registerWebhook(PIX_KEY, `http://127.0.0.1:${(pixReceiver.address() as AddressInfo).port}/webhook`);
});
afterAll(async () => {
  pixClient?.close();
  await new Promise((resolve) => pixReceiver?.close(resolve));
  await reader?.terminate().catch(() => undefined);
  await harness?.teardown();
  await bank?.stop();
});

const quoteBody = (overrides: Record<string, unknown> = {}) => ({
  sender: { currency: 'EUR', payment_rail: 'sepa', amount: '250.00' },
  stablecoin: { currency: 'USDC', payment_rail: 'ethereum' },
  receiver: { currency: 'USD', payment_rail: 'wire' },
  ...overrides,
});

async function until(probe: () => Promise<boolean>, what: string, limitMs = 90_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('production mode', () => {
  it('takes a EUR (SEPA) -> USD (wire) fiat-to-fiat from quote to completed', async () => {
    const quote = await partner.api.post('/v1/quote/fiat-to-fiat').send(quoteBody());
    expect(quote.status).toBe(201);
    const created = await partner.api.post('/v1/fiat-to-fiat').send({
      quote_id: quote.body.id,
      customer_id: customerId,
      wallet_id: walletId,
      sender: { name: 'Jane Doe', document: { type: 'passport', number: 'X1234567' } },
      receiver: { external_account_id: wireAccountId },
    });
    expect(created.status).toBe(201);
    const transaction = created.body as TransactionBody;
    expect(transaction.sender_deposit_instructions).toMatchObject({
      payment_rail: 'sepa',
      sepa: { iban: 'DE89370400440532013000' },
    });
    await bankScenario(harness, {
      kind: 'credit',
      currency: 'EUR',
      amount: transaction.sender.amount,
      remittance: transaction.sender_deposit_instructions.reference,
      payerName: 'Jane Doe',
    });
    await until(
      async () =>
        (await harness.prisma.transaction.findUniqueOrThrow({ where: { id: transaction.id } })).status === 'completed',
      'the transaction completes',
    );
    const wire = await bankTransfer(harness, endToEndIdOf(`${transaction.id}:stablecoin_to_fiat`));
    expect(wire).toMatchObject({ status: 'ACSC', currency: 'USD', amount: transaction.receiver.amount });
    // Both legs executed at the liquidity provider's firm quotes, each with its FX result booked.
    const executions = await harness.prisma.fxExecution.findMany({ where: { transactionId: transaction.id } });
    expect(executions.map((execution) => execution.step).sort()).toEqual(['fiat_to_stablecoin', 'stablecoin_to_fiat']);
    expect(await eventTypesOf(harness, transaction.id)).toEqual(
      expect.arrayContaining(['payin.created', 'payin.processing', 'payin.completed']),
    );
    const final = await partner.api.get(`/v1/transactions/${transaction.id}`);
    console.log(
      'production-mode settlement:',
      JSON.stringify(
        {
          transaction: {
            id: final.body.id,
            status: final.body.status,
            sender: final.body.sender,
            stablecoin: final.body.stablecoin,
            receiver: final.body.receiver,
          },
          deposit: await harness.prisma.transactionDeposit.findMany({
            where: { transactionId: transaction.id },
            select: { provider: true, providerReference: true, amount: true, status: true },
          }),
          wire,
          fx: executions.map((execution) => ({
            step: execution.step,
            quoteId: execution.quoteId,
            price: execution.price,
          })),
        },
        null,
        2,
      ),
    );
  });

  it('takes a BRL (Pix) -> EUR (SEPA) fiat-to-fiat from quote to completed', async () => {
    const quote = await partner.api.post('/v1/quote/fiat-to-fiat').send(
      quoteBody({
        sender: { currency: 'BRL', payment_rail: 'pix', amount: '1000.00' },
        receiver: { currency: 'EUR', payment_rail: 'sepa' },
      }),
    );
    expect(quote.status).toBe(201);
    const created = await partner.api.post('/v1/fiat-to-fiat').send({
      quote_id: quote.body.id,
      customer_id: customerId,
      wallet_id: walletId,
      sender: { name: 'João Pereira', document: { type: 'cpf', number: '529.982.247-25' } },
      receiver: { external_account_id: sepaAccountId },
    });
    expect(created.status).toBe(201);
    const transaction = created.body as TransactionBody;
    const reference = transaction.sender_deposit_instructions.reference;
    // The charge at the bank (API Pix cob): its BR Code is what the sender pays.
    expect((await pixClient.getCob(pixTxidFor(reference))).status).toBe('ATIVA');
    const paid = await fetch(`${bank.url}/pix/_scenarios/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ txid: pixTxidFor(reference), nomePagador: 'João Pereira' }),
    });
    expect(paid.status).toBe(201);
    await until(
      async () =>
        (await harness.prisma.transaction.findUniqueOrThrow({ where: { id: transaction.id } })).status === 'completed',
      'the transaction completes',
    );
    const sepa = await bankTransfer(harness, endToEndIdOf(`${transaction.id}:stablecoin_to_fiat`));
    expect(sepa).toMatchObject({ status: 'ACSC', currency: 'EUR', amount: transaction.receiver.amount });
    const deposits = await harness.prisma.transactionDeposit.findMany({ where: { transactionId: transaction.id } });
    expect(deposits).toHaveLength(1);
    expect(deposits[0]!.provider).toBe('api-pix');
    const executions = await harness.prisma.fxExecution.findMany({ where: { transactionId: transaction.id } });
    expect(executions.map((execution) => execution.step).sort()).toEqual(['fiat_to_stablecoin', 'stablecoin_to_fiat']);
  });

  it('refuses a flow it has no adapter for (solana, spei) with flow_not_available, naming it', async () => {
    const solana = await partner.api
      .post('/v1/quote/fiat-to-fiat')
      .send(quoteBody({ stablecoin: { currency: 'USDC', payment_rail: 'solana' } }));
    expect(solana.status).toBe(422);
    expect(solana.body.error.code).toBe('flow_not_available');
    expect(solana.body.error.message).toContain('chain:solana');
    const spei = await partner.api
      .post('/v1/quote/fiat-to-fiat')
      .send(quoteBody({ receiver: { currency: 'MXN', payment_rail: 'spei' } }));
    expect(spei.status).toBe(422);
    expect(spei.body.error.message).toContain('payout:spei');
  });

  it('refuses every flow that needs screening while no screening is connected, and serves it once one is', async () => {
    harness.services.accountScreening = new UnconnectedScreening();
    try {
      const refused = await partner.api.post('/v1/quote/fiat-to-fiat').send(quoteBody());
      expect(refused.status).toBe(422);
      expect(refused.body.error.message).toContain('screening (no sanctions list is configured');
    } finally {
      harness.services.accountScreening = new DenyListScreening([]);
    }
    expect((await partner.api.post('/v1/quote/fiat-to-fiat').send(quoteBody())).status).toBe(201);
  });
});
