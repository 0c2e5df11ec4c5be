// The ISO 20022 payout adapter against the bank simulator over HTTP: a SEPA and a wire payout complete once settled,
// a rejection carries the ISO reason, a lost answer or a retried step never pays twice, lookUp tells what the bank
// did, and an outage is RailUnavailableError.
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Money } from '../src/domain/money';
import {
  RailUnavailableError,
  ReturnRefusedError,
  type FiatRails,
  type PayoutRequest,
  type ReturnRequest,
} from '../src/providers/fiat-rails';
import { Iso20022BankClient } from '../src/providers/iso20022/client';
import { Iso20022FiatRails, returnEndToEndId } from '../src/providers/iso20022/fiat-rails';
import { endToEndIdOf, type Party } from '../src/providers/iso20022/messages';
import { Iso20022ProviderStatements } from '../src/providers/iso20022/statements';
import { accountParties } from '../src/providers/iso20022/accounts';
import { collectionAccountsOf, Iso20022DepositProvider } from '../src/providers/iso20022/deposits';
import { loadConfig } from '../src/config';
import { createBankSimulatorApp } from '../simulators/bank/app';
import type { BankChannel } from '../simulators/bank/channel';
import { iso20022Channel } from '../simulators/bank/iso20022/channel';

let server: Server;
let channel: BankChannel;
let base: string;
let rails: Iso20022FiatRails;
const othersCalled: string[] = [];
/** The payers of the credits the service read (bank_credits in the service). */
const payers: Record<string, Party> = {
  'CRDT-refund-1': {
    name: 'Max Mustermann',
    account: { iban: 'DE02120300000000202051' },
    agent: { bic: 'BYLADEM1001' },
  },
  'CRDT-refund-2': { name: 'Erika Muster', account: { iban: 'DE02500105170137075030' }, agent: { bic: 'INGDDEFFXXX' } },
};

// The exchange and the other rails: this test checks only that the adapter hands them on.
const others: FiatRails = {
  convertToStablecoin: async () => ({ status: 'completed', providerReference: 'exchange' }),
  payOut: async (request) => {
    othersCalled.push(`payOut:${request.rail}`);
    return { status: 'completed', providerReference: 'other-rail' };
  },
  returnToSender: async () => ({ status: 'completed', providerReference: 'return' }),
  sellBack: async (request) => ({ status: 'completed', providerReference: 'sell', proceeds: request.atLockedRate }),
  lookUp: async () => ({ state: 'not_executed' }),
};

const stateDir = mkdtempSync(path.join(os.tmpdir(), 'iso20022-rails-'));

