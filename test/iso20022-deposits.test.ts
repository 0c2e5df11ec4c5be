// camt.054 into the service against a bank simulator process of this file's (a real HTTP channel): a SEPA credit notified
// twice funds its transaction once, through the same deposit path as every other credit; the transaction settles and
// its USD wire is paid at the bank; the bank's return of that wire after completion (AC04) comes back through the
// payout-return path with its event; a credit naming no transaction is kept for operators (bank_unmatched_entries,
// npm run bank:unmatched, the payments_bank_unmatched_entries gauge).
import type { WorkflowHandle } from '@temporalio/client';
import { endToEndIdOf } from '../src/providers/iso20022/messages';
import { findBankCreditDebtor, listUnmatchedBankEntries } from '../src/persistence/bank-credits';
import { readMonitoringSnapshot } from '../src/persistence/monitoring';
import { unmatchedLines } from '../scripts/bank-unmatched';
import { createExternalAccount, externalAccount } from './support/fixtures';
import { type Harness, startHarness } from './support/harness';
import { keepHistoryIfAsked } from './support/histories';
import { bankScenario, bankTransfer, startBankReportReader, startTestBank } from './support/bank';
import type { LocalBankSimulator } from '../scripts/lib/bank-simulator';
import { eventTypesOf, fiatToFiatBody, type Parties, setUpParties, type TransactionBody } from './support/transactions';

let harness: Harness;
let parties: Parties;
let wireAccountId: string;
let reader: WorkflowHandle;
let bank: LocalBankSimulator;

beforeAll(async () => {
  bank = await startTestBank();
  harness = await startHarness({}, { bank, chain: false });
  parties = await setUpParties(harness);
  wireAccountId = (await createExternalAccount(parties.partner.api, externalAccount(parties.customer.id, 'wire'))).id;
  reader = await startBankReportReader(harness);
});
afterAll(async () => {
  if (reader) await keepHistoryIfAsked(harness.env.client, reader.workflowId, 'reading');
  await reader?.terminate().catch(() => undefined);
  await harness?.teardown();
  await bank?.stop();
});

const eurToUsd = {
  sender: { currency: 'EUR', payment_rail: 'sepa', amount: '100.00' },
  stablecoin: { currency: 'USDC', payment_rail: 'solana' },
  receiver: { currency: 'USD', payment_rail: 'wire' },
};

async function eurToUsdTransaction(): Promise<TransactionBody> {
  const quote = await parties.partner.api.post('/v1/quote/fiat-to-fiat').send(eurToUsd);
  expect(quote.status).toBe(201);
  const created = await parties.partner.api
    .post('/v1/fiat-to-fiat')
    .send(fiatToFiatBody(parties, quote.body.id, { receiver: { external_account_id: wireAccountId } }));
  expect(created.status).toBe(201);
  return created.body as TransactionBody;
}

