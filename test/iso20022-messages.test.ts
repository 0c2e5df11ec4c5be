// ISO 20022 codec: what the service sends validates against the official pain.001.001.09 XSD, and what a bank sends
// (pain.002, camt.054, camt.053) reads back into the same operations, amounts as exact decimals.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Money } from '../src/domain/money';
import {
  Iso20022FormatError,
  buildCamt053,
  buildCamt054,
  buildPain001,
  buildPain002,
  endToEndIdOf,
  parseCamt053,
  parseCamt054,
  parsePain001,
  parsePain002,
  validatePain001,
  type Pain001,
} from '../src/providers/iso20022/messages';

const fixtures = path.join(__dirname, 'fixtures', 'iso20022');
const createdAt = new Date('2026-11-26T10:00:00Z');

const sepa: Pain001 = {
  messageId: 'MSG-0001',
  createdAt,
  scheme: 'sepa',
  executionDate: '2026-11-26',
  debtor: { name: 'Payments Service', account: { iban: 'DE89370400440532013000' }, agent: { bic: 'COBADEFFXXX' } },
  transfers: [
    {
      endToEndId: endToEndIdOf('0b7c2a4e-7d59-4a8c-9a57-1c0f3e9d2b11:payout'),
      amount: Money.parse('EUR', '1234.50'),
      creditor: { name: 'Jane Doe', account: { iban: 'FR1420041010050500013M02606' }, agent: { bic: 'PSSTFRPPPAR' } },
      remittance: 'transaction 0b7c2a4e',
    },
  ],
};

