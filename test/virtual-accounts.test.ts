// Virtual accounts in the sandbox (SPEC 2.7, 3.2, 4.5): approved at creation with deposit details,
// every creation rule (approved customer, wallet ownership, the EUR third-party rule under
// concurrency), shapes field by field, events, the workflow, lookup by bank reference, scoping, lists.
import { withDatabaseTransaction } from '../src/persistence/database';
import { isValidBIC, isValidIBAN } from 'ibantools';
import { isValidAbaRoutingNumber } from '../src/providers/deposit-accounts';
import { allocateDepositDetails, findVirtualAccountByDepositReference } from '../src/persistence/virtual-accounts';
import { beneficiaryNameOf } from '../src/presenters/virtual-accounts';
import { workflowIds } from '../src/temporal/workflow-ids';
import { virtualAccountStateQuery } from '../workflows/virtual-account';
import { approvedCustomer, createWallet, virtualAccountBody, WalletBody } from './support/accounts';
import { address, createCustomer, CustomerBody, individualCustomer } from './support/fixtures';
import { Harness, startHarness, TestPartner } from './support/harness';

let harness: Harness;
let partner: TestPartner;
let customer: CustomerBody;
let wallet: WalletBody;
let solanaWallet: WalletBody;

beforeAll(async () => {
  harness = await startHarness();
  partner = await harness.createPartner();
  customer = await approvedCustomer(harness, partner.api);
  wallet = await createWallet(partner.api, customer.id, 'ethereum');
  solanaWallet = await createWallet(partner.api, customer.id, 'solana');
});
afterAll(() => harness?.teardown());

const create = (body: Record<string, unknown>, api = partner.api) => api.post('/v1/virtual-accounts').send(body);

async function eventsOf(resourceId: string) {
  return harness.prisma.event.findMany({ where: { resourceId }, orderBy: { sequence: 'asc' } });
}

const sandboxUsdBank = {
  bank_name: 'Sandbox Bank, N.A.',
  bank_address: {
    street_line_1: '1 Sandbox Plaza',
    city: 'New York',
    state: 'NY',
    postal_code: '10004',
    country: 'USA',
  },
  beneficiary_name: 'Ana Souza',
};

