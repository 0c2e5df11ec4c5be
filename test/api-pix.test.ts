// API Pix against the bank simulator's pix channel, served over mutual TLS with the dev CA (scripts/pix/dev-ca.ts):
// OAuth2 client credentials, a transaction's cob (txid from its deposit reference, the "copia e cola" from the
// charge in its deposit instructions), the `pix` webhook delivered twice and late recorded as one deposit through the
// idempotent deposit path, returns through devolucao (DEVOLVIDO and NAO_REALIZADO), and a payout by the bank's
// transfer extension keyed by its idEnvio.
import crypto from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { crc16Ccitt } from '../src/domain/brazil';
import { Money } from '../src/domain/money';
import { ApiPixClient, ApiPixUnavailableError } from '../src/providers/pix/api-pix';
import {
  API_PIX_PROVIDER,
  ApiPixDepositProvider,
  depositsFromPixWebhook,
  PixReturns,
  pixTxidFor,
  referenceOfTxid,
} from '../src/providers/pix/collections';
import { SandboxDepositProvider } from '../src/providers/transaction-deposits';
import { SandboxFiatRails } from '../src/providers/fiat-rails';
import { ApiPixPayoutRails } from '../src/providers/pix/payouts';
import { receiveDepositByReference } from '../src/services/transactions/deposits';
import { createBankSimulatorApp } from '../simulators/bank/app';
import { createPixChannel, DEV_PIX_CLIENT } from '../simulators/bank/pix/channel';
import type { BankChannel } from '../simulators/bank/channel';
import { ensureDevPixTls } from '../scripts/pix/dev-ca';
import { Harness, startHarness } from './support/harness';
import {
  createQuote,
  createTransaction,
  fiatToFiatBody,
  Parties,
  setUpParties,
  TransactionBody,
} from './support/transactions';

const tls = ensureDevPixTls(path.join(os.tmpdir(), 'payments-api-pix-tls'));
let harness: Harness;
let parties: Parties;
let simulator: https.Server;
let simulatorUrl: string;
let receiver: http.Server;
let client: ApiPixClient;
let channel: BankChannel;
const received: Array<{ body: unknown; answer: unknown }> = [];
const COLLECTION_KEY = '11222333000181';
const stateDir = mkdtempSync(path.join(os.tmpdir(), 'bank-simulator-'));

beforeAll(async () => {
  harness = await startHarness();
  parties = await setUpParties(harness);
  simulator = https.createServer(
    {
      cert: readFileSync(tls.serverCert),
      key: readFileSync(tls.serverKey),
      ca: readFileSync(tls.caCert),
      requestCert: true,
      rejectUnauthorized: false,
    },
    createBankSimulatorApp([]).callback(),
  );
  await new Promise<void>((resolve) => simulator.listen(0, '127.0.0.1', resolve));
  simulatorUrl = `https://127.0.0.1:${(simulator.address() as AddressInfo).port}`;
  channel = createPixChannel({ stateDir, publicUrl: simulatorUrl, lateDelayMs: 1_500, returnSettleMs: 200 });
  simulator.removeAllListeners('request');
  simulator.on('request', createBankSimulatorApp([channel]).callback());
  await channel.start?.();
  client = new ApiPixClient({
    baseUrl: `${simulatorUrl}/pix`,
    clientId: DEV_PIX_CLIENT.id,
    clientSecret: DEV_PIX_CLIENT.secret,
    tls: { certFile: tls.clientCert, keyFile: tls.clientKey, caFile: tls.caCert },
  });
  // The service's webhook receiver: what a production route does with the bank's POST <url>/pix.
  receiver = http.createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    req.on('end', () => {
      void (async () => {
        const body: unknown = JSON.parse(text);
        const { deposits } = depositsFromPixWebhook(body);
        const answers = [];
        for (const deposit of deposits) answers.push(await receiveDepositByReference(harness.services, deposit));
        received.push({ body, answer: answers });
        res.writeHead(200).end();
      })().catch(() => res.writeHead(500).end());
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  await client.registerWebhook(COLLECTION_KEY, `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhook`);
  harness.services.depositProvider = new ApiPixDepositProvider(
    client,
    { key: COLLECTION_KEY, keyType: 'cnpj', bankName: 'Banco Simulado S.A.', beneficiaryName: 'Payments Sandbox Ltda' },
    new SandboxDepositProvider(),
  );
});

afterAll(async () => {
  client?.close();
  // Its timers (late webhooks, settling returns) would go on writing into the folder removed below.
  await channel?.stop?.();
  await new Promise((resolve) => simulator?.close(resolve));
  await new Promise((resolve) => receiver?.close(resolve));
  rmSync(stateDir, { recursive: true, force: true });
  await harness?.teardown();
});

/** Retries an expectation until it holds (the simulator works on its own clock: late webhooks, returns settling). */
async function until(check: () => Promise<void>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Examples for docs/examples/pix/ (the lead's note). */
function saveExample(name: string, value: unknown): void {
  const dir = path.join(__dirname, '..', 'test-artifacts', 'pix-fx');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, name), `${JSON.stringify(value, null, 2)}\n`);
}

const scenario = async (pathname: string, body: object) => {
  const response = await fetchInsecure(`${simulatorUrl}/pix/_scenarios${pathname}`, body);
  return response;
};

/** Scenario controls need no OAuth, but the server still asks for the client certificate. */
function fetchInsecure(url: string, body: object): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      url,
      {
        method: 'POST',
        cert: readFileSync(tls.clientCert),
        key: readFileSync(tls.clientKey),
        ca: readFileSync(tls.caCert),
        headers: { 'content-type': 'application/json' },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text || '{}') }));
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

