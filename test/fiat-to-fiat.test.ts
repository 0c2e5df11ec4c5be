// POST /v1/fiat-to-fiat and the transaction resource over HTTP: the shape field by field, deposit
// instructions on every sender rail, every precondition refused with nothing created and the quote
// still usable, the quote given back when the write fails, idempotency, GET/list/scoping, and one
// transaction from customer creation to `completed` with its events delivered to a real receiver.
import request from 'supertest';
import { crc16Ccitt } from '../src/domain/brazil';
import { UnconnectedDepositProvider } from '../src/providers/transaction-deposits';
import { writePathFaults } from '../src/temporal/write-then-start';
import { workflowIds } from '../src/temporal/workflow-ids';
import { quoteStateQuery } from '../workflows/quote-lifetime';
import { approvedCustomer, createWallet } from './support/accounts';
import { createCustomer, createExternalAccount, externalAccount } from './support/fixtures';
import { Harness, startHarness, TestPartner } from './support/harness';
import {
  createQuote,
  createTransaction,
  deposit,
  fiatToFiatBody,
  fiatToFiatQuoteBody,
  Parties,
  setUpParties,
  settlementHandle,
  TransactionBody,
} from './support/transactions';
import { WebhookReceiver } from './support/webhook-receiver';
import { configureWebhooks, verifiesWithStandardWebhooks } from './support/webhooks';

let harness: Harness;
let parties: Parties;
let pixAccountId: string;

beforeAll(async () => {
  harness = await startHarness();
  parties = await setUpParties(harness);
  pixAccountId = (await createExternalAccount(parties.partner.api, externalAccount(parties.customer.id, 'pix'))).id;
});
afterAll(async () => {
  writePathFaults.beforeCommit = undefined;
  await harness?.teardown();
});

const post = (body: object, partner: TestPartner = parties.partner) => partner.api.post('/v1/fiat-to-fiat').send(body);

const transactionCount = () => harness.prisma.transaction.count({ where: { partnerId: parties.partner.partnerId } });
const payinEventCount = () =>
  harness.prisma.event.count({ where: { partnerId: parties.partner.partnerId, event: 'payin' } });

