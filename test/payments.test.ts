// Pay-ins (POST /v1/payin: leg 1 alone) and payouts (POST /v1/payout: leg 2 alone, from a wallet or
// with the stablecoin sent in and POST /v1/payout/confirm), over HTTP with time skipping: each flow to
// its final status with its events, each refusal with nothing created and the quote still usable,
// cancel, deadline, a rejected payout refunded, error and the operator, concurrent payouts from one
// wallet, the ledger invariants after each; and POST /webhooks/mock payloads shaped as real ones.
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { Decimal, Money } from '../src/domain/money';
import { decideVirtualAccountDeposit } from '../src/domain/transactions';
import { ledgerAccounts } from '../src/domain/ledger';
import { ledgerBalances } from '../src/persistence/ledger';
import { isUniqueViolation, type Database, withDatabaseTransaction } from '../src/persistence/database';
import { Prisma } from '../src/persistence/generated/prisma/client';
import { newId } from '../src/domain/ids';
import { findCustomer } from '../src/persistence/customers';
import { findExternalAccount } from '../src/persistence/external-accounts';
import { findQuote } from '../src/persistence/quotes';
import {
  findTransactionDeposit,
  insertTransaction,
  lockTransactionRow,
  readTransactionRow,
  withReceiverAccount,
} from '../src/persistence/transactions';
import { findWallet } from '../src/persistence/wallets';
import { receiveVirtualAccountCredit } from '../src/services/transactions/virtual-account-deposits';
import { transactionSchema } from '../src/schemas/transactions';
import { workflowIds } from '../src/temporal/workflow-ids';
import { resolveErrorUpdate } from '../workflows/settlement';
import { createWallet, virtualAccountBody } from './support/accounts';
import { createExternalAccount, externalAccount } from './support/fixtures';
import { Harness, startHarness } from './support/harness';
import {
  balanceOf,
  createPayin,
  createPayout,
  expectPaymentLedgerInvariants,
  fundWallet,
  payinBody,
  payinQuoteBody,
  payoutBody,
  payoutQuoteBody,
  quote,
} from './support/payments';
import {
  createQuote,
  createTransaction,
  deposit,
  eventTypesOf,
  ledgerOf,
  Parties,
  setUpParties,
  settlementHandle,
  TransactionBody,
  waitForStatus,
} from './support/transactions';
import { WebhookReceiver } from './support/webhook-receiver';
import { configureWebhooks, verifiesWithStandardWebhooks } from './support/webhooks';

let harness: Harness;
let parties: Parties;

beforeAll(async () => {
  harness = await startHarness();
  parties = await setUpParties(harness);
});
afterAll(() => harness?.teardown());

const get = async (id: string, p: Parties = parties): Promise<TransactionBody> => {
  const response = await p.partner.api.get(`/v1/transactions/${id}`);
  expect(response.status).toBe(200);
  return response.body as TransactionBody;
};

async function expectInvariants(id: string, p: Parties = parties) {
  const transaction = await get(id, p);
  const ledger = await ledgerOf(harness, id);
  expectPaymentLedgerInvariants(ledger, transaction, p.partner.partnerId);
  return { transaction, ledger };
}

const transactionCount = (p: Parties = parties) =>
  harness.prisma.transaction.count({ where: { partnerId: p.partner.partnerId } });
const cancel = (id: string) => parties.partner.api.put(`/v1/transactions/${id}`).send({ status: 'cancelled' });
const confirm = (id: string, body: Record<string, unknown> = {}) =>
  parties.partner.api.post('/v1/payout/confirm').send({ transaction_id: id, tx_hash: solanaTxHash, ...body });
const solanaTxHash = '5'.repeat(88);
const resolve = (id: string, action: 'retry' | 'refund') =>
  settlementHandle(harness, id).executeUpdate(resolveErrorUpdate, { args: [{ action }] });