beforeAll(async () => {
  process.env.ISO20022_SETTLE_MS = '200';
  channel = iso20022Channel({ stateDir, publicUrl: '' });
  server = createBankSimulatorApp([channel]).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/iso20022`;
  await channel.start?.();
  rails = new Iso20022FiatRails(new Iso20022BankClient({ baseUrl: base, timeoutMs: 2000 }), others, {
    debtors: {
      EUR: { name: 'Payments Service', account: { iban: 'DE89370400440532013000' }, agent: { bic: 'COBADEFFXXX' } },
      USD: { name: 'Payments Service', account: { number: '000111222333' }, agent: { abaRoutingNumber: '021000021' } },
    },
    settleWaitMs: 5000,
    pollIntervalMs: 100,
    simulate: true,
    payerOf: async (entryReference) => payers[entryReference] ?? null,
  });
});
afterAll(async () => {
  await channel.stop?.();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(stateDir, { recursive: true, force: true });
});

const sepaPayout = (key: string, simulate: PayoutRequest['simulate'] = null, round = 0): PayoutRequest => ({
  idempotencyKey: key,
  simulate,
  round,
  from: Money.parse('USDC', '110.000000'),
  amount: Money.parse('EUR', '100.25'),
  rail: 'sepa',
  destination: { beneficiary_name: 'Jane Doe', iban: 'FR1420041010050500013M02606', bic: 'PSSTFRPPPAR' },
});

const bankTransfer = async (key: string) =>
  (await (await fetch(`${base}/_scenarios/transfers/${endToEndIdOf(key)}`)).json()) as {
    status: string;
    amount: string;
  };

describe('ISO 20022 payout rails', () => {
  it('pays a SEPA payout: completed once the bank settles it, named by its end-to-end id', async () => {
    const outcome = await rails.payOut(sepaPayout('11111111-1111-4111-8111-111111111111:stablecoin_to_fiat'));
    const endToEndId = endToEndIdOf('11111111-1111-4111-8111-111111111111:stablecoin_to_fiat');
    expect(outcome).toEqual({ status: 'completed', providerReference: endToEndId });
    expect(await bankTransfer('11111111-1111-4111-8111-111111111111:stablecoin_to_fiat')).toMatchObject({
      status: 'ACSC',
      amount: '100.25',
    });
    // The step run again is the same payment.
    expect(await rails.payOut(sepaPayout('11111111-1111-4111-8111-111111111111:stablecoin_to_fiat'))).toEqual(outcome);
    expect(await rails.lookUp('payout', sepaPayout('11111111-1111-4111-8111-111111111111:stablecoin_to_fiat'))).toEqual(
      { state: 'executed', outcome },
    );
  });

  it('pays a US wire (routing and account number)', async () => {
    const outcome = await rails.payOut({
      ...sepaPayout('22222222-2222-4222-8222-222222222222:stablecoin_to_fiat'),
      amount: Money.parse('USD', '99.10'),
      rail: 'wire',
      destination: { beneficiary_name: 'John Roe', bank_account_number: '000123456789', routing_number: '026009593' },
    });
    expect(outcome.status).toBe('completed');
    expect(await bankTransfer('22222222-2222-4222-8222-222222222222:stablecoin_to_fiat')).toMatchObject({
      status: 'ACSC',
      amount: '99.10',
    });
  });

  it('reports the bank’s rejection with its ISO reason (simulate: payout_rejected)', async () => {
    const outcome = await rails.payOut(
      sepaPayout('33333333-3333-4333-8333-333333333333:stablecoin_to_fiat', 'payout_rejected'),
    );
    expect(outcome).toMatchObject({ status: 'rejected', reason: expect.stringContaining('AC04') });
  });

  it('a lost pain.002 is unavailable, the lookup finds the payment, and the retry does not pay twice', async () => {
    const request = sepaPayout(
      '44444444-4444-4444-8444-444444444444:stablecoin_to_fiat',
      'payout_timeout_after_execution',
    );
    await expect(rails.payOut(request)).rejects.toThrow(RailUnavailableError);
    const looked = await rails.lookUp('payout', request);
    expect(looked.state === 'unknown' || looked.state === 'executed').toBe(true);
    const outcome = await rails.payOut({ ...request, round: 1 });
    expect(outcome.status).toBe('completed');
    // The bank's statement books it once.
    const today = new Date().toISOString().slice(0, 10);
    const statement = await new Iso20022BankClient({ baseUrl: base, timeoutMs: 2000 }).statement('EUR', today);
    const booked = statement.entries.filter((entry) => entry.endToEndId === endToEndIdOf(request.idempotencyKey));
    expect(booked).toHaveLength(1);
  });

  it('says not executed for a payout the bank never received, and unavailable while the bank is down', async () => {
    expect(await rails.lookUp('payout', sepaPayout('55555555-5555-4555-8555-555555555555:stablecoin_to_fiat'))).toEqual(
      { state: 'not_executed' },
    );
    await fetch(`${base}/_scenarios`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'down', seconds: 30 }),
      headers: { 'content-type': 'application/json' },
    });
    await expect(rails.payOut(sepaPayout('55555555-5555-4555-8555-555555555555:stablecoin_to_fiat'))).rejects.toThrow(
      RailUnavailableError,
    );
    await fetch(`${base}/_scenarios`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'up' }),
      headers: { 'content-type': 'application/json' },
    });
    expect(await bankTransfer('55555555-5555-4555-8555-555555555555:stablecoin_to_fiat').catch(() => null)).toBeNull();
  });

  it('hands Pix, SPEI and CVU payouts to their own adapters', async () => {
    await rails.payOut({ ...sepaPayout('66666666-6666-4666-8666-666666666666:stablecoin_to_fiat'), rail: 'pix' });
    expect(othersCalled).toEqual(['payOut:pix']);
  });

  it('reads the bank’s camt.053 as the reconciliation’s statement: each payout and return once, by its key', async () => {
    const key = '11111111-1111-4111-8111-111111111111:stablecoin_to_fiat';
    await fetch(`${base}/_scenarios`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'return', endToEndId: endToEndIdOf(key), reason: 'AC04' }),
      headers: { 'content-type': 'application/json' },
    });
    await fetch(`${base}/_scenarios`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'credit', currency: 'EUR', amount: '10.00', times: 2 }),
      headers: { 'content-type': 'application/json' },
    });
    const unkeyed: string[] = [];
    const statements = new Iso20022ProviderStatements(
      new Iso20022BankClient({ baseUrl: base, timeoutMs: 2000 }),
      { statementFor: async () => ({ lines: [], next: null }) },
      ['EUR', 'USD'],
      async (entry) => {
        unkeyed.push(`${entry.direction} ${entry.amount.toString()} ${entry.amount.currency}`);
      },
    );
    const now = Date.now();
    const page = await statements.statementFor(
      { from: new Date(now - 3_600_000), to: new Date(now + 1000) },
      null,
      100,
    );
    expect(page.next).toBeNull();
    const mine = page.lines.filter((line) => line.idempotencyKey.startsWith('11111111-'));
    expect(mine.map((line) => [line.kind, line.idempotencyKey, line.currency, line.amount])).toEqual([
      ['payout', key, 'EUR', '100.25'],
      ['payout_return', '11111111-1111-4111-8111-111111111111:payout_return', 'EUR', '100.25'],
    ]);
    // Rejected and lost-then-retried payouts: one line each for what the bank booked, none for the rejection.
    expect(page.lines.filter((line) => line.idempotencyKey.startsWith('33333333-'))).toEqual([]);
    expect(page.lines.filter((line) => line.idempotencyKey.startsWith('44444444-'))).toHaveLength(1);
    expect(page.lines.filter((line) => line.kind === 'payout' && line.currency === 'USD')).toHaveLength(1);
    // The credit (no key: no operation of the service) is handed to the worker's keeper of unmatched entries.
    expect(unkeyed).toContain('CRDT 10.00 EUR');
  });

  it('returns a credit by pain.001 to the payer the camt.054 named, under the step’s key, once', async () => {
    const key = '77777777-7777-4777-8777-777777777777:refund';
    const request: ReturnRequest = {
      idempotencyKey: key,
      simulate: null,
      round: 0,
      amount: Money.parse('EUR', '249.00'),
      rail: 'sepa',
      deposit: { provider: 'iso20022', providerReference: 'CRDT-refund-1' },
    };
    const outcome = await rails.returnToSender(request);
    expect(outcome).toEqual({ status: 'completed', providerReference: endToEndIdOf(key) });
    const transfer = (await (await fetch(`${base}/_scenarios/transfers/${endToEndIdOf(key)}`)).json()) as Record<
      string,
      unknown
    >;
    expect(transfer).toMatchObject({
      status: 'ACSC',
      currency: 'EUR',
      amount: '249.00',
      creditorName: 'Max Mustermann',
      creditorAccount: { iban: 'DE02120300000000202051' },
      creditorAgent: { bic: 'BYLADEM1001' },
      remittance: key,
    });
    // Asked again (a retried step, an operator's next round): the same return, not a second one.
    expect(await rails.returnToSender(request)).toEqual(outcome);
    expect(await rails.returnToSender({ ...request, round: 1 })).toEqual(outcome);
    expect(await rails.lookUp('return', request)).toEqual({ state: 'executed', outcome });
  });

  it('a return the bank rejects is refused for the round; the next round sends it again under its own id', async () => {
    const key = 'deposit:88888888-8888-4888-8888-888888888888:return';
    const request: ReturnRequest = {
      idempotencyKey: key,
      simulate: 'return_error',
      round: 0,
      amount: Money.parse('EUR', '50.00'),
      rail: 'sepa',
      deposit: { provider: 'iso20022', providerReference: 'CRDT-refund-2' },
    };
    await expect(rails.returnToSender(request)).rejects.toThrow(ReturnRefusedError);
    expect(await rails.lookUp('return', request)).toEqual({ state: 'not_executed' });
    const retried = await rails.returnToSender({ ...request, round: 1 });
    expect(retried).toEqual({ status: 'completed', providerReference: returnEndToEndId(key, 1) });
    expect(await rails.lookUp('return', { ...request, round: 1 })).toEqual({ state: 'executed', outcome: retried });
    // A credit whose camt.054 the service has not read yet (no payer known): not now, asked again later.
    await expect(
      rails.returnToSender({
        ...request,
        idempotencyKey: 'x:refund',
        deposit: { provider: 'iso20022', providerReference: 'CRDT-unknown' },
      }),
    ).rejects.toThrow(RailUnavailableError);
  });
});

describe('the service’s accounts at the bank (ISO20022_ACCOUNTS)', () => {
  const accounts = {
    bank_name: 'Example Bank AG',
    bank_address: { street_line_1: '2 Bank Street', city: 'Berlin', postal_code: '10115', country: 'DEU' },
    EUR: { holder: 'Payments GmbH', iban: 'DE44500105175407324931', bic: 'INGDDEFFXXX' },
    USD: { holder: 'Payments Inc', account_number: '123456789012', routing_number: '026009593' },
  };
  const env = (extra: Record<string, string>) => ({ ...process.env, APP_ENV: 'sandbox', ...extra });

  it('is required with ISO20022_BANK_URL and checked', () => {
    expect(() => loadConfig(env({ ISO20022_BANK_URL: 'http://127.0.0.1:1/iso20022' }))).toThrow(/ISO20022_ACCOUNTS/);
    expect(() =>
      loadConfig(
        env({
          ISO20022_BANK_URL: 'http://127.0.0.1:1/iso20022',
          ISO20022_ACCOUNTS: JSON.stringify({ ...accounts, EUR: { ...accounts.EUR, iban: 'not an iban' } }),
        }),
      ),
    ).toThrow(/ISO20022_ACCOUNTS.*EUR\.iban/);
  });

  it('names the debtor of every pain.001 and the account deposits are paid to', async () => {
    const config = loadConfig(
      env({ ISO20022_BANK_URL: 'http://127.0.0.1:1/iso20022', ISO20022_ACCOUNTS: JSON.stringify(accounts) }),
    );
    const deposits = new Iso20022DepositProvider(collectionAccountsOf(config.iso20022!.accounts), {
      instructionsFor: async () => {
        throw new Error('not this rail');
      },
      stablecoinInstructionsFor: () => {
        throw new Error('not this rail');
      },
    });
    const request = {
      rail: 'wire' as const,
      amount: Money.parse('USD', '10.00'),
      reference: 'REF123',
      deadline: new Date('2026-12-01T00:00:00Z'),
    };
    expect(await deposits.instructionsFor(request as never)).toMatchObject({
      wire: {
        bank_account_number: '123456789012',
        routing_number: '026009593',
        bank_name: 'Example Bank AG',
        beneficiary_name: 'Payments Inc',
      },
    });
    // A payout from the configured EUR account: the bank's record of the pain.001 names its IBAN as the debtor.
    const configured = new Iso20022FiatRails(new Iso20022BankClient({ baseUrl: base, timeoutMs: 2000 }), others, {
      debtors: accountParties(config.iso20022!.accounts),
      settleWaitMs: 5000,
      pollIntervalMs: 100,
      simulate: false,
      payerOf: async () => null,
    });
    const key = '99999999-9999-4999-8999-999999999999:stablecoin_to_fiat';
    expect((await configured.payOut(sepaPayout(key))).status).toBe('completed');
    const pain001 = await (await fetch(`${base}/_scenarios/transfers/${endToEndIdOf(key)}`)).json();
    expect(pain001).toMatchObject({ status: 'ACSC', debtorAccount: { iban: 'DE44500105175407324931' } });
  });
});
