// Refunds in production mode (APP_ENV=production) through the ISO 20022 bank of this file's simulator process: money
// that came in by camt.054 goes back by pain.001 to the account the credit came from (the payer's IBAN the bank
// named), under the step's idempotency key. A deposit of another amount than the quote's is refunded (payin.refunded,
// balanced ledger); a deposit arriving after its transaction was cancelled is sent back; a return the bank rejects
// leaves the deposit `return_failed` for an operator. The exchange and the chain rows are configured as in
// test/production-settlement.test.ts (quotes need them), but none of these transactions reaches leg 1.
import type { WorkflowHandle } from '@temporalio/client';
import { endToEndIdOf } from '../src/providers/iso20022/messages';
import { returnEndToEndId } from '../src/providers/iso20022/fiat-rails';
import { DenyListScreening } from '../src/providers/screening';
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
import { eventTypesOf, ledgerOf, type TransactionBody } from './support/transactions';

let harness: Harness;
let reader: WorkflowHandle;
let partner: TestPartner;
let customerId: string;
let walletId: string;
let wireAccountId: string;
let bank: LocalBankSimulator;
const chainUrl = process.env.TEST_CHAIN_RPC_URL;

beforeAll(async () => {
  if (!chainUrl) throw new Error('run with npm test: Anvil comes from its set-up');
  bank = await startTestBank();
  harness = await startHarness(
    {
      ...productionOutsideWorldEnv(bank, chainUrl),
    },
    { bank },
  );
  harness.services.accountScreening = new DenyListScreening([]);
  partner = await harness.createPartner();
  customerId = (await approvedCustomer(harness, partner.api)).id;
  walletId = (await createWallet(partner.api, customerId, 'ethereum')).id;
  wireAccountId = (await createExternalAccount(partner.api, externalAccount(customerId, 'wire'))).id;
  reader = await startBankReportReader(harness);
});
afterAll(async () => {
  await reader?.terminate().catch(() => undefined);
  await harness?.teardown();
  await bank?.stop();
});

async function eurToUsd(): Promise<TransactionBody> {
  const quote = await partner.api.post('/v1/quote/fiat-to-fiat').send({
    sender: { currency: 'EUR', payment_rail: 'sepa', amount: '250.00' },
    stablecoin: { currency: 'USDC', payment_rail: 'ethereum' },
    receiver: { currency: 'USD', payment_rail: 'wire' },
  });
  expect(quote.status).toBe(201);
  const created = await partner.api.post('/v1/fiat-to-fiat').send({
    quote_id: quote.body.id,
    customer_id: customerId,
    wallet_id: walletId,
    sender: { name: 'Jane Doe', document: { type: 'passport', number: 'X1234567' } },
    receiver: { external_account_id: wireAccountId },
  });
  expect(created.status).toBe(201);
  return created.body as TransactionBody;
}

async function until(probe: () => Promise<boolean>, what: string, limitMs = 90_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const PAYER = { payerName: 'Jane Doe', payerIban: 'DE02120300000000202051', payerBic: 'BYLADEM1001' };

const depositsOf = (transactionId: string) => harness.prisma.transactionDeposit.findMany({ where: { transactionId } });

describe('ISO 20022 refunds in production mode', () => {
  it('refunds a deposit of another amount by pain.001 to the payer’s IBAN: payin.refunded, balanced ledger', async () => {
    const transaction = await eurToUsd();
    await bankScenario(harness, {
      kind: 'credit',
      currency: 'EUR',
      amount: '249.00',
      remittance: transaction.sender_deposit_instructions.reference,
      ...PAYER,
    });
    await until(
      async () =>
        (await harness.prisma.transaction.findUniqueOrThrow({ where: { id: transaction.id } })).status === 'refunded',
      'the transaction is refunded',
    );
    const refund = await bankTransfer(harness, endToEndIdOf(`${transaction.id}:refund`));
    expect(refund).toMatchObject({
      status: 'ACSC',
      currency: 'EUR',
      amount: '249.00',
      creditorName: 'Jane Doe',
      creditorAccount: { iban: PAYER.payerIban },
      creditorAgent: { bic: PAYER.payerBic },
      remittance: `${transaction.id}:refund`,
    });
    const [deposit] = await depositsOf(transaction.id);
    expect(deposit).toMatchObject({ provider: 'iso20022', status: 'returned' });
    expect(await eventTypesOf(harness, transaction.id)).toEqual(
      expect.arrayContaining(['payin.created', 'payin.processing', 'payin.refunded']),
    );
    const ledger = await ledgerOf(harness, transaction.id);
    expect(ledger.balanced).toBe(true);
    expect(ledger.net['fiat_clearing:EUR'] ?? '0').toBe('0');
    const final = await partner.api.get(`/v1/transactions/${transaction.id}`);
    expect(final.body).toMatchObject({ status: 'refunded', failure_reason: 'deposit_amount_mismatch' });
  });

  it('sends a deposit that arrives after its transaction was cancelled back to the payer', async () => {
    const transaction = await eurToUsd();
    const cancelled = await partner.api.put(`/v1/transactions/${transaction.id}`).send({ status: 'cancelled' });
    expect(cancelled.status).toBe(200);
    await bankScenario(harness, {
      kind: 'credit',
      currency: 'EUR',
      amount: '250.00',
      remittance: transaction.sender_deposit_instructions.reference,
      ...PAYER,
      payerIban: 'DE02500105170137075030',
    });
    await until(
      async () => (await depositsOf(transaction.id)).some((deposit) => deposit.status === 'returned'),
      'the late deposit is returned',
    );
    const [deposit] = await depositsOf(transaction.id);
    const sent = await bankTransfer(harness, endToEndIdOf(`deposit:${deposit!.id}:return`));
    expect(sent).toMatchObject({
      status: 'ACSC',
      amount: '250.00',
      creditorAccount: { iban: 'DE02500105170137075030' },
    });
  });

  it('leaves a return the bank rejects `return_failed`, nothing sent, for an operator', async () => {
    const transaction = await eurToUsd();
    expect((await partner.api.put(`/v1/transactions/${transaction.id}`).send({ status: 'cancelled' })).status).toBe(
      200,
    );
    // The bank rejects the next payment it receives: the return of this deposit (AC04, closed account).
    await bankScenario(harness, { kind: 'reject_next', reason: 'AC04' });
    await bankScenario(harness, {
      kind: 'credit',
      currency: 'EUR',
      amount: '250.00',
      remittance: transaction.sender_deposit_instructions.reference,
      ...PAYER,
    });
    await until(
      async () => (await depositsOf(transaction.id)).some((deposit) => deposit.status === 'return_failed'),
      'the return fails',
    );
    const [deposit] = await depositsOf(transaction.id);
    const key = `deposit:${deposit!.id}:return`;
    expect(await bankTransfer(harness, returnEndToEndId(key, 0))).toMatchObject({ status: 'RJCT', reason: 'AC04' });
    expect(await bankTransfer(harness, returnEndToEndId(key, 1))).toBeNull();
  });
});