describe('pay-ins', () => {
  it('takes a deposit to completed, crediting the stablecoin to the wallet, leg 1 alone', async () => {
    const before = await balanceOf(parties.partner.api, parties.wallet.id);
    const payinQuote = await quote(parties.partner.api, payinQuoteBody());
    const response = await parties.partner.api.post('/v1/payin').send(payinBody(parties, payinQuote.id));
    expect(response.status).toBe(201);
    const created = response.body as TransactionBody;
    expect(created).toEqual({
      id: expect.any(String),
      type: 'payin',
      status: 'awaiting_deposit',
      customer_id: parties.customer.id,
      wallet_id: parties.wallet.id,
      quote_id: payinQuote.id,
      sender: {
        name: 'Ana Souza',
        document: { type: 'passport', number: 'X1234567' },
        currency: 'USD',
        payment_rail: 'ach',
        amount: '1000.00',
      },
      stablecoin: { currency: 'USDC', payment_rail: 'solana', amount: payinQuote.receiver.amount },
      receiver: {
        wallet_id: parties.wallet.id,
        address: parties.wallet.address,
        currency: 'USDC',
        payment_rail: 'solana',
        amount: payinQuote.receiver.amount,
      },
      sender_quotation: payinQuote.quotation,
      receiver_quotation: null,
      fees: {
        service_fee: { amount: payinQuote.fees.service_fee, currency: 'USD' },
        partner_fee: { amount: '0.00', currency: 'USD' },
        network_fee: { amount: payinQuote.fees.network_fee, currency: 'USD' },
        total: { amount: payinQuote.fees.total, currency: 'USD' },
      },
      sender_deposit_instructions: expect.objectContaining({
        payment_rail: 'ach',
        currency: 'USD',
        amount: '1000.00',
        reference: expect.stringMatching(/^TX/),
        ach: expect.objectContaining({ routing_number: expect.any(String) }),
      }),
      deposit_deadline: expect.any(String),
      failure_reason: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    // ACH gives the sender 3 days.
    expect(Date.parse(created.deposit_deadline as string) - Date.parse(created.created_at as string)).toBe(
      3 * 86_400_000,
    );

    expect((await deposit(parties, created)).status).toBe('accepted');
    expect(await settlementHandle(harness, created.id).result()).toBe('completed');
    const { transaction, ledger } = await expectInvariants(created.id);
    expect(transaction).toEqual({ ...created, status: 'completed', updated_at: expect.any(String) });
    expect(ledger.references).toEqual(['deposit', 'fiat_to_stablecoin', 'delivered']);
    expect(await eventTypesOf(harness, created.id)).toEqual(['payin.created', 'payin.processing', 'payin.completed']);
    expect(await balanceOf(parties.partner.api, parties.wallet.id)).toBe(
      new Decimal(before).plus(created.stablecoin.amount).toFixed(6),
    );
    // Leg 1 ran as a child; there is no leg 2.
    const leg1 = harness.env.client.workflow.getHandle(workflowIds.transactionLeg(created.id, 'fiat-to-stablecoin'));
    expect((await leg1.describe()).status.name).toBe('COMPLETED');
    const leg2 = harness.env.client.workflow.getHandle(workflowIds.transactionLeg(created.id, 'stablecoin-to-fiat'));
    await expect(leg2.describe()).rejects.toThrow();
  });

  it('refuses every precondition with nothing created and the quote still usable', async () => {
    // Set up first: approving a customer waits on its workflow, which lets the test server skip time (a quote made
    // before could expire meanwhile).
    const other = await setUpParties(harness, parties.partner);
    const ethereumWallet = await createWallet(parties.partner.api, parties.customer.id, 'ethereum');
    const payinQuote = await quote(parties.partner.api, payinQuoteBody());
    const fiatQuote = await createQuote(parties.partner.api);
    const count = await transactionCount();
    const refusals: Array<[Record<string, unknown>, number, string, string?]> = [
      [payinBody(parties, fiatQuote.id), 422, 'quote_type_mismatch'],
      [payinBody(parties, '00000000-0000-4000-8000-000000000000'), 404, 'not_found'],
      [payinBody(parties, payinQuote.id, { wallet_id: other.wallet.id }), 422, 'customer_mismatch'],
      [payinBody(parties, payinQuote.id, { wallet_id: ethereumWallet.id }), 422, 'quote_currency_mismatch'],
      [
        payinBody(parties, payinQuote.id, {
          sender: { name: 'Ana Souza', document: { type: 'passport', number: 'X1234567' }, amount: '10.00' },
        }),
        422,
        'quote_amount_mismatch',
      ],
      [payinBody(parties, payinQuote.id, { sender: { name: 'Ana' } }), 400, 'validation_error', 'sender.document'],
    ];
    for (const [body, status, code, param] of refusals) {
      const refused = await parties.partner.api.post('/v1/payin').send(body);
      expect([refused.status, refused.body.error.code]).toEqual([status, code]);
      if (param) expect(refused.body.error.details.map((d: { param: string }) => d.param)).toContain(param);
    }
    expect(await transactionCount()).toBe(count);
    // The quote is still usable, once.
    expect((await parties.partner.api.post('/v1/payin').send(payinBody(parties, payinQuote.id))).status).toBe(201);
    const used = await parties.partner.api.post('/v1/payin').send(payinBody(parties, payinQuote.id));
    expect(used.body.error.code).toBe('quote_already_used');
    // A rate-only quote takes the amount, priced with the locked rate, within the ranges.
    const rateOnly = await quote(
      parties.partner.api,
      payinQuoteBody({ sender: { currency: 'USD', payment_rail: 'ach' } }),
    );
    const withAmount = (amount: string) =>
      parties.partner.api.post('/v1/payin').send(
        payinBody(parties, rateOnly.id, {
          sender: { name: 'Ana Souza', document: { type: 'passport', number: 'X1234567' }, amount },
        }),
      );
    expect((await withAmount('99999.00')).body.error.code).toBe('amount_out_of_range');
    const priced = await withAmount('250.00');
    expect(priced.status).toBe(201);
    expect(priced.body.sender.amount).toBe('250.00');
    // An expired quote.
    const expiring = await quote(parties.partner.api, payinQuoteBody());
    await harness.env.sleep('6 minutes');
    expect((await parties.partner.api.post('/v1/payin').send(payinBody(parties, expiring.id))).body.error.code).toBe(
      'quote_expired',
    );
  });

  it('cancels only while awaiting the deposit (payin_cannot_be_cancelled after); the deadline fails it', async () => {
    const created = await createPayin(parties);
    expect((await cancel(created.id)).status).toBe(200);
    expect(await settlementHandle(harness, created.id).result()).toBe('cancelled');
    expect(await eventTypesOf(harness, created.id)).toEqual(['payin.created', 'payin.cancelled']);
    const again = await cancel(created.id);
    expect([again.status, again.body.error.code]).toEqual([422, 'payin_cannot_be_cancelled']);
    expect((await expectInvariants(created.id)).ledger.references).toEqual([]);

    const late = await createPayin(parties);
    expect(await settlementHandle(harness, late.id).result()).toBe('failed');
    expect(await get(late.id)).toMatchObject({ status: 'failed', failure_reason: 'deposit_deadline_passed' });
    expect(await eventTypesOf(harness, late.id)).toEqual(['payin.created', 'payin.failed']);
  });

  it('waits in error when the conversion keeps failing; the operator’s refund returns the deposit', async () => {
    const before = await balanceOf(parties.partner.api, parties.wallet.id);
    const created = await createPayin(parties);
    await deposit(parties, created, { simulate: 'conversion_error' });
    await waitForStatus(harness, created.id, 'error');
    expect(await get(created.id)).toMatchObject({ status: 'error', failure_reason: 'conversion_failed' });
    expect(await resolve(created.id, 'refund')).toBe('refund');
    expect(await settlementHandle(harness, created.id).result()).toBe('refunded');
    const { transaction, ledger } = await expectInvariants(created.id);
    expect(transaction.failure_reason).toBe('refunded_by_operator');
    expect(ledger.references).toEqual(['deposit', 'refund']);
    expect(await eventTypesOf(harness, created.id)).toEqual([
      'payin.created',
      'payin.processing',
      'payin.error',
      'payin.processing',
      'payin.refunded',
    ]);
    expect(await balanceOf(parties.partner.api, parties.wallet.id)).toBe(before);
  });
});

describe('payouts from a wallet', () => {
  let funded: Parties;
  beforeAll(async () => {
    funded = await setUpParties(harness, parties.partner);
    await fundWallet(harness, funded);
  });

  it('debits the wallet at once, starts processing and completes; neither confirmable nor cancellable', async () => {
    const before = await balanceOf(funded.partner.api, funded.wallet.id);
    const payoutQuote = await quote(funded.partner.api, payoutQuoteBody());
    const response = await funded.partner.api.post('/v1/payout').send(payoutBody(funded, payoutQuote.id));
    expect(response.status).toBe(201);
    const created = response.body as TransactionBody;
    expect(created).toMatchObject({
      type: 'payout',
      status: 'processing',
      wallet_id: funded.wallet.id,
      quote_id: payoutQuote.id,
      sender: { wallet_id: funded.wallet.id, currency: 'USDC', payment_rail: 'solana', amount: '100.000000' },
      receiver: {
        external_account_id: funded.externalAccountId,
        currency: 'MXN',
        payment_rail: 'spei',
        amount: payoutQuote.receiver.amount,
        beneficiary_name: 'María López',
      },
      sender_quotation: null,
      receiver_quotation: payoutQuote.quotation,
      fees: { partner_fee: { amount: '1.000000', currency: 'USDC' } },
      sender_deposit_instructions: null,
      deposit_deadline: null,
    });
    expect(created.stablecoin.amount).toBe(new Decimal('100').minus(created.fees.total.amount).toFixed(6));
    expect(await balanceOf(funded.partner.api, funded.wallet.id)).toBe(new Decimal(before).minus('100').toFixed(6));

    const notAwaiting = await funded.partner.api
      .post('/v1/payout/confirm')
      .send({ transaction_id: created.id, tx_hash: solanaTxHash });
    expect([notAwaiting.status, notAwaiting.body.error.code]).toEqual([422, 'payout_cannot_be_confirmed']);
    const cancelled = await funded.partner.api.put(`/v1/transactions/${created.id}`).send({ status: 'cancelled' });
    expect([cancelled.status, cancelled.body.error.code]).toEqual([422, 'payout_cannot_be_cancelled']);

    expect(await settlementHandle(harness, created.id).result()).toBe('completed');
    const { transaction, ledger } = await expectInvariants(created.id, funded);
    expect(transaction).toEqual({ ...created, status: 'completed', updated_at: expect.any(String) });
    expect(ledger.references).toEqual(['funding', 'stablecoin_to_fiat', 'payout']);
    expect(await eventTypesOf(harness, created.id)).toEqual(['payout.created', 'payout.completed']);
  });

  it('refunds a rejected payout to the wallet (payout.refunded)', async () => {
    const before = await balanceOf(funded.partner.api, funded.wallet.id);
    const created = await createPayout(funded, { simulate: 'payout_rejected' });
    expect(await settlementHandle(harness, created.id).result()).toBe('refunded');
    const { transaction, ledger } = await expectInvariants(created.id, funded);
    expect(transaction.failure_reason).toBe('payout_rejected');
    expect(ledger.references).toEqual(['funding', 'refund']);
    expect(await eventTypesOf(harness, created.id)).toEqual(['payout.created', 'payout.refunded']);
    expect(await balanceOf(funded.partner.api, funded.wallet.id)).toBe(before);
  });

  it('waits in error when the payout keeps failing, then completes on the operator’s retry', async () => {
    const created = await createPayout(funded, { simulate: 'payout_error' });
    await waitForStatus(harness, created.id, 'error');
    expect(await get(created.id, funded)).toMatchObject({ status: 'error', failure_reason: 'payout_failed' });
    expect(await resolve(created.id, 'retry')).toBe('retry');
    expect(await settlementHandle(harness, created.id).result()).toBe('completed');
    await expectInvariants(created.id, funded);
    expect(await eventTypesOf(harness, created.id)).toEqual([
      'payout.created',
      'payout.error',
      'payout.processing',
      'payout.completed',
    ]);
  });

  it('refuses more than the balance (insufficient_funds) with nothing created and the quote usable', async () => {
    const poor = await setUpParties(harness, parties.partner);
    const payoutQuote = await quote(poor.partner.api, payoutQuoteBody());
    const count = await transactionCount(poor);
    const refused = await poor.partner.api.post('/v1/payout').send(payoutBody(poor, payoutQuote.id));
    expect([refused.status, refused.body.error.code]).toEqual([422, 'insufficient_funds']);
    expect(await transactionCount(poor)).toBe(count);
    // Without the wallet the same quote still makes a payout (awaiting its stablecoin).
    const awaiting = await poor.partner.api
      .post('/v1/payout')
      .send(payoutBody(poor, payoutQuote.id, { wallet_id: undefined }));
    expect([awaiting.status, awaiting.body.status]).toEqual([201, 'awaiting_deposit']);
  });

  it('never takes a wallet below zero under concurrent payouts', async () => {
    const racing = await setUpParties(harness, parties.partner);
    const balance = await fundWallet(harness, racing, '150.00');
    const body = payoutQuoteBody({ sender: { currency: 'USDC', payment_rail: 'solana', amount: '60.000000' } });
    const quotes = await Promise.all([0, 1, 2].map(() => quote(racing.partner.api, body)));
    const responses = await Promise.all(
      quotes.map((q) => racing.partner.api.post('/v1/payout').send(payoutBody(racing, q.id))),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 422]);
    expect(responses.find((r) => r.status === 422)?.body.error.code).toBe('insufficient_funds');
    expect(await balanceOf(racing.partner.api, racing.wallet.id)).toBe(new Decimal(balance).minus('120').toFixed(6));
    const [account] = await ledgerBalances(harness.prisma, [ledgerAccounts.wallet(racing.wallet.id, 'USDC')]);
    expect(account!.isNegative()).toBe(false);
    for (const response of responses.filter((r) => r.status === 201)) {
      expect(await settlementHandle(harness, response.body.id).result()).toBe('completed');
    }
  });
});

describe('payouts with the stablecoin sent in', () => {
  const withoutWallet = { wallet_id: undefined };

  it('awaits the stablecoin, is confirmed, and completes', async () => {
    const created = await createPayout(parties, withoutWallet);
    expect(created).toMatchObject({
      status: 'awaiting_deposit',
      wallet_id: null,
      sender: { wallet_id: null, currency: 'USDC', payment_rail: 'solana', amount: '100.000000' },
      sender_deposit_instructions: {
        payment_rail: 'solana',
        currency: 'USDC',
        amount: '100.000000',
        deadline: created.deposit_deadline,
        solana: { address: expect.any(String) },
      },
    });
    expect(Date.parse(created.deposit_deadline as string) - Date.parse(created.created_at as string)).toBe(60 * 60_000);
    const invalidHash = await confirm(created.id, { tx_hash: '0x12' });
    expect(invalidHash.status).toBe(400);
    const confirmed = await confirm(created.id);
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ id: created.id, status: 'processing' });
    const twice = await confirm(created.id);
    expect([twice.status, twice.body.error.code]).toEqual([422, 'payout_cannot_be_confirmed']);
    expect(await settlementHandle(harness, created.id).result()).toBe('completed');
    const { ledger } = await expectInvariants(created.id);
    expect(ledger.references).toEqual(['deposit', 'funding', 'stablecoin_to_fiat', 'payout']);
    expect(await eventTypesOf(harness, created.id)).toEqual([
      'payout.created',
      'payout.processing',
      'payout.completed',
    ]);
    const deposits = await harness.prisma.transactionDeposit.findMany({ where: { transactionId: created.id } });
    expect(deposits.map((d) => [d.status, d.reference])).toEqual([['accepted', solanaTxHash]]);
  });

  it('refuses to confirm a pay-in or a fiat-to-fiat transaction (payin_cannot_be_confirmed)', async () => {
    for (const transaction of [await createPayin(parties), await createTransaction(parties)]) {
      const refused = await confirm(transaction.id);
      expect([refused.status, refused.body.error.code]).toEqual([422, 'payin_cannot_be_confirmed']);
    }
  });

  it('cancels while awaiting (payout.cancelled), fails at the deadline, refunds on chain when rejected', async () => {
    const cancelled = await createPayout(parties, withoutWallet);
    expect((await cancel(cancelled.id)).status).toBe(200);
    expect(await eventTypesOf(harness, cancelled.id)).toEqual(['payout.created', 'payout.cancelled']);
    const afterCancel = await confirm(cancelled.id);
    expect([afterCancel.status, afterCancel.body.error.code]).toEqual([422, 'payout_cannot_be_confirmed']);
    const again = await cancel(cancelled.id);
    expect(again.body.error.code).toBe('payout_cannot_be_cancelled');

    const expired = await createPayout(parties, withoutWallet);
    expect(await settlementHandle(harness, expired.id).result()).toBe('failed');
    expect(await eventTypesOf(harness, expired.id)).toEqual(['payout.created', 'payout.failed']);
    await expectInvariants(expired.id);

    const rejected = await createPayout(parties, withoutWallet);
    expect((await confirm(rejected.id, { simulate: 'payout_rejected' })).status).toBe(200);
    expect(await settlementHandle(harness, rejected.id).result()).toBe('refunded');
    const { ledger } = await expectInvariants(rejected.id);
    expect(ledger.references).toEqual(['deposit', 'funding', 'refund']);
    const returned = await harness.prisma.sandboxRailOperation.findUniqueOrThrow({
      where: { idempotencyKey: `${rejected.id}:refund` },
    });
    expect([returned.kind, returned.currency, returned.amount.toFixed(6)]).toEqual(['return', 'USDC', '100.000000']);
    expect(await eventTypesOf(harness, rejected.id)).toEqual([
      'payout.created',
      'payout.processing',
      'payout.refunded',
    ]);
  });
});

