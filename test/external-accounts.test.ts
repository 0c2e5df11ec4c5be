// External accounts over HTTP: every rail, its validation, the pix directory, screening, duplicates,
// events, scoping, pagination and filters.
import { Harness, startHarness, TestPartner } from './support/harness';
import {
  createCustomer,
  createExternalAccount,
  externalAccount,
  germanAddress,
  individualCustomer,
  railObjects,
  RailName,
  usAddress,
} from './support/fixtures';
import { PixDirectoryUnavailableError } from '../src/providers/pix-directory';

let harness: Harness;
let partner: TestPartner;
let customerId: string;

beforeAll(async () => {
  harness = await startHarness();
  partner = await harness.createPartner();
  customerId = (await createCustomer(partner.api)).id;
});
afterAll(() => harness?.teardown());

/** A fresh customer, so that duplicate detection does not interfere between tests. */
async function newCustomer(api = partner.api): Promise<string> {
  return (await createCustomer(api, individualCustomer())).id;
}

async function eventsOf(resourceId: string) {
  return harness.prisma.event.findMany({ where: { resourceId }, orderBy: { sequence: 'asc' } });
}

async function post(body: Record<string, unknown>, api = partner.api) {
  return api.post('/v1/external-accounts').send(body);
}

function expectValidationError(
  response: { status: number; body: { error: { code: string; details?: unknown } } },
  details: Array<{ code: string; param: string; message?: unknown }>,
) {
  expect(response.status).toBe(400);
  expect(response.body.error.code).toBe('validation_error');
  expect(response.body.error.details).toEqual(details.map((detail) => ({ message: expect.any(String), ...detail })));
}

const timestamp = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