describe('creation in the sandbox', () => {
  it('approves a USD account at once with ACH, wire and SWIFT details, field by field', async () => {
    const response = await create(virtualAccountBody(customer.id, wallet.id, { name: 'US collections' }));
    expect(response.status).toBe(201);
    const account = response.body;
    const accountNumber: string = account.deposit_addresses.ach.bank_account_number;
    expect(account).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      customer_id: customer.id,
      name: 'US collections',
      status: 'approved',
      sender: { currency: 'USD' },
      receiver: { currency: 'USDC', wallet_id: wallet.id, payment_rail: 'ethereum', address: wallet.address },
      deposit_addresses: {
        ach: { bank_account_number: accountNumber, routing_number: '123456780', ...sandboxUsdBank },
        wire: { bank_account_number: accountNumber, routing_number: '321076548', ...sandboxUsdBank },
        swift: { bank_account_number: accountNumber, bic: 'SBOXUS33XXX', ...sandboxUsdBank },
      },
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(account).not.toHaveProperty('accepts_third_party_payments');
    expect(accountNumber).toMatch(/^84\d{10}$/);
    expect(isValidAbaRoutingNumber(account.deposit_addresses.ach.routing_number)).toBe(true);
    expect(isValidAbaRoutingNumber(account.deposit_addresses.wire.routing_number)).toBe(true);
    expect(isValidBIC(account.deposit_addresses.swift.bic)).toBe(true);
    expect(new Date(account.created_at).toISOString()).toBe(account.created_at);
    expect((await partner.api.get(`/v1/virtual-accounts/${account.id}`)).body).toEqual(account);

    // Events: created then approved, each with the full (approved) account.
    const events = await eventsOf(account.id);
    expect(events.map((event) => [event.eventType, event.resourceStatus, event.event])).toEqual([
      ['virtual_account.created', 'approved', 'virtual_account'],
      ['virtual_account.approved', 'approved', 'virtual_account'],
    ]);
    for (const event of events) expect(event.resource).toEqual(account);

    // One workflow per account: in the sandbox it has nothing left to decide.
    const handle = harness.env.client.workflow.getHandle(workflowIds.virtualAccount(account.id));
    expect(await handle.result()).toBe('approved');
    const { searchAttributes } = await handle.describe();
    expect(searchAttributes).toMatchObject({
      PartnerId: [partner.partnerId],
      CustomerId: [customer.id],
      ResourceId: [account.id],
      ResourceStatus: ['approved'],
    });
  });

  it('approves a EUR account with a valid IBAN, accepting only the holder by default', async () => {
    const response = await create(
      virtualAccountBody(customer.id, solanaWallet.id, {
        name: 'EU collections',
        sender: { currency: 'EUR' },
        receiver: { currency: 'USDT', wallet_id: solanaWallet.id },
      }),
    );
    expect(response.status).toBe(201);
    const account = response.body;
    const iban: string = account.deposit_addresses.sepa.iban;
    expect(account).toEqual({
      id: expect.any(String),
      customer_id: customer.id,
      name: 'EU collections',
      status: 'approved',
      sender: { currency: 'EUR' },
      receiver: { currency: 'USDT', wallet_id: solanaWallet.id, payment_rail: 'solana', address: solanaWallet.address },
      deposit_addresses: {
        sepa: {
          iban,
          bic: 'SBOXDEBBXXX',
          bank_name: 'Sandbox Bank Europe AG',
          bank_address: { street_line_1: 'Sandboxstraße 1', city: 'Berlin', postal_code: '10117', country: 'DEU' },
          beneficiary_name: 'Ana Souza',
        },
      },
      accepts_third_party_payments: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(iban).toMatch(/^DE\d{2}87654321\d{10}$/);
    expect(isValidIBAN(iban)).toBe(true);
    expect(isValidBIC(account.deposit_addresses.sepa.bic)).toBe(true);
  });

  it('gives every account its own numbers, resolvable from the bank reference', async () => {
    const usd = (await create(virtualAccountBody(customer.id, wallet.id))).body;
    const eur = (await create(virtualAccountBody(customer.id, wallet.id, { sender: { currency: 'EUR' } }))).body;
    const another = (await create(virtualAccountBody(customer.id, wallet.id))).body;
    expect(another.deposit_addresses.ach.bank_account_number).not.toBe(usd.deposit_addresses.ach.bank_account_number);

    const iban: string = eur.deposit_addresses.sepa.iban;
    const spaced = iban.toLowerCase().replace(/(.{4})/g, '$1 ');
    expect((await findVirtualAccountByDepositReference(harness.prisma, { rail: 'sepa', identifier: spaced }))?.id).toBe(
      eur.id,
    );
    for (const rail of ['ach', 'wire', 'swift'] as const) {
      const found = await findVirtualAccountByDepositReference(harness.prisma, {
        rail,
        identifier: usd.deposit_addresses[rail].bank_account_number,
      });
      expect(found?.id).toBe(usd.id);
    }
    expect(await findVirtualAccountByDepositReference(harness.prisma, { rail: 'ach', identifier: iban })).toBeNull();
    expect(
      await findVirtualAccountByDepositReference(harness.prisma, {
        rail: 'sepa',
        identifier: 'DE00000000000000000000',
      }),
    ).toBeNull();
    // The identifiers are unique in the database, per rail.
    const rows = await harness.prisma.virtualAccountDeposit.findMany({ where: { virtualAccountId: usd.id } });
    expect(rows.map((row) => [row.rail, row.bankCode]).sort()).toEqual([
      ['ach', '123456780'],
      ['swift', 'SBOXUS33XXX'],
      ['wire', '321076548'],
    ]);
  });

  it('moves on to the next number when the derived one is taken', async () => {
    const existing = (await create(virtualAccountBody(customer.id, wallet.id))).body;
    const newId = '00000000-0000-4000-8000-00000000abcd';
    const request = { virtualAccountId: newId, senderCurrency: 'EUR' as const, beneficiaryName: 'Ana Souza' };
    const issuer = harness.services.depositAccountIssuer;
    const first = issuer.issue({ ...request, attempt: 0 });
    // Another account already holds the number attempt 0 gives.
    await harness.prisma.virtualAccountDeposit.create({
      data: { id: newId, virtualAccountId: existing.id, ...first.references[0]! },
    });
    const allocated = await withDatabaseTransaction(harness.prisma, (tx) =>
      allocateDepositDetails(tx, issuer, request),
    );
    expect(allocated).toEqual(issuer.issue({ ...request, attempt: 1 }));
    expect(allocated.references[0]!.identifier).not.toBe(first.references[0]!.identifier);
    await harness.prisma.virtualAccountDeposit.delete({ where: { id: newId } });
  });

  it('names businesses by their legal name as the beneficiary', () => {
    expect(
      beneficiaryNameOf({ type: 'business', businessLegalName: 'Acme Ltda', firstName: null, lastName: null }),
    ).toBe('Acme Ltda');
    expect(
      beneficiaryNameOf({ type: 'individual', businessLegalName: null, firstName: 'Ana', lastName: 'Souza' }),
    ).toBe('Ana Souza');
  });
});

describe('creation rules', () => {
  it('refuses accepts_third_party_payments for USD, true or false', async () => {
    for (const flag of [true, false]) {
      const response = await create(virtualAccountBody(customer.id, wallet.id, { accepts_third_party_payments: flag }));
      expect(response.status).toBe(400);
      expect(response.body.error.details).toEqual([
        {
          code: 'invalid_param',
          param: 'accepts_third_party_payments',
          message: 'only applies to EUR accounts; omit it for USD',
        },
      ]);
    }
  });

  it('reports every missing and invalid field at once', async () => {
    const empty = await create({});
    expect(empty.status).toBe(400);
    expect(empty.body.error.details).toEqual([
      { code: 'missing_param', param: 'customer_id', message: 'is required' },
      { code: 'missing_param', param: 'name', message: 'is required' },
      { code: 'missing_param', param: 'sender', message: 'is required' },
      { code: 'missing_param', param: 'receiver', message: 'is required' },
    ]);
    const invalid = await create({
      customer_id: customer.id,
      name: '',
      sender: { currency: 'GBP' },
      receiver: { currency: 'DAI', extra: 1 },
      accepts_third_party_payments: 'yes',
      deposit_addresses: {},
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: 'invalid_param', param: 'name' }),
        { code: 'invalid_param', param: 'sender.currency', message: 'must be one of: "USD", "EUR"' },
        { code: 'invalid_param', param: 'receiver.currency', message: 'must be one of: "USDC", "USDT"' },
        { code: 'missing_param', param: 'receiver.wallet_id', message: 'is required' },
        { code: 'invalid_param', param: 'receiver.extra', message: 'is not a known field' },
        { code: 'invalid_param', param: 'accepts_third_party_payments', message: 'must be a boolean' },
        { code: 'invalid_param', param: 'deposit_addresses', message: 'is not a known field' },
      ]),
    );
    expect(invalid.body.error.details).toHaveLength(7);
  });

  it('refuses a customer that is not approved with 422 customer_not_approved', async () => {
    const pending = await createCustomer(partner.api);
    const response = await create(virtualAccountBody(pending.id, wallet.id));
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('customer_not_approved');
    expect(await harness.prisma.virtualAccount.count({ where: { customerId: pending.id } })).toBe(0);
  });

  it("refuses another customer's wallet with 422 customer_mismatch", async () => {
    const other = await approvedCustomer(harness, partner.api, individualCustomer({ first_name: 'Bia' }));
    const response = await create(virtualAccountBody(other.id, wallet.id));
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('customer_mismatch');
    expect(await harness.prisma.virtualAccount.count({ where: { customerId: other.id } })).toBe(0);
  });

  it("answers 404 for another partner's customer or wallet, and unknown or malformed ids", async () => {
    const stranger = await harness.createPartner('Stranger');
    const strangerCustomer = await approvedCustomer(harness, stranger.api);
    const strangerWallet = await createWallet(stranger.api, strangerCustomer.id);
    const cases = [
      virtualAccountBody(customer.id, wallet.id), // both belong to `partner`
      virtualAccountBody(strangerCustomer.id, wallet.id), // the wallet is another partner's
      virtualAccountBody('00000000-0000-4000-8000-000000000000', strangerWallet.id),
      virtualAccountBody(strangerCustomer.id, 'not-a-uuid'),
    ];
    for (const body of cases) {
      const response = await create(body, stranger.api);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
  });
});