describe('OAuth2 and mutual TLS', () => {
  it('refuses a client without a certificate of the CA, and a wrong client secret', async () => {
    const noCertificate = new ApiPixClient({
      baseUrl: `${simulatorUrl}/pix`,
      clientId: DEV_PIX_CLIENT.id,
      clientSecret: DEV_PIX_CLIENT.secret,
      tls: { certFile: tls.serverCert, keyFile: tls.serverKey, caFile: tls.caCert },
    });
    // The server certificate is the CA's too, but not for client authentication: the TLS layer refuses it.
    await expect(noCertificate.getCob(pixTxidFor('TX0000000000'))).rejects.toBeInstanceOf(ApiPixUnavailableError);
    noCertificate.close();
    const wrongSecret = new ApiPixClient({
      baseUrl: `${simulatorUrl}/pix`,
      clientId: DEV_PIX_CLIENT.id,
      clientSecret: 'not-the-secret',
      tls: { certFile: tls.clientCert, keyFile: tls.clientKey, caFile: tls.caCert },
    });
    await expect(wrongSecret.getCob(pixTxidFor('TX0000000000'))).rejects.toThrow(/token endpoint answered 401/);
    wrongSecret.close();
  });
});

describe('a transaction’s cob and its pix webhook', () => {
  let transaction: TransactionBody;

  it('makes one cob per transaction: its txid carries the deposit reference, its copia e cola is the instructions’', async () => {
    transaction = await createTransaction(parties);
    const instructions = transaction.sender_deposit_instructions as TransactionBody['sender_deposit_instructions'] & {
      pix: { copy_paste_code: string; key: string };
    };
    const txid = pixTxidFor(instructions.reference);
    expect(txid).toMatch(/^[a-zA-Z0-9]{26,35}$/);
    expect(referenceOfTxid(txid)).toBe(instructions.reference);
    const cob = await client.getCob(txid);
    expect(cob).toMatchObject({
      txid,
      status: 'ATIVA',
      chave: COLLECTION_KEY,
      valor: { original: instructions.amount },
      location: expect.stringMatching(/\/pix\/qr\/v2\/\d+$/),
    });
    const code = instructions.pix.copy_paste_code;
    expect(code).toBe(cob.pixCopiaECola);
    expect(code).toContain(cob.location);
    expect(code.slice(-4)).toBe(crc16Ccitt(code.slice(0, -4)));
  });

  it('records a payment notified twice and late once, with the endToEndId as the deposit’s provider reference', async () => {
    const reference = transaction.sender_deposit_instructions.reference;
    const paid = await scenario('/payments', {
      txid: pixTxidFor(reference),
      nomePagador: 'Ana Pagadora',
      scenarios: ['late_payment', 'duplicate_notification'],
    });
    expect(paid.status).toBe(201);
    const endToEndId = paid.body.endToEndId as string;
    expect(endToEndId).toMatch(/^E\d{8}\d{12}[a-z0-9]{11}$/);
    // Late: nothing delivered at once.
    expect(received).toHaveLength(0);
    await until(async () => expect(received).toHaveLength(2), 15_000);
    expect(received[0]!.body).toEqual(received[1]!.body);
    const deposits = await harness.prisma.transactionDeposit.findMany({ where: { transactionId: transaction.id } });
    expect(deposits).toHaveLength(1);
    expect(deposits[0]).toMatchObject({ provider: API_PIX_PROVIDER, providerReference: endToEndId });
    const cob = await client.getCob(pixTxidFor(reference));
    expect(cob.status).toBe('CONCLUIDA');
    expect(cob.pix?.[0]?.endToEndId).toBe(endToEndId);
    saveExample('cob-and-webhook.json', {
      deposit_instructions: transaction.sender_deposit_instructions,
      cob_after_payment: cob,
      webhook_deliveries: received.map((delivery) => delivery.body),
      deposits: deposits.map((d) => ({
        id: d.id,
        provider: d.provider,
        provider_reference: d.providerReference,
        amount: d.amount,
        status: d.status,
      })),
    });
  });
});