describe('creating an account on each rail', () => {
  const expectedRailObject: Record<RailName, (customer: string) => unknown> = {
    pix: () => ({
      key: '+5511987654321',
      key_type: 'phone',
      bank_name: expect.any(String),
      beneficiary_name: expect.any(String),
    }),
    pix_account: () => ({ ...railObjects.pix_account, bank_account_number: '1234567' }),
    spei: () => railObjects.spei,
    wire: () => railObjects.wire,
    sepa: () => railObjects.sepa,
    cvu: () => railObjects.cvu,
  };

  it.each(Object.keys(railObjects) as RailName[])(
    '%s: answers 201 approved with the rail object, stores it and records created then approved',
    async (rail) => {
      const customer = await newCustomer();
      const response = await post(externalAccount(customer, rail));
      expect(response.status).toBe(201);
      expect(response.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        customer_id: customer,
        account_name: `My ${rail} account`,
        payment_rail: rail,
        status: 'approved',
        is_third_party: false,
        [rail]: expectedRailObject[rail](customer),
        created_at: timestamp,
        updated_at: response.body.created_at,
      });

      const fetched = await partner.api.get(`/v1/external-accounts/${response.body.id}`);
      expect(fetched.status).toBe(200);
      expect(fetched.body).toEqual(response.body);

      const row = await harness.prisma.externalAccount.findUniqueOrThrow({ where: { id: response.body.id } });
      expect(row).toMatchObject({
        partnerId: partner.partnerId,
        customerId: customer,
        paymentRail: rail,
        status: 'approved',
        screeningReason: null,
      });

      const events = await eventsOf(response.body.id);
      expect(events.map((event) => event.eventType)).toEqual(['external_account.created', 'external_account.approved']);
      for (const event of events) {
        expect(event).toMatchObject({
          partnerId: partner.partnerId,
          event: 'external_account',
          resourceStatus: 'approved',
          resource: response.body,
        });
      }
    },
  );

  it('keeps is_third_party when given', async () => {
    const response = await post(externalAccount(await newCustomer(), 'wire', {}, { is_third_party: true }));
    expect(response.status).toBe(201);
    expect(response.body.is_third_party).toBe(true);
  });

  it('registers accounts for a customer that is not approved yet', async () => {
    const customer = await createCustomer(partner.api);
    expect(customer.status).toBe('pending');
    expect((await post(externalAccount(customer.id, 'sepa'))).status).toBe(201);
  });

  it('spei by phone number: normalises the Mexican number to E.164 and has no clabe', async () => {
    const response = await post(
      externalAccount(await newCustomer(), 'spei', {
        protocol: 'phonenumber',
        clabe: undefined,
        phone_number: '55 1234 5678',
        bank_code: '012',
      }),
    );
    expect(response.status).toBe(201);
    expect(response.body.spei).toEqual({
      beneficiary_name: 'María López',
      protocol: 'phonenumber',
      bank_code: '012',
      phone_number: '+525512345678',
      bank_name: 'Banamex',
    });
  });

  it('cvu by CBU: returns cbu and no cvu', async () => {
    const response = await post(
      externalAccount(await newCustomer(), 'cvu', { cvu: undefined, cbu: '2850590940090418135201' }),
    );
    expect(response.status).toBe(201);
    expect(response.body.cvu).toEqual({ beneficiary_name: 'Lucía Fernández', cbu: '2850590940090418135201' });
  });

  it('normalises identifiers: IBAN with spaces, lower-case BIC, masked CPF, account hyphen', async () => {
    const sepa = await post(
      externalAccount(await newCustomer(), 'sepa', {
        iban: 'fr14 2004 1010 0505 0001 3m02 606',
        bic: 'bnpafrpp',
        country: 'FRA',
        beneficiary_type: 'business',
      }),
    );
    expect(sepa.status).toBe(201);
    expect(sepa.body.sepa).toMatchObject({ iban: 'FR1420041010050500013M02606', bic: 'BNPAFRPP', country: 'FRA' });

    const pixAccount = await post(
      externalAccount(await newCustomer(), 'pix_account', {
        beneficiary_document: '11.222.333/0001-81',
        bank_account_number: '12345-x',
        account_type: 'payment',
      }),
    );
    expect(pixAccount.status).toBe(201);
    expect(pixAccount.body.pix_account).toMatchObject({
      beneficiary_document: '11222333000181',
      bank_account_number: '12345X',
    });
  });

  it.each([
    ['GB', 'GBR', 'GB82WEST12345698765432', 'NWBKGB2L'],
    ['NL', 'NLD', 'NL91ABNA0417164300', 'ABNANL2A'],
    ['ES', 'ESP', 'ES9121000418450200051332', 'CAIXESBBXXX'],
    ['IT', 'ITA', 'IT60X0542811101000000123456', 'BPMOIT22'],
    ['CH', 'CHE', 'CH9300762011623852957', 'UBSWCHZH80A'],
    ['NO', 'NOR', 'NO9386011117947', 'DNBANOKK'],
    ['MT', 'MLT', 'MT84MALT011000012345MTLCAST001S', 'MALTMTMT'],
  ])('accepts a valid %s IBAN', async (_code, country, iban, bic) => {
    const response = await post(externalAccount(await newCustomer(), 'sepa', { iban, bic, country }));
    expect(response.status).toBe(201);
    expect(response.body.sepa).toMatchObject({ iban, bic, country });
  });
});

