// Customers: creation (individual and business), validation of every field, shapes of the full
// resource and of list items, documents and their rules.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { workflowIds } from '../src/temporal/workflow-ids';
import {
  address,
  beneficiary,
  businessCustomer,
  createCustomer,
  files,
  individualCustomer,
  uploadDocument,
} from './support/fixtures';
import { Harness, startHarness, TestPartner } from './support/harness';

let harness: Harness;
let partner: TestPartner;

beforeAll(async () => {
  harness = await startHarness({}, { realTime: true });
  partner = await harness.createPartner();
});
afterAll(() => harness?.teardown());

const iso = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
const uuid = expect.stringMatching(/^[0-9a-f-]{36}$/);

async function eventsOf(resourceId: string) {
  return harness.prisma.event.findMany({ where: { resourceId }, orderBy: { sequence: 'asc' } });
}

describe('POST /v1/customers', () => {
  it('creates an individual in pending with its verification link', async () => {
    const response = await partner.api
      .post('/v1/customers')
      .send(individualCustomer({ email: 'Ana.Souza@Example.com' }));
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: uuid,
      type: 'individual',
      status: 'pending',
      email: 'ana.souza@example.com',
      phone_number: '+5511987654321',
      country: 'BRA',
      address,
      first_name: 'Ana',
      last_name: 'Souza',
      date_of_birth: '1990-05-17',
      tin: '52998224725',
      partner_id: partner.partnerId,
      verification: {
        verification_link: expect.stringMatching(/^http:\/\/localhost:3000\/verify\/[A-Za-z0-9_-]{43}$/),
        verification_type: 'LIGHT',
      },
      created_at: iso,
      updated_at: iso,
    });
  });

  it('creates a business with its beneficiaries and their ids', async () => {
    const response = await partner.api.post('/v1/customers').send(businessCustomer());
    expect(response.status).toBe(201);
    const body = response.body;
    expect(body).toMatchObject({
      type: 'business',
      status: 'pending',
      business_legal_name: 'Acme Comércio Ltda',
      date_of_incorporation: '2015-03-02',
      tax_id: '11222333000181',
      website: 'https://acme.example',
      no_ubos: false,
      partner_id: partner.partnerId,
      verification: { verification_type: 'LIGHT' },
    });
    expect(body).not.toHaveProperty('first_name');
    expect(body).not.toHaveProperty('date_of_birth');
    expect(body.beneficiaries).toEqual([
      {
        id: uuid,
        first_name: 'Carlos',
        last_name: 'Lima',
        email: 'carlos@example.com',
        phone_number: '+5521987654321',
        date_of_birth: '1975-01-30',
        tin: '11144477735',
        country: 'BRA',
        share_size: '60',
        address,
      },
      expect.objectContaining({ id: uuid, first_name: 'Beatriz', share_size: '20.5' }),
    ]);
    expect(new Set(body.beneficiaries.map((b: { id: string }) => b.id)).size).toBe(2);
  });

  it('accepts a business without beneficiaries when no_ubos is true', async () => {
    const response = await partner.api
      .post('/v1/customers')
      .send(businessCustomer({ no_ubos: true, beneficiaries: [] }));
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ no_ubos: true, beneficiaries: [] });
  });

  it('records customer.created with the full resource and starts the verification workflow', async () => {
    const customer = await createCustomer(partner.api);
    const events = await eventsOf(customer.id);
    expect(events).toHaveLength(1);
    // Stored without the link's token (a secret): the placeholder names its version; the API shows the link.
    expect(events[0]).toMatchObject({
      partnerId: partner.partnerId,
      event: 'customer',
      eventType: 'customer.created',
      resourceStatus: 'pending',
      resource: { ...customer, verification: { ...customer.verification, verification_link: 'verification-link:v1' } },
    });
    const shown = await partner.api.get(`/v1/events/${events[0]!.id}`);
    expect(shown.body.event_resource).toEqual(customer);
    const description = await harness.env.client.workflow
      .getHandle(workflowIds.customerVerification(customer.id))
      .describe();
    expect(description.status.name).toBe('RUNNING');
    expect(description.type).toBe('customerVerificationWorkflow');
  });

  it.each([
    ['5511987654321', '+5511987654321'],
    ['+55 11 98765-4321', '+5511987654321'],
    ['(11) 98765-4321', '+5511987654321'],
  ])('normalises the phone number %s to E.164', async (input, expected) => {
    const customer = await createCustomer(partner.api, individualCustomer({ phone_number: input }));
    expect(customer.phone_number).toBe(expected);
  });

  const invalidCases: [string, Record<string, unknown>, { code: string; param: string }[]][] = [
    ['an unknown type', individualCustomer({ type: 'robot' }), [{ code: 'invalid_param', param: 'type' }]],
    [
      'business fields on an individual',
      individualCustomer({ tax_id: '123' }),
      [{ code: 'invalid_param', param: 'tax_id' }],
    ],
    [
      'individual fields on a business',
      businessCustomer({ first_name: 'Ana' }),
      [{ code: 'invalid_param', param: 'first_name' }],
    ],
    [
      'missing required individual fields',
      (() => {
        const { first_name: _f, tin: _t, ...rest } = individualCustomer();
        return rest;
      })(),
      [
        { code: 'missing_param', param: 'first_name' },
        { code: 'missing_param', param: 'tin' },
      ],
    ],
    ['a 2-letter country', individualCustomer({ country: 'BR' }), [{ code: 'invalid_param', param: 'country' }]],
    [
      'a country that does not exist',
      individualCustomer({ country: 'XXX' }),
      [{ code: 'invalid_param', param: 'country' }],
    ],
    [
      'a date that does not exist',
      individualCustomer({ date_of_birth: '1990-02-30' }),
      [{ code: 'invalid_param', param: 'date_of_birth' }],
    ],
    [
      'a date in the future',
      individualCustomer({ date_of_birth: '2999-01-01' }),
      [{ code: 'invalid_param', param: 'date_of_birth' }],
    ],
    [
      'a minor',
      individualCustomer({ date_of_birth: `${new Date().getUTCFullYear() - 10}-01-01` }),
      [{ code: 'invalid_param', param: 'date_of_birth' }],
    ],
    [
      'a date in another format',
      individualCustomer({ date_of_birth: '17/05/1990' }),
      [{ code: 'invalid_param', param: 'date_of_birth' }],
    ],
    ['an invalid email', individualCustomer({ email: 'ana@' }), [{ code: 'invalid_param', param: 'email' }]],
    [
      'an invalid phone number',
      individualCustomer({ phone_number: '12345' }),
      [{ code: 'invalid_param', param: 'phone_number' }],
    ],
    [
      'a phone number with letters',
      individualCustomer({ phone_number: '+55 11 CALL-NOW' }),
      [{ code: 'invalid_param', param: 'phone_number' }],
    ],
    [
      'an address without city and with a bad country',
      individualCustomer({ address: { ...address, city: undefined, country: 'Brazil' } }),
      [
        { code: 'missing_param', param: 'address.city' },
        { code: 'invalid_param', param: 'address.country' },
      ],
    ],
    ['an empty first name', individualCustomer({ first_name: '  ' }), [{ code: 'invalid_param', param: 'first_name' }]],
    ['a number as a name', individualCustomer({ last_name: 42 }), [{ code: 'invalid_param', param: 'last_name' }]],
    [
      'a website that is not a URL',
      businessCustomer({ website: 'acme' }),
      [{ code: 'invalid_param', param: 'website' }],
    ],
    [
      'no_ubos true with beneficiaries',
      businessCustomer({ no_ubos: true }),
      [{ code: 'invalid_param', param: 'no_ubos' }],
    ],
    [
      'no beneficiaries without no_ubos',
      businessCustomer({ beneficiaries: [] }),
      [{ code: 'invalid_param', param: 'beneficiaries' }],
    ],
    [
      'a share above 100',
      businessCustomer({ beneficiaries: [beneficiary({ share_size: '100.5' })] }),
      [{ code: 'invalid_param', param: 'beneficiaries.0.share_size' }],
    ],
    [
      'a share that is not a decimal string',
      businessCustomer({ beneficiaries: [beneficiary({ share_size: 25 })] }),
      [{ code: 'invalid_param', param: 'beneficiaries.0.share_size' }],
    ],
    [
      'a beneficiary without tin and with a bad phone',
      businessCustomer({ beneficiaries: [beneficiary({ tin: undefined, phone_number: 'abc' })] }),
      [
        { code: 'missing_param', param: 'beneficiaries.0.tin' },
        { code: 'invalid_param', param: 'beneficiaries.0.phone_number' },
      ],
    ],
  ];

  it('refuses shares above 100% in total with 422 beneficiary_shares_exceed_100 and creates nothing', async () => {
    // Each share is valid on its own (the description's rule); their sum is not a rule of the shape.
    const before = await harness.prisma.customer.count({ where: { partnerId: partner.partnerId } });
    const response = await partner.api
      .post('/v1/customers')
      .send(
        businessCustomer({ beneficiaries: [beneficiary({ share_size: '60' }), beneficiary({ share_size: '40.01' })] }),
      );
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('beneficiary_shares_exceed_100');
    expect(response.body.error.message).toContain('100.01%');
    expect(await harness.prisma.customer.count({ where: { partnerId: partner.partnerId } })).toBe(before);
  });

  it.each(invalidCases)('rejects %s with validation_error and creates nothing', async (_name, body, expected) => {
    const before = await harness.prisma.customer.count({ where: { partnerId: partner.partnerId } });
    const response = await partner.api.post('/v1/customers').send(body);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('validation_error');
    const details = response.body.error.details.map((d: { code: string; param: string }) => ({
      code: d.code,
      param: d.param,
    }));
    expect(details).toEqual(expected);
    for (const detail of response.body.error.details) expect(detail.message).toEqual(expect.any(String));
    expect(await harness.prisma.customer.count({ where: { partnerId: partner.partnerId } })).toBe(before);
  });
});