describe('payout refusals', () => {
  it('refuses another type of quote, a used or expired quote, a rate-only quote without a valid amount', async () => {
    const api = parties.partner.api;
    const post = (body: Record<string, unknown>) => api.post('/v1/payout').send(body);
    const count = await transactionCount();
    const payinQuote = await quote(api, payinQuoteBody());
    const wrongType = await post(payoutBody(parties, payinQuote.id, { wallet_id: undefined }));
    expect([wrongType.status, wrongType.body.error.code]).toEqual([422, 'quote_type_mismatch']);
    const rateOnly = await quote(api, payoutQuoteBody({ sender: { currency: 'USDC', payment_rail: 'solana' } }));
    const noAmount = await post(payoutBody(parties, rateOnly.id, { wallet_id: undefined }));
    expect([noAmount.status, noAmount.body.error.code]).toEqual([422, 'quote_amount_mismatch']);
    expect(noAmount.body.error.message).toMatch(/^amount: /);
    const tooMuch = await post(payoutBody(parties, rateOnly.id, { wallet_id: undefined, amount: '999999.000000' }));
    expect(tooMuch.body.error.code).toBe('amount_out_of_range');
    const simulateWithoutWallet = await post(
      payoutBody(parties, rateOnly.id, { wallet_id: undefined, amount: '50.000000', simulate: 'payout_rejected' }),
    );
    expect(simulateWithoutWallet.status).toBe(400);
    expect(await transactionCount()).toBe(count);
    const priced = await post(payoutBody(parties, rateOnly.id, { wallet_id: undefined, amount: '50.000000' }));
    expect([priced.status, priced.body.sender.amount]).toEqual([201, '50.000000']);
    const used = await post(payoutBody(parties, rateOnly.id, { wallet_id: undefined, amount: '50.000000' }));
    expect(used.body.error.code).toBe('quote_already_used');
    const expiring = await quote(api, payoutQuoteBody());
    await harness.env.sleep('6 minutes');
    expect((await post(payoutBody(parties, expiring.id, { wallet_id: undefined }))).body.error.code).toBe(
      'quote_expired',
    );
  });

  it('a confirmation racing a cancellation has exactly one outcome', async () => {
    for (let round = 0; round < 3; round += 1) {
      const created = await createPayout(parties, { wallet_id: undefined });
      const [cancelled, confirmed] = await Promise.all([cancel(created.id), confirm(created.id)]);
      const final = await settlementHandle(harness, created.id).result();
      if (cancelled.status === 200) {
        expect([confirmed.status, confirmed.body.error.code, final]).toEqual([
          422,
          'payout_cannot_be_confirmed',
          'cancelled',
        ]);
      } else {
        expect([cancelled.body.error.code, confirmed.status, final]).toEqual([
          'payout_cannot_be_cancelled',
          200,
          'completed',
        ]);
      }
      await expectInvariants(created.id);
    }
  });
});