describe('request validation', () => {
  it('reports a missing payment_rail', async () => {
    const response = await post({ customer_id: customerId, account_name: 'x' });
    expectValidationError(response, [{ code: 'missing_param', param: 'payment_rail', message: 'is required' }]);
  });

  it('refuses an unknown payment_rail', async () => {
    const response = await post({ customer_id: customerId, account_name: 'x', payment_rail: 'ach' });
    expectValidationError(response, [
      {
        code: 'invalid_param',
        param: 'payment_rail',
        message: 'must be one of: "pix", "pix_account", "spei", "wire", "sepa", "cvu"',
      },
    ]);
  });

  it('reports the missing rail object and every missing common field at once', async () => {
    const response = await post({ payment_rail: 'sepa' });
    expectValidationError(response, [
      { code: 'missing_param', param: 'customer_id', message: 'is required' },
      { code: 'missing_param', param: 'account_name', message: 'is required' },
      { code: 'missing_param', param: 'sepa', message: 'is required' },
    ]);
  });

  it('refuses a second rail object and unknown fields', async () => {
    const response = await post({
      ...externalAccount(customerId, 'sepa'),
      wire: railObjects.wire,
      nickname: 'x',
    });
    expectValidationError(response, [
      { code: 'invalid_param', param: 'wire', message: 'is not a known field' },
      { code: 'invalid_param', param: 'nickname', message: 'is not a known field' },
    ]);
  });

  it('refuses unknown fields inside the rail object and a wrong is_third_party', async () => {
    const response = await post(externalAccount(customerId, 'cvu', { alias: 'mi.alias' }, { is_third_party: 'yes' }));
    expectValidationError(response, [
      { code: 'invalid_param', param: 'is_third_party', message: 'must be a boolean' },
      { code: 'invalid_param', param: 'cvu.alias', message: 'is not a known field' },
    ]);
  });

  it('reports every missing field of an empty rail object', async () => {
    const response = await post(externalAccount(customerId, 'wire', {}, { wire: {} }));
    expectValidationError(
      response,
      [
        'beneficiary_name',
        'beneficiary_type',
        'bank_name',
        'bank_account_number',
        'routing_number',
        'beneficiary_address',
      ].map((field) => ({ code: 'missing_param', param: `wire.${field}`, message: 'is required' })),
    );
  });

  it('refuses an empty account_name', async () => {
    const response = await post(externalAccount(customerId, 'sepa', {}, { account_name: '  ' }));
    expectValidationError(response, [{ code: 'invalid_param', param: 'account_name', message: 'must not be empty' }]);
  });

  // [rail, rail overrides, param, message fragment]
  const invalidNumbers: Array<[RailName, Record<string, unknown>, string, string]> = [
    // pix_account
    ['pix_account', { beneficiary_document: '52998224724' }, 'pix_account.beneficiary_document', 'valid check digits'],
    [
      'pix_account',
      { beneficiary_document: '11222333000182' },
      'pix_account.beneficiary_document',
      'valid check digits',
    ],
    ['pix_account', { beneficiary_document: '11111111111' }, 'pix_account.beneficiary_document', 'valid check digits'],
    ['pix_account', { beneficiary_document: 'ana' }, 'pix_account.beneficiary_document', 'CPF (11 digits) or CNPJ'],
    ['pix_account', { bank_code: '01' }, 'pix_account.bank_code', '3-digit bank code'],
    ['pix_account', { branch_code: '12345' }, 'pix_account.branch_code', '4-digit branch'],
    ['pix_account', { bank_account_number: 'abc' }, 'pix_account.bank_account_number', 'check digit'],
    [
      'pix_account',
      { account_type: 'investment' },
      'pix_account.account_type',
      '"checking", "savings", "payment", "salary"',
    ],
    // spei
    ['spei', { clabe: '002010077777777772' }, 'spei.clabe', 'check digit does not match'],
    ['spei', { clabe: '00201007777777777' }, 'spei.clabe', 'must be 18 digits'],
    ['spei', { clabe: '03218000011835971A' }, 'spei.clabe', 'must be 18 digits'],
    ['spei', { bank_code: '2' }, 'spei.bank_code', '3-digit bank code'],
    ['spei', { protocol: 'debitcard' }, 'spei.protocol', '"clabe", "phonenumber"'],
    ['spei', { phone_number: '+525512345678' }, 'spei.phone_number', 'only allowed when protocol is phonenumber'],
    [
      'spei',
      { protocol: 'phonenumber', phone_number: '5512345678' },
      'spei.clabe',
      'only allowed when protocol is clabe',
    ],
    // wire
    ['wire', { routing_number: '021000022' }, 'wire.routing_number', 'checksum does not match'],
    ['wire', { routing_number: '000000000' }, 'wire.routing_number', 'must start with 01-12, 21-32 or 61-72'],
    ['wire', { routing_number: '80000000' }, 'wire.routing_number', 'must be 9 digits'],
    ['wire', { bank_account_number: '123' }, 'wire.bank_account_number', '4 to 17 digits'],
    ['wire', { bank_account_number: '123456789012345678' }, 'wire.bank_account_number', '4 to 17 digits'],
    ['wire', { beneficiary_type: 'company' }, 'wire.beneficiary_type', '"individual", "business"'],
    ['wire', { beneficiary_address: { ...usAddress, country: 'US' } }, 'wire.beneficiary_address.country', 'alpha-3'],
    // sepa
    ['sepa', { iban: 'DE89370400440532013001' }, 'sepa.iban', 'check digits do not match'],
    ['sepa', { iban: 'DE8937040044053201300' }, 'sepa.iban', 'wrong length for an IBAN of DE'],
    ['sepa', { iban: 'XX89370400440532013000' }, 'sepa.iban', 'XX is not a country that uses IBANs'],
    ['sepa', { iban: 'not an iban' }, 'sepa.iban', 'must be an IBAN'],
    ['sepa', { iban: 'CH4431999123000889012', country: 'CHE' }, 'sepa.iban', 'QR-IBAN'],
    ['sepa', { iban: 'FR1420041010050500013M02606' }, 'sepa.iban', 'is an IBAN of FR, not of DEU'],
    ['sepa', { bic: 'DEUTDEF' }, 'sepa.bic', '8 or 11 characters'],
    ['sepa', { bic: 'DEUTXXFF' }, 'sepa.bic', 'XX is not a country code'],
    ['sepa', { country: 'USA' }, 'sepa.country', '"AND", "AUT"'],
    ['sepa', { beneficiary_type: 'company' }, 'sepa.beneficiary_type', '"individual", "business"'],
    [
      'sepa',
      { beneficiary_address: { ...germanAddress, city: '' } },
      'sepa.beneficiary_address.city',
      'must not be empty',
    ],
    // cvu
    ['cvu', { cvu: '0000003110001234567899' }, 'cvu.cvu', 'check digits do not match'],
    ['cvu', { cvu: '000000311000123456789' }, 'cvu.cvu', 'must be 22 digits'],
    ['cvu', { cvu: '2850590940090418135201' }, 'cvu.cvu', 'is a CBU'],
    ['cvu', { cvu: undefined, cbu: '2850590940090418135202' }, 'cvu.cbu', 'check digits do not match'],
    ['cvu', { cvu: undefined, cbu: '0000003110001234567898' }, 'cvu.cbu', 'is a CVU'],
    ['cvu', { cbu: '2850590940090418135201' }, 'cvu.cbu', 'exactly one of them'],
    ['cvu', { cvu: undefined }, 'cvu.cvu', 'send exactly one of cvu and cbu'],
  ];

  it('refuses a spei bank_code that is not the CLABE’s with 422 clabe_bank_code_mismatch', async () => {
    // Both fields are well formed (the description's rules); that they disagree is not a matter of shape.
    const response = await post(externalAccount(customerId, 'spei', { bank_code: '012' }));
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('clabe_bank_code_mismatch');
    expect(response.body.error.message).toContain('whose bank code is 002');
  });

  it.each(invalidNumbers)('%s %j: invalid_param %s', async (rail, overrides, param, fragment) => {
    // This partner's accounts: test files share the database and create accounts meanwhile.
    const count = () => harness.prisma.externalAccount.count({ where: { partnerId: partner.partnerId } });
    const before = await count();
    const response = await post(externalAccount(customerId, rail, overrides));
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('validation_error');
    expect(response.body.error.details).toEqual([
      { code: 'invalid_param', param, message: expect.stringContaining(fragment) },
    ]);
    expect(await count()).toBe(before);
  });

  it('reports the identifier that the protocol needs as missing_param', async () => {
    expectValidationError(
      await post(externalAccount(customerId, 'spei', { protocol: 'phonenumber', clabe: undefined })),
      [{ code: 'missing_param', param: 'spei.phone_number', message: 'is required' }],
    );
    expectValidationError(await post(externalAccount(customerId, 'spei', { clabe: undefined })), [
      { code: 'missing_param', param: 'spei.clabe', message: 'is required' },
    ]);
  });

  it('refuses a phone number that is not Mexican', async () => {
    const response = await post(
      externalAccount(customerId, 'spei', {
        protocol: 'phonenumber',
        clabe: undefined,
        phone_number: '+5511987654321',
      }),
    );
    expectValidationError(response, [
      { code: 'invalid_param', param: 'spei.phone_number', message: expect.stringContaining('Mexican phone number') },
    ]);
  });

  it('reports several invalid numbers of one rail at once', async () => {
    const response = await post(
      externalAccount(customerId, 'sepa', { iban: 'DE89370400440532013001', bic: 'X', beneficiary_name: '' }),
    );
    expect(response.status).toBe(400);
    expect(response.body.error.details.map((detail: { param: string }) => detail.param).sort()).toEqual([
      'sepa.beneficiary_name',
      'sepa.bic',
      'sepa.iban',
    ]);
  });
});