describe('creation', () => {
  it('answers 201 with the transaction awaiting its deposit, field by field, and records payin.created', async () => {
    const quote = await createQuote(parties.partner.api);
    const response = await post(fiatToFiatBody(parties, quote.id));
    expect(response.status).toBe(201);
    const transaction = response.body as TransactionBody;
    const reference = transaction.sender_deposit_instructions.reference;
    expect(reference).toMatch(/^TX[0-9A-HJKMNP-TV-Z]{10}$/);
    expect(transaction).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      type: 'fiat_to_fiat',
      status: 'awaiting_deposit',
      customer_id: parties.customer.id,
      wallet_id: parties.wallet.id,
      quote_id: quote.id,
      sender: {
        name: 'João Pereira',
        document: { type: 'cpf', number: '52998224725' },
        currency: 'BRL',
        payment_rail: 'pix',
        amount: '1000.00',
      },
      stablecoin: {
        currency: 'USDC',
        payment_rail: 'solana',
        amount: quote.stablecoin && (quote.stablecoin as { amount: string }).amount,
      },
      receiver: {
        external_account_id: parties.externalAccountId,
        currency: 'MXN',
        payment_rail: 'spei',
        amount: (quote.receiver as { amount: string }).amount,
        account_name: 'My spei account',
        beneficiary_name: 'María López',
        bank_name: 'Banamex',
        account_last4: '7771',
      },
      sender_quotation: quote.sender_quotation,
      receiver_quotation: quote.receiver_quotation,
      fees: {
        service_fee: { amount: '5.00', currency: 'BRL' },
        partner_fee: { amount: '11.00', currency: 'BRL' },
        network_fee: { amount: '0.06', currency: 'BRL' },
        total: { amount: '16.06', currency: 'BRL' },
      },
      sender_deposit_instructions: {
        payment_rail: 'pix',
        currency: 'BRL',
        amount: '1000.00',
        reference,
        deadline: transaction.deposit_deadline,
        pix: {
          key: '11222333000181',
          key_type: 'cnpj',
          bank_name: 'Sandbox Pagamentos S.A.',
          beneficiary_name: 'Payments Sandbox Ltda',
          copy_paste_code: expect.any(String),
        },
      },
      deposit_deadline: new Date(Date.parse(transaction.created_at as string) + 30 * 60_000).toISOString(),
      failure_reason: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    // The pix code carries the amount and the reference, and its CRC checks.
    const code = (transaction.sender_deposit_instructions.pix as { copy_paste_code: string }).copy_paste_code;
    expect(code).toContain('0014br.gov.bcb.pix011411222333000181');
    expect(code).toContain('54071000.00');
    expect(code).toContain(`62160512${reference}`);
    expect(code.slice(-4)).toBe(crc16Ccitt(code.slice(0, -4)));

    expect((await parties.partner.api.get(`/v1/transactions/${transaction.id}`)).body).toEqual(transaction);
    expect((await parties.partner.api.get(`/v1/quotes/${quote.id}`)).body.status).toBe('used');
    const events = await harness.prisma.event.findMany({ where: { resourceId: transaction.id } });
    expect(events.map((event) => [event.event, event.eventType, event.resourceStatus])).toEqual([
      ['payin', 'payin.created', 'awaiting_deposit'],
    ]);
    expect(events[0]?.resource).toEqual(transaction);
    const { searchAttributes } = await settlementHandle(harness, transaction.id).describe();
    expect(searchAttributes).toMatchObject({ ResourceId: [transaction.id], ResourceStatus: ['awaiting_deposit'] });
    expect((await settlementHandle(harness, transaction.id).describe()).status.name).toBe('RUNNING');
  });

  it.each([
    [
      'sepa',
      { currency: 'EUR', payment_rail: 'sepa', amount: '500.00' },
      2 * 24 * 60,
      ['iban', 'bic', 'bank_name', 'beneficiary_name'],
    ],
    [
      'wire',
      { currency: 'USD', payment_rail: 'wire', amount: '500.00' },
      2 * 24 * 60,
      ['bank_account_number', 'routing_number', 'bank_name', 'bank_address', 'beneficiary_name'],
    ],
    [
      'ach',
      { currency: 'USD', payment_rail: 'ach', amount: '500.00' },
      3 * 24 * 60,
      ['bank_account_number', 'routing_number', 'bank_name', 'bank_address', 'beneficiary_name'],
    ],
    [
      'cvu',
      { currency: 'ARS', payment_rail: 'cvu', amount: '100000.00' },
      30,
      ['cvu', 'bank_name', 'beneficiary_name'],
    ],
    [
      'pix_account',
      { currency: 'BRL', payment_rail: 'pix_account', amount: '800.00' },
      30,
      [
        'bank_code',
        'branch_code',
        'bank_account_number',
        'account_type',
        'beneficiary_document',
        'bank_name',
        'beneficiary_name',
      ],
    ],
  ])(
    'gives %s deposit instructions with the reference and the rail’s deadline',
    async (rail, sender, minutes, fields) => {
      const transaction = await createTransaction(parties, fiatToFiatQuoteBody({ sender }));
      const instructions = transaction.sender_deposit_instructions as Record<string, unknown>;
      expect(instructions.payment_rail).toBe(rail);
      expect(Object.keys(instructions).sort()).toEqual(
        ['amount', 'currency', 'deadline', 'payment_rail', 'reference', rail].sort(),
      );
      expect(Object.keys(instructions[rail] as object).sort()).toEqual([...fields].sort());
      expect(Date.parse(transaction.deposit_deadline as string) - Date.parse(transaction.created_at as string)).toBe(
        minutes * 60_000,
      );
    },
  );

  it('gives spei deposit instructions (a CLABE) when the sender pays in MXN', async () => {
    const quote = await createQuote(
      parties.partner.api,
      fiatToFiatQuoteBody({
        sender: { currency: 'MXN', payment_rail: 'spei', amount: '1000.00' },
        receiver: { currency: 'BRL', payment_rail: 'pix' },
      }),
    );
    const response = await post(fiatToFiatBody(parties, quote.id, { receiver: { external_account_id: pixAccountId } }));
    expect(response.status).toBe(201);
    expect(response.body.sender_deposit_instructions.spei).toEqual({
      clabe: '646180157000000004',
      bank_name: 'STP Sandbox',
      beneficiary_name: 'Payments Sandbox Ltda',
    });
    expect(response.body.receiver).toMatchObject({ payment_rail: 'pix', currency: 'BRL', account_last4: '4321' });
  });

  it('prices a rate-only quote with the amount given on either side', async () => {
    const rateOnly = fiatToFiatQuoteBody({ sender: { currency: 'BRL', payment_rail: 'pix' } });
    const bySender = await createQuote(parties.partner.api, rateOnly);
    const sent = await post(
      fiatToFiatBody(parties, bySender.id, {
        sender: { name: 'João Pereira', document: { type: 'cpf', number: '52998224725' }, amount: '1000' },
      }),
    );
    expect(sent.status).toBe(201);
    expect(sent.body.sender.amount).toBe('1000.00');
    expect(sent.body.fees.total).toEqual({ amount: '16.06', currency: 'BRL' });

    const byReceiver = await createQuote(parties.partner.api, rateOnly);
    const received = await post(
      fiatToFiatBody(parties, byReceiver.id, {
        receiver: { external_account_id: parties.externalAccountId, amount: sent.body.receiver.amount },
      }),
    );
    expect(received.status).toBe(201);
    expect(received.body.receiver.amount).toBe(sent.body.receiver.amount);
    expect(received.body.sender.amount).toBe('1000.00');
  });

  it('is idempotent with an Idempotency-Key: one transaction, one quote use', async () => {
    const quote = await createQuote(parties.partner.api);
    const before = await transactionCount();
    const send = () =>
      parties.partner.api
        .post('/v1/fiat-to-fiat')
        .set('Idempotency-Key', `f2f-${quote.id}`)
        .send(fiatToFiatBody(parties, quote.id));
    const first = await send();
    const again = await send();
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await transactionCount()).toBe(before + 1);
  });
});