describe('returns through devolucao', () => {
  async function paidPix(scenarios: string[]): Promise<string> {
    const txid = pixTxidFor(`TX${Math.random().toString(36).slice(2, 12).toUpperCase().padEnd(10, '0')}`);
    await client.createCob(txid, {
      calendario: { expiracao: 3600 },
      valor: { original: '50.00' },
      chave: 'ret@pix.example',
    });
    const paid = await scenario('/payments', { txid, scenarios });
    return paid.body.endToEndId as string;
  }

  it('returns a payment: EM_PROCESSAMENTO then DEVOLVIDO, and the same id again is the same return', async () => {
    const returns = new PixReturns(client);
    const endToEndId = await paidPix([]);
    const first = await returns.request(endToEndId, 'transaction:abc:return', Money.parse('BRL', '50.00'));
    expect(first.status).toBe('pending');
    await until(async () =>
      expect(await returns.status(endToEndId, 'transaction:abc:return')).toEqual({
        status: 'completed',
        providerReference: first.providerReference,
      }),
    );
    const again = await returns.request(endToEndId, 'transaction:abc:return', Money.parse('BRL', '50.00'));
    expect(again).toEqual({ status: 'completed', providerReference: first.providerReference });
    const pix = await client.getPix(endToEndId);
    expect(pix.devolucoes).toHaveLength(1);
    saveExample('devolucao.json', { requested: first, pix_with_return: pix });
  });

  it('reports a return the payer’s bank refused as NAO_REALIZADO with its reason', async () => {
    const returns = new PixReturns(client);
    const endToEndId = await paidPix(['return_refused']);
    await returns.request(endToEndId, 'transaction:def:return', Money.parse('BRL', '50.00'));
    await until(async () =>
      expect(await returns.status(endToEndId, 'transaction:def:return')).toMatchObject({
        status: 'refused',
        reason: expect.stringContaining('recusada'),
      }),
    );
  });
});

describe('payouts by the bank’s transfer extension', () => {
  it('looks the key up in the DICT, and the same idEnvio sends once', async () => {
    expect(await client.dictLookup('ana@pix.example')).toMatchObject({ nome: expect.any(String) });
    expect(await client.dictLookup('someone@unknown.example')).toBeNull();
    const idEnvio = 'E2Etransaction123payout';
    const first = await client.sendPix(idEnvio, '10.00', 'ana@pix.example', COLLECTION_KEY);
    const second = await client.sendPix(idEnvio, '10.00', 'ana@pix.example', COLLECTION_KEY);
    expect(first.status).toBe('REALIZADO');
    expect(second.e2eId).toBe(first.e2eId);
    expect((await client.getSent(idEnvio)).e2eId).toBe(first.e2eId);
  });
});

describe('pix payouts of the settlement (ApiPixPayoutRails)', () => {
  const payout = (key: string, beneficiaryName: string, idempotencyKey: string) => ({
    idempotencyKey,
    simulate: null,
    round: 0,
    from: Money.parse('USDC', '10.000000'),
    amount: Money.parse('BRL', '49.75'),
    rail: 'pix' as const,
    destination: { key, key_type: 'email', bank_name: 'Banco Simulado', beneficiary_name: beneficiaryName },
  });

  it('pays a key whose DICT holder is the beneficiary once, and finds the send by its key', async () => {
    const rails = new ApiPixPayoutRails(new SandboxFiatRails(harness.prisma), client, COLLECTION_KEY);
    const holder = (await client.dictLookup('carla@pix.example'))!.nome;
    const key = `${crypto.randomUUID()}:stablecoin_to_fiat`;
    const first = await rails.payOut(payout('carla@pix.example', holder.toUpperCase(), key));
    expect(first).toEqual({ status: 'completed', providerReference: expect.stringMatching(/^E\d{8}/) });
    expect(await rails.payOut(payout('carla@pix.example', holder, key))).toEqual(first);
    expect(await rails.lookUp('payout', { idempotencyKey: key, simulate: null, round: 0 })).toEqual({
      state: 'executed',
      outcome: first,
    });
  });

  it('rejects a key the DICT does not know, or whose holder is someone else, without sending', async () => {
    const rails = new ApiPixPayoutRails(new SandboxFiatRails(harness.prisma), client, COLLECTION_KEY);
    const unknown = `${crypto.randomUUID()}:stablecoin_to_fiat`;
    expect(await rails.payOut(payout('x@unknown.example', 'Ana', unknown))).toMatchObject({ status: 'rejected' });
    const moved = `${crypto.randomUUID()}:stablecoin_to_fiat`;
    expect(await rails.payOut(payout('carla@pix.example', 'Someone Else', moved))).toMatchObject({
      status: 'rejected',
      reason: expect.stringContaining('someone else'),
    });
    await expect(client.getSent(moved.replace(/[^a-zA-Z0-9]/g, '').slice(-35))).rejects.toMatchObject({ status: 404 });
  });
});