describe('pix keys', () => {
  it.each([
    ['CPF', '529.982.247-25', 'cpf', '52998224725'],
    ['CNPJ', '11222333000181', 'cnpj', '11222333000181'],
    ['alphanumeric CNPJ', '12.ABC.345/01DE-35', 'cnpj', '12ABC34501DE35'],
    ['email', 'Ana.Souza@Example.com', 'email', 'ana.souza@example.com'],
    ['phone', '+55 (21) 98765-4321', 'phone', '+5521987654321'],
    ['random key', '123E4567-E89B-42D3-A456-426614174000', 'random', '123e4567-e89b-42d3-a456-426614174000'],
  ])('accepts a %s key and returns it in directory form with its owner', async (_label, key, keyType, normalised) => {
    const response = await post(externalAccount(await newCustomer(), 'pix', { key }));
    expect(response.status).toBe(201);
    expect(response.body.pix).toEqual({
      key: normalised,
      key_type: keyType,
      bank_name: expect.any(String),
      beneficiary_name: expect.any(String),
    });
  });

  it('resolves the same key to the same owner every time (sandbox directory)', async () => {
    const first = await post(externalAccount(await newCustomer(), 'pix', { key: 'same.owner@example.com' }));
    const second = await post(externalAccount(await newCustomer(), 'pix', { key: 'SAME.OWNER@example.com' }));
    expect(second.body.pix).toEqual(first.body.pix);
  });

  it.each([
    ['a key of no known format', 'hello', 'is not a pix key'],
    ['a CPF with wrong check digits', '52998224724', 'is not a valid CPF: wrong check digits'],
    ['a CNPJ with wrong check digits', '11222333000182', 'is not a valid CNPJ: wrong check digits'],
    ['a phone without +55', '+15551234567', 'Brazilian number in E.164'],
    ['an invalid Brazilian phone', '+5500987654321', 'not a valid Brazilian phone number'],
    ['an email that is too long', `${'a'.repeat(70)}@example.com`, 'at most 77 characters'],
    ['an 11-digit phone without +55 (read as a CPF)', '11987654321', 'is not a valid CPF'],
    ['the unknown CPF', '00000000191', 'is registered in the pix directory'],
    ['the unknown CNPJ', '00.000.000/0001-91', 'is registered in the pix directory'],
    ['the unknown phone', '+5511900000000', 'is registered in the pix directory'],
    ['the unknown random key', '00000000-0000-4000-8000-000000000000', 'is registered in the pix directory'],
    ['an email at unknown.example', 'ana@unknown.example', 'is registered in the pix directory'],
  ])('answers 422 pix_key_invalid for %s and stores nothing', async (_label, key, fragment) => {
    const customer = await newCustomer();
    const response = await post(externalAccount(customer, 'pix', { key }));
    expect(response.status).toBe(422);
    expect(response.body).toEqual({ error: { code: 'pix_key_invalid', message: expect.stringContaining(fragment) } });
    expect(await harness.prisma.externalAccount.count({ where: { customerId: customer } })).toBe(0);
  });

  it('reports a missing or empty key as a validation error, not pix_key_invalid', async () => {
    expectValidationError(await post(externalAccount(customerId, 'pix', {}, { pix: {} })), [
      { code: 'missing_param', param: 'pix.key', message: 'is required' },
    ]);
    expectValidationError(await post(externalAccount(customerId, 'pix', { key: ' ' })), [
      { code: 'invalid_param', param: 'pix.key', message: 'must not be empty' },
    ]);
  });

  it('answers 503 pix_directory_unavailable when the directory is down, and stores nothing', async () => {
    const directory = harness.services.pixDirectory;
    harness.services.pixDirectory = {
      lookup: async () => {
        throw new PixDirectoryUnavailableError('timeout');
      },
    };
    try {
      const customer = await newCustomer();
      const response = await post(externalAccount(customer, 'pix'));
      expect(response.status).toBe(503);
      expect(response.body.error.code).toBe('pix_directory_unavailable');
      expect(await harness.prisma.externalAccount.count({ where: { customerId: customer } })).toBe(0);
    } finally {
      harness.services.pixDirectory = directory;
    }
  });
});