describe('one EUR account with third-party payments per customer', () => {
  it('refuses a second one with 422 eur_virtual_account_3pp_exists, and allows the others', async () => {
    const holder = await approvedCustomer(harness, partner.api, individualCustomer({ first_name: 'Caio' }));
    const holderWallet = await createWallet(partner.api, holder.id);
    const eur = (flag?: boolean) =>
      create(
        virtualAccountBody(holder.id, holderWallet.id, {
          sender: { currency: 'EUR' },
          ...(flag === undefined ? {} : { accepts_third_party_payments: flag }),
        }),
      );
    const first = await eur(true);
    expect(first.status).toBe(201);
    expect(first.body.accepts_third_party_payments).toBe(true);

    const second = await eur(true);
    expect(second.status).toBe(422);
    expect(second.body.error).toEqual({
      code: 'eur_virtual_account_3pp_exists',
      message: expect.stringContaining(holder.id),
    });
    // Holder-only EUR accounts and USD accounts are not limited.
    expect((await eur(false)).status).toBe(201);
    expect((await eur()).body.accepts_third_party_payments).toBe(false);
    expect((await create(virtualAccountBody(holder.id, holderWallet.id))).status).toBe(201);
    // Another customer has its own allowance.
    const other = await approvedCustomer(harness, partner.api, individualCustomer({ first_name: 'Duda' }));
    const otherWallet = await createWallet(partner.api, other.id);
    const otherAccount = await create(
      virtualAccountBody(other.id, otherWallet.id, { sender: { currency: 'EUR' }, accepts_third_party_payments: true }),
    );
    expect(otherAccount.status).toBe(201);
  });

  it('lets exactly one of three concurrent requests through (enforced by the database)', async () => {
    const holder = await approvedCustomer(harness, partner.api, individualCustomer({ first_name: 'Enzo' }));
    const holderWallet = await createWallet(partner.api, holder.id);
    const body = virtualAccountBody(holder.id, holderWallet.id, {
      sender: { currency: 'EUR' },
      accepts_third_party_payments: true,
    });
    const responses = await Promise.all([create(body), create(body), create(body)]);
    expect(responses.map((response) => response.status).sort()).toEqual([201, 422, 422]);
    for (const refused of responses.filter((response) => response.status === 422)) {
      expect(refused.body.error.code).toBe('eur_virtual_account_3pp_exists');
    }
    const rows = await harness.prisma.virtualAccount.findMany({ where: { customerId: holder.id } });
    expect(rows).toHaveLength(1);
    // Nothing of the refused requests remains: no events, no deposit numbers.
    expect(
      await harness.prisma.event.count({
        where: { eventType: { startsWith: 'virtual_account' }, resource: { path: ['customer_id'], equals: holder.id } },
      }),
    ).toBe(2);
  });

  it('is a database invariant, not only a check in code', async () => {
    const holder = await approvedCustomer(harness, partner.api, individualCustomer({ first_name: 'Fabi' }));
    const holderWallet = await createWallet(partner.api, holder.id);
    const first = await create(
      virtualAccountBody(holder.id, holderWallet.id, {
        sender: { currency: 'EUR' },
        accepts_third_party_payments: true,
      }),
    );
    const row = await harness.prisma.virtualAccount.findUniqueOrThrow({ where: { id: first.body.id } });
    await expect(
      harness.prisma.virtualAccount.create({
        data: { ...row, id: '00000000-0000-4000-8000-0000000000aa', depositAddresses: {} },
      }),
    ).rejects.toMatchObject({ code: 'P2002' });
    // And the flag cannot be stored for a USD account.
    await expect(
      harness.prisma.virtualAccount.create({
        data: { ...row, id: '00000000-0000-4000-8000-0000000000ab', senderCurrency: 'USD', depositAddresses: {} },
      }),
    ).rejects.toThrow();
  });
});