describe('payouts to a pix key given directly', () => {
  it('checks the key as external accounts do and pays it', async () => {
    const pixQuote = () =>
      quote(parties.partner.api, payoutQuoteBody({ receiver: { currency: 'BRL', payment_rail: 'pix' } }));
    const body = (quoteId: string, key: string) =>
      payoutBody(parties, quoteId, {
        external_account_id: undefined,
        wallet_id: undefined,
        pix: { key, document: { type: 'cpf', number: '529.982.247-25' } },
      });
    const q = await pixQuote();
    const count = await transactionCount();
    for (const key of ['not a key', '00000000191']) {
      const refused = await parties.partner.api.post('/v1/payout').send(body(q.id, key));
      expect([refused.status, refused.body.error.code]).toEqual([422, 'pix_key_invalid']);
    }
    const both = await parties.partner.api
      .post('/v1/payout')
      .send({ ...body(q.id, 'ana@example.com'), external_account_id: parties.externalAccountId });
    expect(both.status).toBe(400);
    const speiQuote = await quote(parties.partner.api, payoutQuoteBody());
    const wrongRail = await parties.partner.api.post('/v1/payout').send(body(speiQuote.id, 'ana@example.com'));
    expect(wrongRail.body.error.code).toBe('quote_currency_mismatch');
    const passport = await parties.partner.api.post('/v1/payout').send({
      ...body(q.id, 'ana@example.com'),
      pix: { key: 'ana@example.com', document: { type: 'passport', number: 'X1234567' } },
    });
    expect([passport.status, passport.body.error.details?.[0]?.param]).toEqual([400, 'pix.document.type']);
    expect(await transactionCount()).toBe(count);

    const created = await parties.partner.api.post('/v1/payout').send(body(q.id, 'ana@example.com'));
    expect(created.status).toBe(201);
    expect(created.body.receiver).toEqual({
      external_account_id: null,
      currency: 'BRL',
      payment_rail: 'pix',
      amount: q.receiver.amount,
      account_name: expect.any(String),
      beneficiary_name: expect.any(String),
      bank_name: expect.any(String),
      account_last4: '.com',
    });
    await confirm(created.body.id);
    expect(await settlementHandle(harness, created.body.id).result()).toBe('completed');
    await expectInvariants(created.body.id);
  });
});