describe('preconditions: each refusal creates nothing and leaves the quote usable', () => {
  let quoteId: string;
  let otherCustomerWallet: string;
  let otherCustomerAccount: string;
  let ethereumWallet: string;
  let sepaAccount: string;
  let rejectedAccount: string;
  let pendingCustomer: string;
  let outsider: TestPartner;
  let outsiderQuote: string;

  beforeAll(async () => {
    const other = await approvedCustomer(harness, parties.partner.api);
    otherCustomerWallet = (await createWallet(parties.partner.api, other.id, 'solana')).id;
    otherCustomerAccount = (await createExternalAccount(parties.partner.api, externalAccount(other.id, 'spei'))).id;
    ethereumWallet = (await createWallet(parties.partner.api, parties.customer.id, 'ethereum')).id;
    sepaAccount = (await createExternalAccount(parties.partner.api, externalAccount(parties.customer.id, 'sepa'))).id;
    rejectedAccount = (
      await createExternalAccount(
        parties.partner.api,
        externalAccount(parties.customer.id, 'spei', {
          beneficiary_name: 'Sanctioned Person',
          clabe: '002010077777777784',
        }),
      )
    ).id;
    pendingCustomer = (await createCustomer(parties.partner.api)).id;
    outsider = await harness.createPartner('Outsider');
    outsiderQuote = (await createQuote(outsider.api)).id;
    // Last: waiting for the other customer's approval skips time.
    quoteId = (await createQuote(parties.partner.api)).id;
  });

  const body = (overrides: Record<string, unknown> = {}) => fiatToFiatBody(parties, quoteId, overrides);
  const payinQuote = async () =>
    (
      await parties.partner.api.post('/v1/quote').send({
        sender: { currency: 'USD', payment_rail: 'wire', amount: '100.00' },
        receiver: { currency: 'USDC', payment_rail: 'solana' },
      })
    ).body.id as string;

  const cases: Array<[string, () => Promise<Record<string, unknown>>, number, string]> = [
    ['an unknown quote', async () => body({ quote_id: '00000000-0000-4000-8000-000000000000' }), 404, 'not_found'],
    ['a malformed quote id', async () => body({ quote_id: 'nope' }), 404, 'not_found'],
    ["another partner's quote", async () => body({ quote_id: outsiderQuote }), 404, 'not_found'],
    ['a pay-in quote', async () => body({ quote_id: await payinQuote() }), 422, 'quote_type_mismatch'],
    ["another partner's customer", async () => body({ customer_id: outsider.partnerId }), 404, 'not_found'],
    ['a customer not approved', async () => body({ customer_id: pendingCustomer }), 422, 'customer_not_approved'],
    ['an unknown wallet', async () => body({ wallet_id: '00000000-0000-4000-8000-000000000000' }), 404, 'not_found'],
    ["another customer's wallet", async () => body({ wallet_id: otherCustomerWallet }), 422, 'customer_mismatch'],
    ['a wallet on another chain', async () => body({ wallet_id: ethereumWallet }), 422, 'quote_currency_mismatch'],
    [
      "another customer's external account",
      async () => body({ receiver: { external_account_id: otherCustomerAccount } }),
      422,
      'customer_mismatch',
    ],
    [
      'an external account on another rail',
      async () => body({ receiver: { external_account_id: sepaAccount } }),
      422,
      'quote_currency_mismatch',
    ],
    [
      'a rejected external account',
      async () => body({ receiver: { external_account_id: rejectedAccount } }),
      422,
      'external_account_rejected',
    ],
    [
      'an amount with a quote that has one',
      async () => body({ receiver: { external_account_id: parties.externalAccountId, amount: '100.00' } }),
      422,
      'quote_amount_mismatch',
    ],
    [
      'an invalid sender document',
      async () => body({ sender: { name: 'João', document: { type: 'cpf', number: '123.456.789-00' } } }),
      400,
      'validation_error',
    ],
    ['a missing receiver', async () => ({ ...body(), receiver: undefined }), 400, 'validation_error'],
  ];

  it.each(cases)('refuses %s', async (_name, makeBody, status, code) => {
    const [transactions, events] = [await transactionCount(), await payinEventCount()];
    const response = await post(await makeBody());
    expect(response.status).toBe(status);
    expect(response.body.error.code).toBe(code);
    expect(await transactionCount()).toBe(transactions);
    expect(await payinEventCount()).toBe(events);
    expect((await parties.partner.api.get(`/v1/quotes/${quoteId}`)).body.status).toBe('active');
  });

  it('names the field of a validation error', async () => {
    const response = await post(
      body({ sender: { name: 'João', document: { type: 'cpf', number: '123.456.789-00' } } }),
    );
    expect(response.body.error.details).toEqual([
      { code: 'invalid_param', param: 'sender.document.number', message: 'is not a valid CPF' },
    ]);
    const missing = await post({ ...body(), wallet_id: undefined });
    expect(missing.body.error.details).toEqual([
      { code: 'missing_param', param: 'wallet_id', message: expect.any(String) },
    ]);
  });

  it('refuses rate-only quotes without an amount, or with one out of range', async () => {
    const rateOnly = await createQuote(
      parties.partner.api,
      fiatToFiatQuoteBody({ sender: { currency: 'BRL', payment_rail: 'pix' } }),
    );
    const withoutAmount = await post(fiatToFiatBody(parties, rateOnly.id));
    expect(withoutAmount.status).toBe(422);
    expect(withoutAmount.body.error).toEqual({
      code: 'quote_amount_mismatch',
      message: 'sender.amount: the quote is rate-only: give sender.amount or receiver.amount.',
    });
    const tooMuch = await post(
      fiatToFiatBody(parties, rateOnly.id, {
        sender: { name: 'João Pereira', document: { type: 'cpf', number: '52998224725' }, amount: '1500.00' },
      }),
    );
    expect(tooMuch.status).toBe(422);
    expect(tooMuch.body.error).toEqual({
      code: 'amount_out_of_range',
      message: 'sender.amount 1500.00 BRL is outside the allowed range of 1 to 1000 BRL.',
    });
    const tooPrecise = await post(
      fiatToFiatBody(parties, rateOnly.id, {
        sender: { name: 'João Pereira', document: { type: 'cpf', number: '52998224725' }, amount: '10.001' },
      }),
    );
    // The decimals allowed are the quote's currency's: a rule across resources (422), not of the request's shape.
    expect(tooPrecise.status).toBe(422);
    expect(tooPrecise.body.error.code).toBe('quote_amount_mismatch');
    expect(tooPrecise.body.error.message).toMatch(/^sender\.amount: /);
    expect((await parties.partner.api.get(`/v1/quotes/${rateOnly.id}`)).body.status).toBe('active');
  });

  it('refuses when deposits cannot be received (no collection account), with the quote intact', async () => {
    const app = harness.createApp({ ...harness.services, depositProvider: new UnconnectedDepositProvider() });
    const response = await request(app.callback())
      .post('/v1/fiat-to-fiat')
      .set('Authorization', parties.partner.apiKey)
      .send(body());
    expect(response.status).toBe(503);
    expect(response.body.error.code).toBe('service_unavailable');
    expect((await parties.partner.api.get(`/v1/quotes/${quoteId}`)).body.status).toBe('active');
  });

  it('gives the quote back when the transaction cannot be written after the quote was used', async () => {
    const before = await transactionCount();
    writePathFaults.beforeCommit = async () => {
      throw new Error('injected: the commit fails');
    };
    const failed = await post(body());
    writePathFaults.beforeCommit = undefined;
    expect(failed.status).toBe(500);
    expect(await transactionCount()).toBe(before);
    expect((await parties.partner.api.get(`/v1/quotes/${quoteId}`)).body.status).toBe('active');
    const state = await harness.env.client.workflow.getHandle(workflowIds.quote(quoteId)).query(quoteStateQuery);
    expect(state).toMatchObject({ status: 'active', usedBy: null });
  });

  it('then uses the same quote for a transaction, once; a second use is quote_already_used', async () => {
    const response = await post(body());
    expect(response.status).toBe(201);
    expect(response.body.quote_id).toBe(quoteId);
    const again = await post(body());
    expect(again.status).toBe(422);
    expect(again.body.error.code).toBe('quote_already_used');
  });

  it('refuses an expired quote', async () => {
    const quote = await createQuote(parties.partner.api);
    await harness.env.sleep('5 minutes');
    const response = await post(fiatToFiatBody(parties, quote.id));
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('quote_expired');
  });
});