describe('reading', () => {
  let lister: TestPartner;
  let first: CustomerBody;
  let second: CustomerBody;
  let ids: string[];

  beforeAll(async () => {
    lister = await harness.createPartner('Lister');
    first = await approvedCustomer(harness, lister.api, individualCustomer({ address }));
    second = await approvedCustomer(harness, lister.api, individualCustomer({ first_name: 'Gil' }));
    const wallets = [await createWallet(lister.api, first.id), await createWallet(lister.api, second.id)];
    ids = [];
    for (const owner of [0, 1, 0, 1, 0]) {
      const customerId = owner === 0 ? first.id : second.id;
      const response = await create(
        virtualAccountBody(customerId, wallets[owner]!.id, { name: `VA ${ids.length}` }),
        lister.api,
      );
      ids.push(response.body.id);
    }
  });

  it('pages newest first, forward and back', async () => {
    const newestFirst = [...ids].reverse();
    const page1 = await lister.api.get('/v1/virtual-accounts?limit=2');
    expect(page1.status).toBe(200);
    expect(page1.body.items.map((item: { id: string }) => item.id)).toEqual(newestFirst.slice(0, 2));
    expect(page1.body.items[0].deposit_addresses.ach).toBeDefined();
    const page2 = await lister.api.get(`/v1/virtual-accounts?limit=2&after=${page1.body.cursor.after}`);
    expect(page2.body.items.map((item: { id: string }) => item.id)).toEqual(newestFirst.slice(2, 4));
    const page3 = await lister.api.get(`/v1/virtual-accounts?limit=2&after=${page2.body.cursor.after}`);
    expect(page3.body.items.map((item: { id: string }) => item.id)).toEqual(newestFirst.slice(4));
    expect(page3.body.cursor).toMatchObject({ after: null, page_count: 1, limit: 2 });
    const back = await lister.api.get(`/v1/virtual-accounts?limit=2&before=${page3.body.cursor.before}`);
    expect(back.body.items.map((item: { id: string }) => item.id)).toEqual(newestFirst.slice(2, 4));
  });

  it('filters by customer_id, with 404 for a customer that is not the partner’s', async () => {
    const filtered = await lister.api.get(`/v1/virtual-accounts?customer_id=${first.id}`);
    expect(filtered.body.items.map((item: { id: string }) => item.id)).toEqual([ids[4], ids[2], ids[0]]);
    expect(filtered.body.items.every((item: { customer_id: string }) => item.customer_id === first.id)).toBe(true);
    const foreign = await lister.api.get(`/v1/virtual-accounts?customer_id=${customer.id}`);
    expect(foreign.status).toBe(404);
    const bad = await lister.api.get('/v1/virtual-accounts?limit=500');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0]).toMatchObject({ code: 'invalid_param', param: 'limit' });
  });

  it("answers 404 for another partner's account, an unknown and a malformed id", async () => {
    for (const id of [ids[0], '00000000-0000-4000-8000-000000000000', 'x']) {
      const response = await partner.api.get(`/v1/virtual-accounts/${id}`);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    const mine = await partner.api.get('/v1/virtual-accounts?limit=100');
    expect(mine.body.items.some((item: { id: string }) => ids.includes(item.id))).toBe(false);
  });

  it('exposes the state to operators through a query', async () => {
    const handle = harness.env.client.workflow.getHandle(workflowIds.virtualAccount(ids[0]!));
    await handle.result();
    expect(await handle.query(virtualAccountStateQuery)).toEqual({
      status: 'approved',
      remindersSent: 0,
      reviewDeadline: null,
    });
  });
});