describe('listing', () => {
  it('lists every type, filtered by type', async () => {
    const all = await parties.partner.api.get('/v1/transactions?limit=100');
    expect(new Set(all.body.items.map((t: { type: string }) => t.type))).toEqual(
      new Set(['payin', 'payout', 'fiat_to_fiat']),
    );
    for (const type of ['payin', 'payout']) {
      const page = await parties.partner.api.get(`/v1/transactions?type=${type}&limit=100`);
      expect(page.body.items.length).toBeGreaterThan(0);
      expect(page.body.items.every((t: { type: string }) => t.type === type)).toBe(true);
    }
  });
});

describe('events delivered to a real receiver', () => {
  it('delivers a pay-in’s and a payout’s events with the full transaction; mocks have the same shape', async () => {
    const partner = await harness.createPartner('Payments end to end');
    const receiver = await WebhookReceiver.start();
    try {
      const { secret } = await configureWebhooks(partner, receiver.url, [
        'payin.created',
        'payin.processing',
        'payin.completed',
        'payout.created',
        'payout.completed',
      ]);
      const mine = await setUpParties(harness, partner);
      const payin = await createPayin(mine);
      await deposit(mine, payin);
      expect(await settlementHandle(harness, payin.id).result()).toBe('completed');
      const payout = await createPayout(mine);
      expect(await settlementHandle(harness, payout.id).result()).toBe('completed');
      const all = await receiver.waitFor((requests) => requests.length >= 5, 'five events');
      // Each resource's events arrive in order; two resources' deliveries may interleave.
      const received = [
        ...all.filter((r) => r.body.event_resource_id === payin.id),
        ...all.filter((r) => r.body.event_resource_id === payout.id),
      ];
      expect(received.map((r) => [r.body.event, r.body.event_type, r.body.event_resource_status])).toEqual([
        ['payin', 'payin.created', 'awaiting_deposit'],
        ['payin', 'payin.processing', 'processing'],
        ['payin', 'payin.completed', 'completed'],
        ['payout', 'payout.created', 'processing'],
        ['payout', 'payout.completed', 'completed'],
      ]);
      for (const delivered of received) expect(verifiesWithStandardWebhooks(delivered, secret)).toBe(true);
      expect(received[0]?.body.event_resource).toEqual(payin);
      expect(received[2]?.body.event_resource).toEqual(await get(payin.id, mine));
      expect(received[3]?.body.event_resource).toEqual(payout);
      expect(received[4]?.body.event_resource).toEqual(await get(payout.id, mine));

      // The sandbox's mocked payloads have the shape of the real ones, key for key.
      const shape = (value: unknown): unknown =>
        value !== null && typeof value === 'object' && !Array.isArray(value)
          ? Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, shape(inner)]))
          : value === null
            ? null
            : typeof value;
      for (const [eventType, real] of [
        ['payin.created', received[0]],
        ['payin.completed', received[2]],
        ['payout.completed', received[4]],
      ] as const) {
        const mocked = await partner.api.post('/webhooks/mock').send({ event_type: eventType });
        expect(mocked.status).toBe(200);
        const resource = mocked.body.event.event_resource;
        expect(transactionSchema.safeParse(resource).success).toBe(true);
        const { failure_reason: _ignored, ...mockShape } = shape(resource) as Record<string, unknown>;
        const { failure_reason: _alsoIgnored, ...realShape } = shape(real?.body.event_resource) as Record<
          string,
          unknown
        >;
        expect(mockShape).toEqual(realShape);
      }
    } finally {
      await receiver.close();
    }
  });
});