describe('screening', () => {
  it.each([
    ['wire', { beneficiary_name: 'Sanctioned Person' }],
    ['sepa', { beneficiary_name: '  BLOCKED   beneficiary ' }],
    ['cvu', { beneficiary_name: 'Dénied Cómpany Ltd' }],
  ] as Array<[RailName, Record<string, unknown>]>)(
    '%s: a deny-listed beneficiary is stored and returned as rejected (201), with created then rejected events',
    async (rail, overrides) => {
      const response = await post(externalAccount(await newCustomer(), rail, overrides));
      expect(response.status).toBe(201);
      expect(response.body.status).toBe('rejected');
      const events = await eventsOf(response.body.id);
      expect(events.map((event) => [event.eventType, event.resourceStatus])).toEqual([
        ['external_account.created', 'rejected'],
        ['external_account.rejected', 'rejected'],
      ]);
      expect(events[1]!.resource).toEqual(response.body);
      const row = await harness.prisma.externalAccount.findUniqueOrThrow({ where: { id: response.body.id } });
      expect(row.screeningReason).toBe('beneficiary name is on the deny list');
      expect((await partner.api.get(`/v1/external-accounts/${response.body.id}`)).body.status).toBe('rejected');
    },
  );

  it('screens the owner the pix directory names', async () => {
    const response = await post(externalAccount(await newCustomer(), 'pix', { key: 'sanctioned@pix.example' }));
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      status: 'rejected',
      pix: { key: 'sanctioned@pix.example', beneficiary_name: 'Sanctioned Person' },
    });
  });

  it('answers 500 and stores nothing when screening fails', async () => {
    const screening = harness.services.accountScreening;
    harness.services.accountScreening = {
      screen: async () => {
        throw new Error('screening vendor down');
      },
    };
    try {
      const customer = await newCustomer();
      const response = await post(externalAccount(customer, 'wire'));
      expect(response.status).toBe(500);
      expect(response.body.error.code).toBe('internal_error');
      expect(await harness.prisma.externalAccount.count({ where: { customerId: customer } })).toBe(0);
    } finally {
      harness.services.accountScreening = screening;
    }
  });
});