describe('reading', () => {
  it('lists the partner’s transactions newest first with filters, and hides other partners’', async () => {
    const partner = await harness.createPartner('Lister');
    const mine = await setUpParties(harness, partner);
    const first = await createTransaction(mine);
    const second = await createTransaction(mine);
    await partner.api.put(`/v1/transactions/${first.id}`).send({ status: 'cancelled' });

    const all = await partner.api.get('/v1/transactions');
    expect(all.status).toBe(200);
    expect(all.body.items.map((item: TransactionBody) => item.id)).toEqual([second.id, first.id]);
    expect(all.body.cursor).toMatchObject({ limit: 10, page_count: 2, after: null });
    const page = await partner.api.get('/v1/transactions?limit=1');
    const next = await partner.api.get(`/v1/transactions?limit=1&after=${page.body.cursor.after}`);
    expect(next.body.items.map((item: TransactionBody) => item.id)).toEqual([first.id]);

    const cancelled = await partner.api.get('/v1/transactions?status=cancelled');
    expect(cancelled.body.items.map((item: TransactionBody) => item.id)).toEqual([first.id]);
    const typed = await partner.api.get(`/v1/transactions?type=fiat_to_fiat&customer_id=${mine.customer.id}`);
    expect(typed.body.items).toHaveLength(2);
    const today = new Date().toISOString().slice(0, 10);
    expect((await partner.api.get(`/v1/transactions?start_date=${today}&end_date=${today}`)).body.items).toHaveLength(
      2,
    );
    expect((await partner.api.get('/v1/transactions?end_date=2020-01-01')).body.items).toHaveLength(0);

    expect((await partner.api.get(`/v1/transactions?customer_id=${parties.customer.id}`)).status).toBe(404);
    expect((await partner.api.get('/v1/transactions?status=done')).status).toBe(400);
    expect((await partner.api.get('/v1/transactions?type=card')).status).toBe(400);
    expect((await parties.partner.api.get(`/v1/transactions/${first.id}`)).status).toBe(404);
    expect((await parties.partner.api.get('/v1/transactions/nope')).status).toBe(404);
    expect((await parties.partner.api.put(`/v1/transactions/${first.id}`).send({ status: 'cancelled' })).status).toBe(
      404,
    );
    const foreignDeposit = await parties.partner.api
      .post(`/v1/sandbox/transactions/${second.id}/deposit`)
      .send({ amount: '1000.00' });
    expect(foreignDeposit.status).toBe(404);
  });

  it('validates the sandbox deposit: amount decimals and reference', async () => {
    const transaction = await createTransaction(parties);
    const send = (body: object) =>
      parties.partner.api.post(`/v1/sandbox/transactions/${transaction.id}/deposit`).send(body);
    // The decimals allowed depend on the transaction's currency, and the reference is the transaction's: 422.
    const tooPrecise = await send({ amount: '1000.001' });
    expect([tooPrecise.status, tooPrecise.body.error.code]).toEqual([422, 'amount_too_precise']);
    expect((await send({ amount: 1000 })).status).toBe(400);
    const wrongReference = await send({ amount: '1000.00', reference: 'TX0000000000' });
    expect([wrongReference.status, wrongReference.body.error.code]).toEqual([422, 'deposit_reference_mismatch']);
    expect((await send({ amount: '1000.00', simulate: 'explode' })).status).toBe(400);
    // The reference as a bank statement may carry it: any case, spaced.
    const spaced = transaction.sender_deposit_instructions.reference.toLowerCase().replace(/(.{4})/g, '$1 ');
    const accepted = await deposit(parties, transaction, { reference: spaced });
    expect(accepted.status).toBe('accepted');
    expect(await settlementHandle(harness, transaction.id).result()).toBe('completed');
  });
});