describe('more flows delivered to a real receiver', () => {
  it('delivers a confirmed payout’s and a refunded virtual-account deposit’s events', async () => {
    const partner = await harness.createPartner('Payments end to end 2');
    const receiver = await WebhookReceiver.start();
    try {
      const { secret } = await configureWebhooks(partner, receiver.url, [
        'payout.created',
        'payout.processing',
        'payout.completed',
        'payin.created',
        'payin.refunded',
      ]);
      const mine = await setUpParties(harness, partner);
      const payout = await createPayout(mine, { wallet_id: undefined });
      const confirmed = await partner.api
        .post('/v1/payout/confirm')
        .send({ transaction_id: payout.id, tx_hash: solanaTxHash });
      expect(confirmed.status).toBe(200);
      expect(await settlementHandle(harness, payout.id).result()).toBe('completed');
      const account = await partner.api
        .post('/v1/virtual-accounts')
        .send(virtualAccountBody(mine.customer.id, mine.wallet.id, { sender: { currency: 'EUR' } }));
      const refused = await partner.api
        .post(`/v1/sandbox/virtual-accounts/${account.body.id}/deposit`)
        .send({ amount: '80.00', sender_name: 'Someone Else' });
      expect(refused.status).toBe(201);
      expect(await settlementHandle(harness, refused.body.id).result()).toBe('refunded');

      const all = await receiver.waitFor((requests) => requests.length >= 5, 'five events');
      const of = (id: string) => all.filter((r) => r.body.event_resource_id === id);
      expect(of(payout.id).map((r) => [r.body.event_type, r.body.event_resource_status])).toEqual([
        ['payout.created', 'awaiting_deposit'],
        ['payout.processing', 'processing'],
        ['payout.completed', 'completed'],
      ]);
      expect(of(refused.body.id).map((r) => [r.body.event_type, r.body.event_resource_status])).toEqual([
        ['payin.created', 'processing'],
        ['payin.refunded', 'refunded'],
      ]);
      for (const delivered of all) expect(verifiesWithStandardWebhooks(delivered, secret)).toBe(true);
      expect(of(payout.id)[2]?.body.event_resource).toEqual(await get(payout.id, mine));
      expect(of(refused.body.id)[1]?.body.event_resource).toEqual(await get(refused.body.id, mine));
    } finally {
      await receiver.close();
    }
  });
});

describe('operator refusals', () => {
  it('refuses an operator decision outside error', async () => {
    const created = await createPayin(parties);
    await expect(resolve(created.id, 'retry')).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
    expect((await cancel(created.id)).status).toBe(200);
  });
});

describe('an external account on another rail', () => {
  it('refuses with quote_currency_mismatch and customer_mismatch', async () => {
    const pixAccount = await createExternalAccount(parties.partner.api, externalAccount(parties.customer.id, 'pix'));
    const other = await setUpParties(harness, parties.partner);
    const q = await quote(parties.partner.api, payoutQuoteBody());
    const count = await transactionCount();
    const wrongRail = await parties.partner.api
      .post('/v1/payout')
      .send(payoutBody(parties, q.id, { external_account_id: pixAccount.id }));
    expect(wrongRail.body.error.code).toBe('quote_currency_mismatch');
    const notTheirs = await parties.partner.api
      .post('/v1/payout')
      .send(payoutBody(parties, q.id, { external_account_id: other.externalAccountId }));
    expect(notTheirs.body.error.code).toBe('customer_mismatch');
    const otherWallet = await parties.partner.api
      .post('/v1/payout')
      .send(payoutBody(parties, q.id, { wallet_id: other.wallet.id }));
    expect(otherWallet.body.error.code).toBe('customer_mismatch');
    expect(await transactionCount()).toBe(count);
  });
});