describe('customers', () => {
  it("answers 404 for another partner's customer, an unknown one and a malformed id", async () => {
    const other = await harness.createPartner('Other');
    const foreignCustomer = await newCustomer(other.api);
    for (const id of [foreignCustomer, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const response = await post(externalAccount(id, 'sepa'));
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    expect(await harness.prisma.externalAccount.count({ where: { customerId: foreignCustomer } })).toBe(0);
  });

  it('answers 422 customer_rejected for a rejected customer', async () => {
    const customer = await newCustomer();
    await harness.prisma.customer.update({ where: { id: customer }, data: { status: 'rejected' } });
    const response = await post(externalAccount(customer, 'sepa'));
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('customer_rejected');
  });
});

describe('duplicates', () => {
  it('answers 422 external_account_already_exists for the same account, however it is written', async () => {
    const customer = await newCustomer();
    const first = await createExternalAccount(partner.api, externalAccount(customer, 'sepa'));
    const again = await post(
      externalAccount(
        customer,
        'sepa',
        { iban: 'de89 3704 0044 0532 0130 00', beneficiary_name: 'Other' },
        { account_name: 'Again' },
      ),
    );
    expect(again.status).toBe(422);
    expect(again.body.error.code).toBe('external_account_already_exists');
    expect(again.body.error.message).toContain(first.id);
    expect(await harness.prisma.externalAccount.count({ where: { customerId: customer } })).toBe(1);
  });

  it('also refuses a repeat of a rejected account', async () => {
    const customer = await newCustomer();
    const rejected = await createExternalAccount(
      partner.api,
      externalAccount(customer, 'wire', { beneficiary_name: 'Sanctioned Person' }),
    );
    expect(rejected.status).toBe('rejected');
    const again = await post(externalAccount(customer, 'wire', { beneficiary_name: 'Sanctioned Person' }));
    expect(again.status).toBe(422);
    expect(again.body.error.message).toContain(rejected.id);
  });

  it.each([
    ['pix (same key in another form)', 'pix', { key: '+55 11 98765-4321' }],
    [
      'pix_account (account number without hyphen)',
      'pix_account',
      { bank_account_number: '1234567', beneficiary_name: 'X' },
    ],
    ['spei', 'spei', { bank_name: 'Citibanamex' }],
    ['wire', 'wire', { bank_name: 'Chase' }],
    ['cvu', 'cvu', { beneficiary_name: 'Otra Persona' }],
  ] as Array<[string, RailName, Record<string, unknown>]>)(
    'detects a repeated %s account',
    async (_label, rail, overrides) => {
      const customer = await newCustomer();
      await createExternalAccount(partner.api, externalAccount(customer, rail));
      const again = await post(externalAccount(customer, rail, overrides));
      expect(again.status).toBe(422);
      expect(again.body.error.code).toBe('external_account_already_exists');
    },
  );

  it('lets different accounts and different customers register the same numbers', async () => {
    const customer = await newCustomer();
    await createExternalAccount(partner.api, externalAccount(customer, 'wire'));
    // Another account at the same bank, and the same account for another customer.
    expect((await post(externalAccount(customer, 'wire', { bank_account_number: '000123456790' }))).status).toBe(201);
    expect((await post(externalAccount(await newCustomer(), 'wire'))).status).toBe(201);
  });

  it('creates one account when the same registration races', async () => {
    const customer = await newCustomer();
    const body = externalAccount(customer, 'cvu', { cvu: undefined, cbu: '0720000778000000012349' });
    const responses = await Promise.all([post(body), post(body), post(body)]);
    expect(responses.map((response) => response.status).sort()).toEqual([201, 422, 422]);
    for (const response of responses.filter((r) => r.status === 422)) {
      expect(response.body.error.code).toBe('external_account_already_exists');
    }
    const rows = await harness.prisma.externalAccount.findMany({ where: { customerId: customer } });
    expect(rows).toHaveLength(1);
    expect((await eventsOf(rows[0]!.id)).length).toBe(2);
  });
});

describe('lookups and lists', () => {
  let lister: TestPartner;
  let customerA: string;
  let customerB: string;
  let ids: string[];

  beforeAll(async () => {
    lister = await harness.createPartner('Lister');
    customerA = await newCustomer(lister.api);
    customerB = await newCustomer(lister.api);
    ids = [];
    const bodies = [
      externalAccount(customerA, 'sepa'),
      externalAccount(customerB, 'wire'),
      externalAccount(customerA, 'spei'),
      externalAccount(customerB, 'cvu'),
      externalAccount(customerA, 'pix_account'),
    ];
    for (const body of bodies) ids.push((await createExternalAccount(lister.api, body)).id);
    const days = ['2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05'];
    for (const [index, id] of ids.entries()) {
      await harness.prisma.externalAccount.update({
        where: { id },
        data: { createdAt: new Date(`${days[index]}T12:00:00Z`) },
      });
    }
  });

  const idsOf = (response: { body: { items: Array<{ id: string }> } }) => response.body.items.map((item) => item.id);

  it('lists newest first, each item in the GET shape', async () => {
    const response = await lister.api.get('/v1/external-accounts');
    expect(response.status).toBe(200);
    expect(idsOf(response)).toEqual([...ids].reverse());
    expect(response.body.cursor).toEqual({ after: null, before: null, limit: 10, page_count: 5 });
    for (const item of response.body.items) {
      expect(item).toEqual((await lister.api.get(`/v1/external-accounts/${item.id}`)).body);
    }
  });

  it('pages forward and back', async () => {
    const newestFirst = [...ids].reverse();
    const first = await lister.api.get('/v1/external-accounts?limit=2');
    expect(idsOf(first)).toEqual(newestFirst.slice(0, 2));
    const second = await lister.api.get(`/v1/external-accounts?limit=2&after=${first.body.cursor.after}`);
    expect(idsOf(second)).toEqual(newestFirst.slice(2, 4));
    const third = await lister.api.get(`/v1/external-accounts?limit=2&after=${second.body.cursor.after}`);
    expect(idsOf(third)).toEqual(newestFirst.slice(4));
    expect(third.body.cursor.after).toBeNull();
    const back = await lister.api.get(`/v1/external-accounts?limit=2&before=${third.body.cursor.before}`);
    expect(idsOf(back)).toEqual(newestFirst.slice(2, 4));
  });

  it('filters by customer_id', async () => {
    const a = await lister.api.get(`/v1/external-accounts?customer_id=${customerA}`);
    expect(idsOf(a)).toEqual([ids[4], ids[2], ids[0]]);
    const b = await lister.api.get(`/v1/external-accounts?customer_id=${customerB}&limit=1`);
    expect(idsOf(b)).toEqual([ids[3]]);
    const next = await lister.api.get(
      `/v1/external-accounts?customer_id=${customerB}&limit=1&after=${b.body.cursor.after}`,
    );
    expect(idsOf(next)).toEqual([ids[1]]);
    expect(next.body.cursor.after).toBeNull();
  });

  it('filters by start_date and end_date, together with customer_id', async () => {
    const range = await lister.api.get('/v1/external-accounts?start_date=2026-03-02&end_date=2026-03-04');
    expect(idsOf(range)).toEqual([ids[3], ids[2], ids[1]]);
    const both = await lister.api.get(`/v1/external-accounts?customer_id=${customerA}&start_date=2026-03-02T00:00:00Z`);
    expect(idsOf(both)).toEqual([ids[4], ids[2]]);
  });

  it("answers 404 for a customer_id filter naming another partner's, an unknown or a malformed customer", async () => {
    for (const id of [customerId, '00000000-0000-4000-8000-000000000000', 'nope']) {
      const response = await lister.api.get(`/v1/external-accounts?customer_id=${id}`);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
  });

  it.each([
    ['limit=0', 'limit'],
    ['after=not%20a%20cursor', 'after'],
    ['after=', 'after'],
    ['end_date=2026-13-01', 'end_date'],
    ['status=approved', 'status'],
  ])('rejects %s as invalid_param %s', async (query, param) => {
    const response = await lister.api.get(`/v1/external-accounts?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([expect.objectContaining({ code: 'invalid_param', param })]);
  });

  it("never shows another partner's accounts", async () => {
    const intruder = await harness.createPartner('Intruder');
    expect((await intruder.api.get('/v1/external-accounts')).body.items).toEqual([]);
    for (const id of [ids[0], '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const response = await intruder.api.get(`/v1/external-accounts/${id}`);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
  });

  it('requires an API key', async () => {
    expect((await harness.http.get('/v1/external-accounts')).status).toBe(401);
    expect((await harness.http.post('/v1/external-accounts').send({})).status).toBe(401);
  });
});

describe('OpenAPI description', () => {
  it('documents the three operations, the rail schemas and their error codes', async () => {
    const document = (await harness.http.get('/openapi.json')).body;
    expect(Object.keys(document.paths['/v1/external-accounts'])).toEqual(['post', 'get']);
    expect(Object.keys(document.paths['/v1/external-accounts/{id}'])).toEqual(['get']);
    const create = document.paths['/v1/external-accounts'].post;
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '400', '404', '422', '503']));
    expect(create.responses['422'].description).toContain('pix_key_invalid');
    expect(create.responses['422'].description).toContain('external_account_already_exists');
    for (const id of [
      'PixRequest',
      'PixAccountRequest',
      'SpeiRequest',
      'WireRequest',
      'SepaRequest',
      'CvuRequest',
      'ExternalAccount',
    ]) {
      expect(document.components.schemas).toHaveProperty(id);
    }
  });
});
