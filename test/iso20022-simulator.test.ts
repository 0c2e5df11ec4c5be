// The bank simulator's ISO 20022 channel, as the service's adapter sees it over HTTP: pain.001 in, pain.002 back,
// settlement later, camt.054 credits (twice on demand) and returns, the day's camt.053, and its state kept across a
// restart.
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Money } from '../src/domain/money';
import {
  buildPain001,
  parseCamt053,
  parseCamt054,
  parsePain002,
  validatePain001,
} from '../src/providers/iso20022/messages';
import { createBankSimulatorApp } from '../simulators/bank/app';
import type { BankChannel } from '../simulators/bank/channel';
import { iso20022Channel, serviceAccounts } from '../simulators/bank/iso20022/channel';

const stateDir = mkdtempSync(path.join(os.tmpdir(), 'iso20022-sim-'));
let server: Server;
let channel: BankChannel;
let base: string;

async function startSimulator(): Promise<void> {
  channel = iso20022Channel({ stateDir, publicUrl: 'http://127.0.0.1' });
  server = createBankSimulatorApp([channel]).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/iso20022`;
  await channel.start?.();
}

async function stopSimulator(): Promise<void> {
  await channel.stop?.();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

beforeAll(async () => {
  process.env.ISO20022_SETTLE_MS = '200';
  await startSimulator();
});
afterAll(async () => {
  await stopSimulator();
  rmSync(stateDir, { recursive: true, force: true });
});

const today = new Date().toISOString().slice(0, 10);

async function send(endToEndId: string, amount = '100.00') {
  const xml = buildPain001({
    messageId: `MSG-${endToEndId}`,
    createdAt: new Date(),
    scheme: 'sepa',
    executionDate: today,
    debtor: { name: 'Payments Service', account: serviceAccounts.EUR, agent: { bic: 'COBADEFFXXX' } },
    transfers: [
      {
        endToEndId,
        amount: Money.parse('EUR', amount),
        creditor: { name: 'Jane Doe', account: { iban: 'FR1420041010050500013M02606' }, agent: { bic: 'PSSTFRPPPAR' } },
      },
    ],
  });
  await validatePain001(xml);
  return fetch(`${base}/payment-initiations`, {
    method: 'POST',
    body: xml,
    headers: { 'content-type': 'application/xml' },
  });
}

const scenario = (body: object) =>
  fetch(`${base}/_scenarios`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });

async function reports(after = 0): Promise<Array<{ sequence: number; type: string; xml: string }>> {
  const response = await fetch(`${base}/reports?after=${after}`);
  return ((await response.json()) as { reports: Array<{ sequence: number; type: string; xml: string }> }).reports;
}

async function settled(endToEndId: string): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const transfer = (await (await fetch(`${base}/_scenarios/transfers/${endToEndId}`)).json()) as { status: string };
    if (transfer.status === 'ACSC') return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${endToEndId} did not settle`);
}

describe('bank simulator, ISO 20022 channel', () => {
  it('accepts a pain.001, answers ACCP, and reports ACSC once settled; the same end-to-end id is one payment', async () => {
    const response = await send('E2E-ACCEPT', '1234.50');
    expect(response.status).toBe(200);
    expect(parsePain002(await response.text()).statuses).toEqual([{ endToEndId: 'E2E-ACCEPT', status: 'ACCP' }]);
    await settled('E2E-ACCEPT');
    const again = parsePain002(await (await send('E2E-ACCEPT', '1234.50')).text());
    expect(again.statuses).toEqual([{ endToEndId: 'E2E-ACCEPT', status: 'ACSC' }]);
    const statuses = (await reports())
      .filter((item) => item.type === 'pain.002')
      .flatMap((item) => parsePain002(item.xml).statuses)
      .filter((line) => line.endToEndId === 'E2E-ACCEPT');
    expect(statuses.map((line) => line.status)).toEqual(['ACCP', 'ACSC', 'ACSC']);
  });

  it('rejects with the ISO reason code asked for', async () => {
    await scenario({ kind: 'reject_next', reason: 'AM04' });
    const answer = parsePain002(await (await send('E2E-REJECT')).text());
    expect(answer.statuses).toEqual([{ endToEndId: 'E2E-REJECT', status: 'RJCT', reason: 'AM04' }]);
  });

  it('loses a pain.002 (504) yet keeps the payment: asking again answers its status', async () => {
    await scenario({ kind: 'lose_next_status' });
    expect((await send('E2E-LOST')).status).toBe(504);
    const answer = parsePain002(await (await send('E2E-LOST')).text());
    expect(answer.statuses[0]!.status).toMatch(/ACCP|ACSC/);
  });

  it('is down for a while: 503, then answers again', async () => {
    await scenario({ kind: 'down', seconds: 30 });
    expect((await send('E2E-DOWN')).status).toBe(503);
    await scenario({ kind: 'up' });
    expect((await send('E2E-DOWN')).status).toBe(200);
  });

  it('reports a credit twice on demand (one movement, two notifications) and a return after completion', async () => {
    const before = (await reports()).at(-1)!.sequence;
    const credit = (await (
      await scenario({ kind: 'credit', currency: 'EUR', amount: '250.00', remittance: 'DEP-1', times: 2 })
    ).json()) as { reference: string };
    await scenario({ kind: 'return', endToEndId: 'E2E-ACCEPT', reason: 'AC04' });
    const notifications = (await reports(before))
      .filter((item) => item.type === 'camt.054')
      .map((item) => parseCamt054(item.xml));
    expect(notifications.map((item) => item.entries[0]!.reference)).toEqual([
      credit.reference,
      credit.reference,
      expect.any(String),
    ]);
    expect(notifications[0]!.entries[0]).toMatchObject({ direction: 'CRDT', remittance: 'DEP-1' });
    expect(notifications[2]!.entries[0]).toMatchObject({
      endToEndId: 'E2E-ACCEPT',
      returnReason: 'AC04',
      direction: 'CRDT',
    });
    expect(notifications[2]!.entries[0]!.amount.toString()).toBe('1234.50');
    expect((await scenario({ kind: 'return', endToEndId: 'E2E-ACCEPT' })).status).toBe(409);
  });

  it('keeps its state across a restart, and its camt.053 lists each movement once', async () => {
    await stopSimulator();
    await startSimulator();
    const statement = parseCamt053(await (await fetch(`${base}/statements/EUR/${today}`)).text());
    const lines = statement.entries.map((entry) => [
      entry.direction,
      entry.amount.toString(),
      entry.returnReason ?? null,
    ]);
    expect(lines).toEqual(
      expect.arrayContaining([
        ['DBIT', '1234.50', null],
        ['CRDT', '250.00', null],
        ['CRDT', '1234.50', 'AC04'],
      ]),
    );
    expect(statement.entries.filter((entry) => entry.amount.toString() === '250.00')).toHaveLength(1);
    const movement = statement.entries.reduce(
      (sum, entry) => (entry.direction === 'CRDT' ? sum.plus(entry.amount) : sum.minus(entry.amount)),
      Money.zero('EUR'),
    );
    expect(statement.closing.equals(statement.opening.plus(movement))).toBe(true);
  });
});