it('describes wallets and virtual accounts in the OpenAPI document', async () => {
  const document = (await harness.http.get('/openapi.json')).body;
  expect(Object.keys(document.paths)).toEqual(
    expect.arrayContaining(['/v1/wallets', '/v1/wallets/{id}', '/v1/virtual-accounts', '/v1/virtual-accounts/{id}']),
  );
  const create = document.paths['/v1/virtual-accounts'].post;
  expect(Object.keys(create.responses).sort()).toEqual([
    '201',
    '400',
    '401',
    '404',
    '409',
    '413',
    '415',
    '422',
    '429',
    '500',
    '503',
  ]);
  expect(create.responses['422'].description).toContain('eur_virtual_account_3pp_exists');
  expect(document.components.schemas.DepositAddresses.properties).toHaveProperty('sepa');
});

describe('cancellation in the sandbox', () => {
  const cancel = (id: string, body: Record<string, unknown> = { status: 'cancelled' }, api = partner.api) =>
    api.put(`/v1/virtual-accounts/${id}`).send(body);

  it('cancels an approved account once: virtual_account.cancelled with the full account, details gone', async () => {
    const created = await create(virtualAccountBody(customer.id, wallet.id, { name: 'To cancel' }));
    expect(created.status).toBe(201);
    const response = await cancel(created.body.id);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      ...created.body,
      status: 'cancelled',
      deposit_addresses: {},
      updated_at: expect.any(String),
    });
    expect((await partner.api.get(`/v1/virtual-accounts/${created.body.id}`)).body).toEqual(response.body);
    const events = await eventsOf(created.body.id);
    expect(events.map((event) => event.eventType)).toEqual([
      'virtual_account.created',
      'virtual_account.approved',
      'virtual_account.cancelled',
    ]);
    expect(events[2]).toMatchObject({ event: 'virtual_account', resourceStatus: 'cancelled', resource: response.body });

    const again = await cancel(created.body.id);
    expect(again.status).toBe(422);
    expect(again.body.error.code).toBe('virtual_account_cannot_be_cancelled');
    expect(await eventsOf(created.body.id)).toHaveLength(3);
  });

  it('refuses other bodies (400), other partners’ and unknown accounts (404), changing nothing', async () => {
    const created = await create(virtualAccountBody(customer.id, wallet.id, { name: 'Kept' }));
    for (const body of [{ status: 'approved' }, {}, { status: 'cancelled', name: 'x' }]) {
      const response = await cancel(created.body.id, body);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('validation_error');
    }
    const other = await harness.createPartner('Other canceller');
    expect((await cancel(created.body.id, { status: 'cancelled' }, other.api)).status).toBe(404);
    expect((await cancel('00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await partner.api.get(`/v1/virtual-accounts/${created.body.id}`)).body).toEqual(created.body);
    expect(await eventsOf(created.body.id)).toHaveLength(2);
  });
});