describe('virtual-account deposits', () => {
  const createAccount = async (overrides: Record<string, unknown> = {}) => {
    const response = await parties.partner.api
      .post('/v1/virtual-accounts')
      .send(virtualAccountBody(parties.customer.id, parties.wallet.id, overrides));
    expect(response.status).toBe(201);
    return response.body as { id: string; status: string; deposit_addresses: Record<string, any> };
  };
  const depositOn = (accountId: string, body: Record<string, unknown>) =>
    parties.partner.api.post(`/v1/sandbox/virtual-accounts/${accountId}/deposit`).send(body);

  it('makes a pay-in without a quote, converted at the current rate, credited to the account’s wallet', async () => {
    const account = await createAccount();
    expect(account.status).toBe('approved');
    const before = await balanceOf(parties.partner.api, parties.wallet.id);
    const response = await depositOn(account.id, { amount: '250.00', sender_name: 'Globex Corp', reference: 'INV-7' });
    expect(response.status).toBe(201);
    const created = response.body as TransactionBody;
    expect(created).toMatchObject({
      type: 'payin',
      status: 'processing',
      quote_id: null,
      wallet_id: parties.wallet.id,
      sender: {
        name: 'Globex Corp',
        document: null,
        virtual_account_id: account.id,
        currency: 'USD',
        payment_rail: 'ach',
        amount: '250.00',
      },
      receiver: { wallet_id: parties.wallet.id, currency: 'USDC', payment_rail: 'solana' },
      receiver_quotation: null,
      fees: { partner_fee: { amount: '0.00', currency: 'USD' } },
      sender_deposit_instructions: null,
      deposit_deadline: null,
    });
    // The same pricing as a quote made now: the sandbox market's USD -> USDC rate and the service fee.
    const sameQuote = await quote(
      parties.partner.api,
      payinQuoteBody({ sender: { currency: 'USD', payment_rail: 'ach', amount: '250.00' } }),
    );
    expect(created.sender_quotation).toBe(sameQuote.quotation);
    expect(created.stablecoin.amount).toBe(sameQuote.receiver.amount);
    expect(await settlementHandle(harness, created.id).result()).toBe('completed');
    const { ledger } = await expectInvariants(created.id);
    expect(ledger.references).toEqual(['deposit', 'fiat_to_stablecoin', 'delivered']);
    expect(await eventTypesOf(harness, created.id)).toEqual(['payin.created', 'payin.completed']);
    expect(await balanceOf(parties.partner.api, parties.wallet.id)).toBe(
      new Decimal(before).plus(created.stablecoin.amount).toFixed(6),
    );

    const tooSmall = await depositOn(account.id, { amount: '0.50', sender_name: 'Globex Corp' });
    expect([tooSmall.status, tooSmall.body.error.code]).toEqual([422, 'amount_out_of_range']);
    const unknown = await depositOn('00000000-0000-4000-8000-000000000000', { amount: '10.00', sender_name: 'X' });
    expect(unknown.status).toBe(404);
    const noName = await depositOn(account.id, { amount: '10.00' });
    expect(noName.status).toBe(400);
  });

  it('refunds a third party’s deposit on a EUR account without accepts_third_party_payments; the holder’s settles', async () => {
    const account = await createAccount({ sender: { currency: 'EUR' }, accepts_third_party_payments: false });
    const before = await balanceOf(parties.partner.api, parties.wallet.id);
    const thirdParty = await depositOn(account.id, { amount: '100.00', sender_name: 'John Smith' });
    expect(thirdParty.status).toBe(201);
    expect(thirdParty.body).toMatchObject({ status: 'processing', sender: { currency: 'EUR', payment_rail: 'sepa' } });
    expect(await settlementHandle(harness, thirdParty.body.id).result()).toBe('refunded');
    const { transaction, ledger } = await expectInvariants(thirdParty.body.id);
    expect(transaction.failure_reason).toBe('third_party_sender');
    expect(ledger.references).toEqual(['deposit', 'refund']);
    expect(await eventTypesOf(harness, thirdParty.body.id)).toEqual(['payin.created', 'payin.refunded']);
    const [returned] = await harness.prisma.transactionDeposit.findMany({
      where: { transactionId: thirdParty.body.id },
    });
    expect([returned?.status, returned?.returnReason, returned?.amount.toFixed(2)]).toEqual([
      'returned',
      'third_party_sender',
      '100.00',
    ]);
    expect(await balanceOf(parties.partner.api, parties.wallet.id)).toBe(before);

    // The holder, written with other case, accents and spacing.
    const holder = await depositOn(account.id, { amount: '100.00', sender_name: '  ÁNA   souza ' });
    expect(await settlementHandle(harness, holder.body.id).result()).toBe('completed');
    await expectInvariants(holder.body.id);
  });

  it('takes a credit reported by a bank integration on the account’s details (the production path)', async () => {
    const account = await createAccount();
    const identifier = account.deposit_addresses.ach.bank_account_number as string;
    const report = (accountNumber: string) =>
      receiveVirtualAccountCredit(harness.services, {
        provider: 'test-bank',
        providerReference: `ACH-TRACE-${account.id}-${accountNumber}`,
        reference: 'ACH 123',
        amount: Money.parse('USD', '40.00'),
        senderName: 'Ana Souza',
        receivedAt: new Date(),
        account: { rail: 'ach', identifier: accountNumber },
      });
    expect(await report('999999999999')).toBeNull();
    const created = await report(identifier);
    expect(created).toMatchObject({ type: 'payin', status: 'processing', sender: { virtual_account_id: account.id } });
    expect(await settlementHandle(harness, created?.id as string).result()).toBe('completed');
  });

  it('decides by the account’s status and the holder’s name (the rule)', () => {
    const rule = (overrides: Partial<Parameters<typeof decideVirtualAccountDeposit>[0]>) =>
      decideVirtualAccountDeposit({
        status: 'approved',
        senderCurrency: 'EUR',
        acceptsThirdPartyPayments: false,
        holderName: 'José da Silva Neto',
        senderName: 'jose da silva-neto',
        ...overrides,
      });
    expect(rule({})).toEqual({ action: 'settle' });
    expect(rule({ senderName: 'J. Silva' })).toEqual({ action: 'refund', reason: 'third_party_sender' });
    expect(rule({ senderName: 'Neto da Silva José' })).toEqual({ action: 'refund', reason: 'third_party_sender' });
    expect(rule({ senderName: 'J. Silva', acceptsThirdPartyPayments: true })).toEqual({ action: 'settle' });
    expect(rule({ senderName: 'J. Silva', senderCurrency: 'USD', acceptsThirdPartyPayments: null })).toEqual({
      action: 'settle',
    });
    for (const status of ['under_review', 'rejected', 'cancelled']) {
      expect(rule({ status })).toEqual({ action: 'refund', reason: 'virtual_account_not_active' });
    }
  });
});