/** Real time: the reader polls the bank every second and the wire settles at the bank in 300 ms. */
async function until(probe: () => Promise<boolean>, what: string, limitMs = 60_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const statusOf = async (id: string) => (await harness.prisma.transaction.findUniqueOrThrow({ where: { id } })).status;

describe('camt.054 credits and returns', () => {
  let transaction: TransactionBody;

  it('pays EUR deposits to the service’s IBAN at the bank, with the deposit reference as remittance', async () => {
    transaction = await eurToUsdTransaction();
    expect(transaction.sender_deposit_instructions).toMatchObject({
      payment_rail: 'sepa',
      sepa: { iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' },
    });
  });

  it('records a credit the bank notifies twice once, and the transaction completes with its wire paid', async () => {
    const credit = await bankScenario(harness, {
      kind: 'credit',
      currency: 'EUR',
      amount: transaction.sender.amount,
      remittance: transaction.sender_deposit_instructions.reference,
      payerName: 'Jane Doe',
      times: 2,
    });
    await until(async () => (await statusOf(transaction.id)) === 'completed', 'the transaction completes');
    const deposits = await harness.prisma.transactionDeposit.findMany({ where: { transactionId: transaction.id } });
    expect(deposits).toHaveLength(1);
    expect(deposits[0]).toMatchObject({
      provider: 'iso20022',
      providerReference: credit.reference,
      senderName: 'Jane Doe',
      status: 'accepted',
    });
    expect(deposits[0]!.amount.toString()).toBe(Number(transaction.sender.amount).toString());
    const wire = await bankTransfer(harness, endToEndIdOf(`${transaction.id}:stablecoin_to_fiat`));
    expect(wire).toMatchObject({ status: 'ACSC', currency: 'USD', amount: transaction.receiver.amount });
    expect(await eventTypesOf(harness, transaction.id)).toContain('payin.completed');
  });

  it('takes the bank’s return of the completed wire (AC04) through the return path, with its event', async () => {
    await bankScenario(harness, {
      kind: 'return',
      endToEndId: endToEndIdOf(`${transaction.id}:stablecoin_to_fiat`),
      reason: 'AC04',
    });
    await until(async () => (await statusOf(transaction.id)) === 'returned', 'the transaction is returned');
    const returns = await harness.prisma.transactionPayoutReturn.findMany({ where: { transactionId: transaction.id } });
    expect(returns).toHaveLength(1);
    expect(returns[0]).toMatchObject({ provider: 'iso20022', reasonCode: 'AC04', currency: 'USD' });
    expect(returns[0]!.amount.toString()).toBe(Number(transaction.receiver.amount).toString());
    expect(await eventTypesOf(harness, transaction.id)).toContain('payin.returned');
  });

  it('leaves a credit naming no transaction unrecorded, and still takes the next one', async () => {
    const other = await eurToUsdTransaction();
    const stray = await bankScenario(harness, {
      kind: 'credit',
      currency: 'EUR',
      amount: '12.34',
      remittance: 'NOT-A-REFERENCE',
    });
    await bankScenario(harness, {
      kind: 'credit',
      currency: 'EUR',
      amount: other.sender.amount,
      remittance: other.sender_deposit_instructions.reference,
    });
    // The reader reads in order: once the second credit is recorded, the first was read and left alone.
    await until(
      async () => (await harness.prisma.transactionDeposit.count({ where: { transactionId: other.id } })) === 1,
      'the second credit is recorded',
    );
    expect(
      await harness.prisma.transactionDeposit.count({
        where: { provider: 'iso20022', providerReference: stray.reference },
      }),
    ).toBe(0);
    // Kept for operators, once (the reader may read the notification again), and listed by npm run bank:unmatched.
    const kept = (await listUnmatchedBankEntries(harness.prisma)).filter(
      (entry) => entry.entryReference === stray.reference,
    );
    expect(kept).toEqual([
      expect.objectContaining({
        bank: 'iso20022',
        source: 'camt.054',
        account: 'DE89370400440532013000',
        direction: 'CRDT',
        amount: '12.34',
        currency: 'EUR',
        remittance: 'NOT-A-REFERENCE',
        bookingDate: new Date().toISOString().slice(0, 10),
        messageId: expect.stringMatching(/^NTF-/),
        detail: expect.stringContaining('names no transaction'),
      }),
    ]);
    const lines = unmatchedLines(kept);
    expect(lines[1]).toContain(`\t12.34\tEUR\t${stray.reference}\t`);
    expect((await readMonitoringSnapshot(harness.prisma)).bankUnmatchedEntries).toBeGreaterThanOrEqual(1);
    // The credit that funded a transaction is kept with its payer's account: where a refund would go.
    const [deposit] = await harness.prisma.transactionDeposit.findMany({ where: { transactionId: other.id } });
    expect(await findBankCreditDebtor(harness.prisma, 'iso20022', deposit!.providerReference)).toEqual({
      name: 'Payer',
      account: { iban: 'FR7630006000011234567890189' },
      agent: { bic: 'AGRIFRPPXXX' },
    });
  });

  it('iso_credit_notified_twice: the sandbox deposit is credited at the bank, its two camt.054s one deposit', async () => {
    const other = await eurToUsdTransaction();
    const answered = await parties.partner.api
      .post(`/v1/sandbox/transactions/${other.id}/deposit`)
      .send({ amount: other.sender.amount, sender_name: 'Jane Doe', simulate: 'iso_credit_notified_twice' });
    expect(answered.status).toBe(201);
    const [deposit] = await harness.prisma.transactionDeposit.findMany({ where: { transactionId: other.id } });
    expect(deposit).toMatchObject({ provider: 'iso20022', providerReference: expect.stringMatching(/^CRDT-/) });
    await until(async () => (await statusOf(other.id)) === 'completed', 'the transaction completes');
    // Both notifications were read (the credit's row is kept, with its payer), and still one deposit.
    const head = (
      (await (await fetch(`${bank.url}/iso20022/reports?after=0&limit=500`)).json()) as {
        reports: Array<{ type: string; xml: string }>;
      }
    ).reports.filter((report) => report.type === 'camt.054' && report.xml.includes(deposit!.providerReference));
    expect(head).toHaveLength(2);
    await until(
      async () => (await findBankCreditDebtor(harness.prisma, 'iso20022', deposit!.providerReference)) !== null,
      'the camt.054 is read',
    );
    expect(await harness.prisma.transactionDeposit.count({ where: { transactionId: other.id } })).toBe(1);
  });

  it('iso_payout_returned: the bank returns the completed wire (AC04), the transaction is returned', async () => {
    const other = await eurToUsdTransaction();
    const answered = await parties.partner.api
      .post(`/v1/sandbox/transactions/${other.id}/deposit`)
      .send({ amount: other.sender.amount, simulate: 'iso_payout_returned' });
    expect(answered.status).toBe(201);
    await until(async () => (await statusOf(other.id)) === 'returned', 'the transaction is returned');
    const returns = await harness.prisma.transactionPayoutReturn.findMany({ where: { transactionId: other.id } });
    expect(returns).toEqual([expect.objectContaining({ provider: 'iso20022', reasonCode: 'AC04', currency: 'USD' })]);
    expect(await eventTypesOf(harness, other.id)).toEqual(
      expect.arrayContaining(['payin.completed', 'payin.returned']),
    );
  });
});