describe('ISO 20022 messages', () => {
  it('builds a SEPA pain.001 that the official XSD accepts, with the amount as written decimals', async () => {
    const xml = buildPain001(sepa);
    await validatePain001(xml);
    expect(xml).toContain('<InstdAmt Ccy="EUR">1234.50</InstdAmt>');
    expect(xml).toContain('<CtrlSum>1234.50</CtrlSum>');
    const read = parsePain001(xml);
    expect(read.transfers[0]!.endToEndId).toBe(sepa.transfers[0]!.endToEndId);
    expect(read.transfers[0]!.amount.equals(Money.parse('EUR', '1234.50'))).toBe(true);
    expect(read.scheme).toBe('sepa');
    expect(xml).toBe(readFileSync(path.join(fixtures, 'pain.001-sepa.xml'), 'utf8'));
  });

  it('builds a US wire pain.001 (ABA routing number, account number) that the XSD accepts', async () => {
    const xml = buildPain001({
      ...sepa,
      scheme: 'wire',
      debtor: {
        name: 'Payments Service',
        account: { number: '000111222333' },
        agent: { abaRoutingNumber: '021000021' },
      },
      transfers: [
        {
          endToEndId: endToEndIdOf('k:payout'),
          amount: Money.parse('USD', '99.10'),
          creditor: { name: 'John Roe', account: { number: '000123456789' }, agent: { abaRoutingNumber: '026009593' } },
        },
      ],
    });
    await validatePain001(xml);
    expect(parsePain001(xml).transfers[0]!.creditor.agent).toEqual({ abaRoutingNumber: '026009593' });
    expect(parsePain001(xml).scheme).toBe('wire');
  });

  it('refuses a pain.001 the XSD rejects (an end-to-end id longer than 35 characters)', async () => {
    const xml = buildPain001({ ...sepa, transfers: [{ ...sepa.transfers[0]!, endToEndId: 'x'.repeat(36) }] });
    await expect(validatePain001(xml)).rejects.toThrow(Iso20022FormatError);
  });

  it('gives each of several concurrent validations its own verdict (they run one at a time)', async () => {
    const valid = buildPain001(sepa);
    const invalid = buildPain001({ ...sepa, transfers: [{ ...sepa.transfers[0]!, endToEndId: 'x'.repeat(36) }] });
    const verdicts = await Promise.allSettled(
      [valid, invalid, valid, invalid, valid].map((xml) => validatePain001(xml)),
    );
    expect(verdicts.map((verdict) => verdict.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect((verdicts[1] as PromiseRejectedResult).reason).toBeInstanceOf(Iso20022FormatError);
  });

  it('keeps end-to-end ids deterministic and within 35 characters', () => {
    const id = endToEndIdOf('0b7c2a4e-7d59-4a8c-9a57-1c0f3e9d2b11:deposit_return');
    expect(id).toHaveLength(32);
    expect(endToEndIdOf('0b7c2a4e-7d59-4a8c-9a57-1c0f3e9d2b11:deposit_return')).toBe(id);
    expect(endToEndIdOf('0b7c2a4e-7d59-4a8c-9a57-1c0f3e9d2b11:payout')).not.toBe(id);
  });

  it('reads a pain.002 with accepted and rejected lines and their reason codes', () => {
    const xml = buildPain002({
      messageId: 'STS-1',
      createdAt,
      originalMessageId: 'MSG-0001',
      statuses: [
        { endToEndId: 'A', status: 'ACCP' },
        { endToEndId: 'B', status: 'RJCT', reason: 'AC01' },
      ],
    });
    expect(parsePain002(xml)).toEqual({
      messageId: 'STS-1',
      createdAt,
      originalMessageId: 'MSG-0001',
      statuses: [
        { endToEndId: 'A', status: 'ACCP' },
        { endToEndId: 'B', status: 'RJCT', reason: 'AC01' },
      ],
    });
  });

  it('reads a camt.054 credit and a return with its ISO reason', () => {
    const xml = buildCamt054({
      messageId: 'NTF-1',
      createdAt,
      account: { iban: 'DE89370400440532013000' },
      entries: [
        {
          reference: 'BANK-1',
          amount: Money.parse('EUR', '250.00'),
          direction: 'CRDT',
          bookingDate: '2026-11-26',
          endToEndId: 'PAYER-E2E-1',
          counterpartyName: 'Max Mustermann',
          remittance: 'DEP-REF-123',
        },
        {
          reference: 'BANK-2',
          amount: Money.parse('EUR', '1234.50'),
          direction: 'CRDT',
          bookingDate: '2026-11-26',
          endToEndId: sepa.transfers[0]!.endToEndId,
          returnReason: 'AC04',
        },
      ],
    });
    expect(xml).toBe(readFileSync(path.join(fixtures, 'camt.054-credit-and-return.xml'), 'utf8'));
    const read = parseCamt054(xml);
    expect(read.entries).toHaveLength(2);
    expect(read.entries[0]).toMatchObject({
      reference: 'BANK-1',
      direction: 'CRDT',
      remittance: 'DEP-REF-123',
      counterpartyName: 'Max Mustermann',
    });
    expect(read.entries[0]!.amount.toString()).toBe('250.00');
    expect(read.entries[1]).toMatchObject({ returnReason: 'AC04', endToEndId: sepa.transfers[0]!.endToEndId });
  });

  it('reads a camt.053 with its balances and lines', () => {
    const xml = buildCamt053({
      messageId: 'STM-1',
      createdAt,
      statementId: 'STM-2026-11-26',
      account: { iban: 'DE89370400440532013000' },
      date: '2026-11-26',
      opening: Money.parse('EUR', '1000.00'),
      closing: Money.parse('EUR', '15.50'),
      entries: [
        {
          reference: 'BANK-3',
          amount: Money.parse('EUR', '1234.50'),
          direction: 'DBIT',
          bookingDate: '2026-11-26',
          endToEndId: 'E1',
        },
        { reference: 'BANK-4', amount: Money.parse('EUR', '250.00'), direction: 'CRDT', bookingDate: '2026-11-26' },
      ],
    });
    expect(xml).toBe(readFileSync(path.join(fixtures, 'camt.053-day.xml'), 'utf8'));
    const read = parseCamt053(xml);
    expect(read.date).toBe('2026-11-26');
    expect(read.opening.toString()).toBe('1000.00');
    expect(read.entries.map((entry) => [entry.reference, entry.direction, entry.amount.toString()])).toEqual([
      ['BANK-3', 'DBIT', '1234.50'],
      ['BANK-4', 'CRDT', '250.00'],
    ]);
  });

  it('refuses a document of another type', () => {
    const xml = buildPain002({ messageId: 'S', createdAt, originalMessageId: 'M', statuses: [] });
    expect(() => parseCamt054(xml)).toThrow(Iso20022FormatError);
  });
});