describe('rows read and written with Kysely (src/persistence), as Prisma reads them', () => {
  // After the flows above: pay-ins without an external account, payouts to a pix key (receiver_details), from a
  // wallet and sent in on chain, refunded and failed ones; every row of every shape this file made. Only this file's
  // partners: files run side by side on one database, and locking another file's rows would stall its settlements
  // (it once made the worker-kill test wait on this file's lock instead of its own worker's).
  const ours = () => ({ partnerId: { in: [...harness.partnerIds] } });
  it('reads every transaction exactly as Prisma does, with its accounts, locked or not', async () => {
    const ids = (await harness.prisma.transaction.findMany({ where: ours(), select: { id: true } })).map(
      ({ id }) => id,
    );
    expect(ids.length).toBeGreaterThan(10);
    const shapes = new Set<string>();
    for (const id of ids) {
      const expected = await harness.prisma.transaction.findUnique({ where: { id }, include: withReceiverAccount });
      expect(await readTransactionRow(harness.prisma, id)).toEqual(expected);
      const locked = await withDatabaseTransaction(harness.prisma, (tx) => lockTransactionRow(tx, id));
      expect(locked).toEqual(expected);
      shapes.add(
        `${expected?.type}:${expected?.externalAccount ? 'account' : 'no account'}:${expected?.wallet ? 'wallet' : 'no wallet'}`,
      );
      // Money stays exact: Decimals, not numbers.
      expect(locked?.senderAmount).toBeInstanceOf(Prisma.Decimal);
    }
    expect([...shapes].some((shape) => shape.includes('no account'))).toBe(true);
    expect([...shapes].some((shape) => shape.includes(':account'))).toBe(true);
    expect(await readTransactionRow(harness.prisma, '00000000-0000-4000-8000-000000000000')).toBeNull();
  });

  it('reads quotes, external accounts, deposits, customers and wallets exactly as Prisma does', async () => {
    const cases: Array<{
      rows: () => Promise<Array<{ id: string }>>;
      one: (id: string) => Promise<unknown>;
      read: (db: Database, id: string) => Promise<unknown>;
    }> = [
      {
        rows: () => harness.prisma.quote.findMany({ where: ours() }),
        one: (id) => harness.prisma.quote.findUnique({ where: { id } }),
        read: findQuote,
      },
      {
        rows: () => harness.prisma.externalAccount.findMany({ where: ours() }),
        one: (id) => harness.prisma.externalAccount.findUnique({ where: { id } }),
        read: findExternalAccount,
      },
      {
        rows: () => harness.prisma.transactionDeposit.findMany({ where: { transaction: ours() } }),
        one: (id) => harness.prisma.transactionDeposit.findUnique({ where: { id } }),
        read: findTransactionDeposit,
      },
      {
        // Businesses' beneficiaries: dates of birth (a date column) and share sizes (decimals).
        rows: () => harness.prisma.customer.findMany({ where: ours() }),
        one: (id) =>
          harness.prisma.customer.findUnique({
            where: { id },
            include: { beneficiaries: { orderBy: { position: 'asc' } } },
          }),
        read: findCustomer,
      },
      {
        rows: () => harness.prisma.wallet.findMany({ where: ours() }),
        one: (id) => harness.prisma.wallet.findUnique({ where: { id }, include: { ledgerAccounts: true } }),
        read: async (db, id) => {
          const wallet = await findWallet(db, id);
          return wallet && { ...wallet, ledgerAccounts: [...wallet.ledgerAccounts] };
        },
      },
    ];
    for (const { rows, one, read } of cases) {
      const ids = (await rows()).map(({ id }) => id);
      expect(ids.length).toBeGreaterThan(0);
      for (const id of ids) {
        const expected = await one(id);
        expect(sorted(await read(harness.prisma, id))).toEqual(sorted(expected));
        expect(sorted(await withDatabaseTransaction(harness.prisma, (tx) => read(tx, id)))).toEqual(sorted(expected));
      }
    }
  });

  /** A row with its to-many relations in id order (their order is not part of the shape compared). */
  function sorted(row: unknown): unknown {
    if (!row || typeof row !== 'object') return row;
    const copy: Record<string, unknown> = { ...(row as Record<string, unknown>) };
    for (const [key, value] of Object.entries(copy)) {
      if (Array.isArray(value) && value.every((item) => item && typeof item === 'object' && 'id' in item)) {
        copy[key] = [...(value as Array<{ id: string }>)].sort((a, b) => a.id.localeCompare(b.id));
      }
    }
    return copy;
  }

  it('writes rows in a database transaction as Prisma reads them, and a unique index refusing one rolls back all of them', async () => {
    const taken = await harness.prisma.transaction.findFirst({
      where: { ...ours(), depositReference: { not: null }, depositInstructions: { not: Prisma.AnyNull } },
    });
    expect(taken).not.toBeNull();
    const { updatedAt: _updatedAt, ...copy } = {
      ...taken!,
      quoteId: null,
      depositReference: null,
      id: newId(),
      depositInstructions: taken!.depositInstructions as object,
      receiverDetails: taken!.receiverDetails as object | null,
    };
    await withDatabaseTransaction(harness.prisma, (tx) => insertTransaction(tx, copy));
    expect(await harness.prisma.transaction.findUnique({ where: { id: copy.id } })).toEqual({
      ...copy,
      updatedAt: copy.createdAt,
    });

    const rolledBack = newId();
    const refused = await withDatabaseTransaction(harness.prisma, async (tx) => {
      await insertTransaction(tx, { ...copy, id: rolledBack });
      await insertTransaction(tx, { ...copy, id: newId(), depositReference: taken!.depositReference });
    }).catch((error: unknown) => error);
    // The retry of a drawn deposit reference (src/services/transactions/write.ts) depends on recognising it.
    expect(isUniqueViolation(refused, 'deposit_reference')).toBe(true);
    expect(isUniqueViolation(refused, 'quote_id')).toBe(false);
    expect(await harness.prisma.transaction.findUnique({ where: { id: rolledBack } })).toBeNull();
    await harness.prisma.transaction.delete({ where: { id: copy.id } });
  });
});