describe('GET /v1/customers and /v1/customers/{id}', () => {
  it('returns the create shape for one customer', async () => {
    const created = await createCustomer(partner.api, businessCustomer());
    const response = await partner.api.get(`/v1/customers/${created.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(created);
  });

  it('lists items without partner_id or verification, with verification_link while pending', async () => {
    const lister = await harness.createPartner('Lister');
    const created = await createCustomer(lister.api, businessCustomer());
    const response = await lister.api.get('/v1/customers');
    expect(response.status).toBe(200);
    expect(response.body.items).toHaveLength(1);
    const item = response.body.items[0];
    expect(item).not.toHaveProperty('partner_id');
    expect(item).not.toHaveProperty('verification');
    const { partner_id: _p, verification, ...rest } = created;
    expect(item).toEqual({ ...rest, verification_link: verification.verification_link });
  });
});

describe('POST /v1/customers/{customerId}/documents', () => {
  let customerId: string;
  let business: { id: string; beneficiaries?: { id: string }[] };

  beforeAll(async () => {
    customerId = (await createCustomer(partner.api)).id;
    business = await createCustomer(partner.api, businessCustomer());
  });

  it('stores a document: 204, a database row and the bytes on disk', async () => {
    const response = await uploadDocument(partner.api, customerId, {
      document_type: 'PASSPORT',
      document_side: 'FRONT',
      country: 'BRA',
    });
    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    const documents = await harness.prisma.customerDocument.findMany({ where: { customerId } });
    expect(documents).toHaveLength(1);
    expect(documents[0]).toMatchObject({
      documentType: 'PASSPORT',
      documentSide: 'FRONT',
      country: 'BRA',
      contentType: 'application/pdf',
      sizeBytes: files.pdf.length,
      fileName: 'document.pdf',
    });
    const stored = readFileSync(path.join(harness.config.documentStorageDir, documents[0]!.storageKey));
    expect(stored.equals(files.pdf)).toBe(true);
  });

  it('recognises the file by its content, not its name', async () => {
    const response = await uploadDocument(
      partner.api,
      customerId,
      { document_type: 'SELFIE' },
      files.png,
      'selfie.pdf',
    );
    expect(response.status).toBe(204);
    const selfie = await harness.prisma.customerDocument.findFirst({ where: { customerId, documentType: 'SELFIE' } });
    expect(selfie?.contentType).toBe('image/png');
  });

  it('accepts personal documents of a beneficiary for a business', async () => {
    const beneficiaryId = business.beneficiaries![0]!.id;
    const response = await uploadDocument(partner.api, business.id, {
      document_type: 'NATIONAL_ID',
      document_side: 'BACK',
      beneficiary_id: beneficiaryId,
    });
    expect(response.status).toBe(204);
  });

  const badMetadata: [string, () => Record<string, unknown>, () => string, string][] = [
    [
      'an unknown document type',
      () => ({ document_type: 'BIRTH_CERTIFICATE' }),
      () => customerId,
      'metadata.document_type',
    ],
    ['a sided type without side', () => ({ document_type: 'NATIONAL_ID' }), () => customerId, 'metadata.document_side'],
    [
      'a side that is not FRONT or BACK',
      () => ({ document_type: 'PASSPORT', document_side: 'TOP' }),
      () => customerId,
      'metadata.document_side',
    ],
    [
      'a side on a proof of address',
      () => ({ document_type: 'PROOF_OF_ADDRESS', document_side: 'FRONT' }),
      () => customerId,
      'metadata.document_side',
    ],
    [
      'a bad country',
      () => ({ document_type: 'PROOF_OF_ADDRESS', country: 'BR' }),
      () => customerId,
      'metadata.country',
    ],
    [
      'a business document for an individual',
      () => ({ document_type: 'SHAREHOLDER_REGISTRY' }),
      () => customerId,
      'metadata.document_type',
    ],
    [
      'a beneficiary_id for an individual',
      () => ({ document_type: 'PROOF_OF_ADDRESS', beneficiary_id: business.beneficiaries![0]!.id }),
      () => customerId,
      'metadata.beneficiary_id',
    ],
    [
      'a personal document of a business without beneficiary',
      () => ({ document_type: 'PASSPORT', document_side: 'FRONT' }),
      () => business.id,
      'metadata.document_type',
    ],
    [
      'a beneficiary of another customer',
      () => ({ document_type: 'PROOF_OF_ADDRESS', beneficiary_id: '00000000-0000-4000-8000-000000000000' }),
      () => business.id,
      'metadata.beneficiary_id',
    ],
    [
      'a company document with a beneficiary',
      () => ({ document_type: 'INCORPORATION_CERTIFICATE', beneficiary_id: business.beneficiaries![0]!.id }),
      () => business.id,
      'metadata.document_type',
    ],
    [
      'an unknown metadata field',
      () => ({ document_type: 'PROOF_OF_ADDRESS', expires: '2030-01-01' }),
      () => customerId,
      'metadata.expires',
    ],
  ];

  /** Rules that depend on the customer (its type, its beneficiaries): 422, not a matter of the request's shape. */
  const customerRules = new Set([
    'a business document for an individual',
    'a beneficiary_id for an individual',
    'a personal document of a business without beneficiary',
    'a beneficiary of another customer',
    'a company document with a beneficiary',
  ]);

  it.each(badMetadata)('rejects %s', async (name, metadata, target, param) => {
    const before = await harness.prisma.customerDocument.count({
      where: { customer: { partnerId: partner.partnerId } },
    });
    const response = await uploadDocument(partner.api, target(), metadata());
    if (customerRules.has(name)) {
      expect(response.status).toBe(422);
      expect(response.body.error.code).toBe('document_not_applicable');
      expect(response.body.error.message).toContain(param);
    } else {
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('validation_error');
      expect(response.body.error.details).toEqual([expect.objectContaining({ code: 'invalid_param', param })]);
    }
    expect(await harness.prisma.customerDocument.count({ where: { customer: { partnerId: partner.partnerId } } })).toBe(
      before,
    );
  });

  it('rejects a missing file part', async () => {
    const response = await partner.api
      .post(`/v1/customers/${customerId}/documents`)
      .field('metadata', JSON.stringify({ document_type: 'PROOF_OF_ADDRESS' }));
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([{ code: 'missing_param', param: 'file', message: 'is required' }]);
  });

  it('rejects a missing metadata part', async () => {
    const response = await partner.api.post(`/v1/customers/${customerId}/documents`).attach('file', files.pdf, 'a.pdf');
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([
      expect.objectContaining({ code: 'missing_param', param: 'metadata' }),
    ]);
  });

  it('rejects metadata that is not JSON', async () => {
    const response = await partner.api
      .post(`/v1/customers/${customerId}/documents`)
      .field('metadata', 'document_type=PASSPORT')
      .attach('file', files.pdf, 'a.pdf');
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([
      { code: 'invalid_param', param: 'metadata', message: 'must be a JSON string' },
    ]);
  });

  it.each([
    ['a text file', files.text],
    ['an empty file', Buffer.alloc(0)],
  ])('rejects %s', async (_name, file) => {
    const response = await uploadDocument(
      partner.api,
      customerId,
      { document_type: 'PROOF_OF_ADDRESS' },
      file,
      'x.pdf',
    );
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([expect.objectContaining({ code: 'invalid_param', param: 'file' })]);
  });

  it('rejects two files in one call', async () => {
    const response = await partner.api
      .post(`/v1/customers/${customerId}/documents`)
      .field('metadata', JSON.stringify({ document_type: 'PROOF_OF_ADDRESS' }))
      .attach('file', files.pdf, 'a.pdf')
      .attach('file', files.pdf, 'b.pdf');
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([
      expect.objectContaining({ param: 'file', message: 'only one document can be uploaded per call' }),
    ]);
  });

  it('rejects a body cut short (no closing boundary) with 400, and stores nothing', async () => {
    // Found by the chaos fuzzer: the file part's stream errored unhandled and the process stopped.
    const before = await harness.prisma.customerDocument.count({ where: { customerId } });
    const body = Buffer.concat([
      Buffer.from(
        '--cut\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n{"document_type":"PROOF_OF_ADDRESS"}\r\n' +
          '--cut\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n',
      ),
      files.pdf,
    ]);
    const response = await partner.api
      .post(`/v1/customers/${customerId}/documents`)
      .set('Content-Type', 'multipart/form-data; boundary=cut')
      .send(body);
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([expect.objectContaining({ code: 'invalid_param', param: 'body' })]);
    expect(await harness.prisma.customerDocument.count({ where: { customerId } })).toBe(before);
  });

  it('rejects a file over 10 MB with 413', async () => {
    const big = Buffer.concat([files.pdf, Buffer.alloc(10 * 1024 * 1024)]);
    const response = await uploadDocument(partner.api, customerId, { document_type: 'PROOF_OF_ADDRESS' }, big);
    expect(response.status).toBe(413);
    expect(response.body.error.code).toBe('payload_too_large');
  });

  it('rejects a JSON body with 415', async () => {
    const response = await partner.api.post(`/v1/customers/${customerId}/documents`).send({ metadata: {} });
    expect(response.status).toBe(415);
    expect(response.body.error.code).toBe('unsupported_media_type');
  });

  it("answers 404 for another partner's customer", async () => {
    const other = await harness.createPartner('Other');
    const response = await uploadDocument(other.api, customerId, { document_type: 'PROOF_OF_ADDRESS' });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('not_found');
  });
});