describe('end to end over HTTP', () => {
  it('takes a new customer to a completed transaction, with every event delivered to the partner', async () => {
    const partner = await harness.createPartner('End to end');
    const receiver = await WebhookReceiver.start();
    try {
      const { secret } = await configureWebhooks(partner, receiver.url, [
        'payin.created',
        'payin.processing',
        'payin.completed',
      ]);
      const customer = await approvedCustomer(harness, partner.api);
      const wallet = await createWallet(partner.api, customer.id, 'solana');
      const account = await createExternalAccount(partner.api, externalAccount(customer.id, 'spei'));
      const mine: Parties = { partner, customer, wallet, externalAccountId: account.id };
      const quote = await createQuote(partner.api);
      const created = await partner.api.post('/v1/fiat-to-fiat').send(fiatToFiatBody(mine, quote.id));
      expect(created.status).toBe(201);
      const transaction = created.body as TransactionBody;
      const processing = await partner.api
        .post(`/v1/sandbox/transactions/${transaction.id}/deposit`)
        .send({ amount: transaction.sender.amount, sender_name: 'João Pereira' });
      expect(processing.status).toBe(201);
      expect(await settlementHandle(harness, transaction.id).result()).toBe('completed');
      const final = (await partner.api.get(`/v1/transactions/${transaction.id}`)).body as TransactionBody;
      expect(final.status).toBe('completed');

      const received = await receiver.waitFor(
        (requests) => requests.filter((r) => r.body.event_resource_id === transaction.id).length >= 3,
        'the three pay-in events',
      );
      const mineReceived = received.filter((r) => r.body.event_resource_id === transaction.id);
      expect(mineReceived.map((r) => [r.body.event, r.body.event_type, r.body.event_resource_status])).toEqual([
        ['payin', 'payin.created', 'awaiting_deposit'],
        ['payin', 'payin.processing', 'processing'],
        ['payin', 'payin.completed', 'completed'],
      ]);
      for (const delivered of mineReceived) expect(verifiesWithStandardWebhooks(delivered, secret)).toBe(true);
      expect(mineReceived[0]?.body.event_resource).toEqual(transaction);
      expect(mineReceived[1]?.body.event_resource).toEqual({
        ...transaction,
        status: 'processing',
        updated_at: expect.any(String),
      });
      expect(mineReceived[2]?.body.event_resource).toEqual(final);
      // Each event once.
      expect(new Set(mineReceived.map((r) => r.headers['webhook-id'])).size).toBe(3);
    } finally {
      await receiver.close();
    }
  });
});
