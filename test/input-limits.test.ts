// Bad input never reaches a 500: every JSON body is bounded in size and in nesting depth while it is read, before
// anything walks it, and the walks of request values are iterative. What a partner sees: 400 invalid_json naming the
// depth limit, 413 payload_too_large naming the size limit, both in the error shape, and nothing done.
import { gzipSync } from 'node:zlib';
import { jsonNestsDeeperThan } from '../src/domain/json';
import { JSON_BODY_LIMIT_MB, MAX_JSON_DEPTH } from '../src/http/limits';
import { nulCharacterDetails } from '../src/http/validation';
import { createCustomer, files, individualCustomer } from './support/fixtures';
import { Harness, startHarness, TestPartner } from './support/harness';

let harness: Harness;
let partner: TestPartner;

beforeAll(async () => {
  harness = await startHarness({}, { realTime: true });
  partner = await harness.createPartner();
});
afterAll(async () => {
  await harness?.teardown();
});

const depthMessage = `The request body nests JSON arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`;

/** `levels` arrays, one inside the other, around `inner`. */
const nestedArrays = (levels: number, inner = '1') => `${'['.repeat(levels)}${inner}${']'.repeat(levels)}`;
/** `levels` objects `{"a": ...}`, one inside the other, around `inner`. */
const nestedObjects = (levels: number, inner = '1') => `${'{"a":'.repeat(levels)}${inner}${'}'.repeat(levels)}`;

const fiatToFiatQuote = {
  sender: { currency: 'BRL', payment_rail: 'pix', amount: '1000.00' },
  stablecoin: { currency: 'USDC', payment_rail: 'solana' },
  receiver: { currency: 'MXN', payment_rail: 'spei' },
};

/** What a request could have written for this partner: resources, events, stored idempotent responses. */
async function partnerRows() {
  const where = { where: { partnerId: partner.partnerId } };
  return {
    customers: await harness.prisma.customer.count(where),
    quotes: await harness.prisma.quote.count(where),
    events: await harness.prisma.event.count(where),
    idempotencyKeys: await harness.prisma.idempotencyKey.count(where),
  };
}

function postJson(path: string, text: string, idempotencyKey?: string) {
  const post = partner.api.post(path).set('Content-Type', 'application/json');
  return (idempotencyKey ? post.set('Idempotency-Key', idempotencyKey) : post).send(text);
}

describe('JSON nesting depth', () => {
  it.each([
    ['POST /v1/customers', '/v1/customers', `{"type":"individual","first_name":${nestedArrays(5000)}}`],
    ['POST /v1/customers', '/v1/customers', `{"type":"individual","address":${nestedObjects(5000)}}`],
    ['POST /v1/quote/fiat-to-fiat', '/v1/quote/fiat-to-fiat', `{"sender":${nestedArrays(5000)}}`],
    ['POST /v1/quote/fiat-to-fiat', '/v1/quote/fiat-to-fiat', nestedObjects(5000)],
  ])(
    '%s: 5,000 levels (10-30 KB) answer 400 invalid_json naming the limit, and nothing is done',
    async (_name, path, text) => {
      expect(text.length).toBeLessThan(32_000);
      const before = await partnerRows();
      const response = await postJson(path, text, `deep-${Math.random()}`);
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ error: { code: 'invalid_json', message: depthMessage } });
      expect(await partnerRows()).toEqual(before);
    },
  );

  it(`counts the body as level 1: ${MAX_JSON_DEPTH} levels behave as before (the schema refuses the field), ${MAX_JSON_DEPTH + 1} are refused`, async () => {
    const before = await partnerRows();
    const body = (arrays: number) =>
      JSON.stringify(individualCustomer({ first_name: 'PLACEHOLDER' })).replace(
        '"PLACEHOLDER"',
        nestedArrays(arrays, '"Ana"'),
      );
    const atLimit = await postJson('/v1/customers', body(MAX_JSON_DEPTH - 1));
    expect(atLimit.status).toBe(400);
    expect(atLimit.body.error).toEqual({
      code: 'validation_error',
      message: 'Invalid request: first_name: must be a string',
      details: [{ code: 'invalid_param', param: 'first_name', message: 'must be a string' }],
    });
    const quoteAtLimit = await postJson(
      '/v1/quote/fiat-to-fiat',
      JSON.stringify({ ...fiatToFiatQuote, receiver: 'X' }).replace('"X"', nestedObjects(MAX_JSON_DEPTH - 1)),
    );
    expect(quoteAtLimit.status).toBe(400);
    expect(quoteAtLimit.body.error.code).toBe('validation_error');

    const overLimit = await postJson('/v1/customers', body(MAX_JSON_DEPTH));
    expect(overLimit.status).toBe(400);
    expect(overLimit.body.error).toEqual({ code: 'invalid_json', message: depthMessage });
    expect(await partnerRows()).toEqual(before);
  });

  it('does not count brackets inside strings: a name made of brackets is only a name', async () => {
    const customer = await createCustomer(partner.api, individualCustomer({ first_name: `${'[{'.repeat(45)}"\\` }));
    expect(customer.first_name).toBe(`${'[{'.repeat(45)}"\\`);
  });

  it('bounds the JSON metadata of a document upload too', async () => {
    const customer = await createCustomer(partner.api, individualCustomer());
    const response = await partner.api
      .post(`/v1/customers/${customer.id}/documents`)
      .field('metadata', `{"document_type":"PROOF_OF_ADDRESS","country":${nestedArrays(5000, '"BRA"')}}`)
      .attach('file', files.pdf, 'bill.pdf');
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([
      {
        code: 'invalid_param',
        param: 'metadata',
        message: `must not nest JSON arrays and objects deeper than ${MAX_JSON_DEPTH} levels`,
      },
    ]);
    expect(await harness.prisma.customerDocument.count({ where: { customerId: customer.id } })).toBe(0);
  });

  it('is measured on the text in one pass, whatever the input', () => {
    expect(jsonNestsDeeperThan(nestedArrays(3), 3)).toBe(false);
    expect(jsonNestsDeeperThan(nestedArrays(4), 3)).toBe(true);
    expect(jsonNestsDeeperThan(`{"a":"${'['.repeat(100)}","b":[[1]]}`, 3)).toBe(false);
    expect(jsonNestsDeeperThan(`{"a":"\\"${'['.repeat(100)}"}`, 3)).toBe(false); // an escaped quote does not end the string
    expect(jsonNestsDeeperThan(`[${'[]'.repeat(10_000)}]`, 2)).toBe(false); // siblings are not depth
    expect(jsonNestsDeeperThan('['.repeat(1_000_000), MAX_JSON_DEPTH)).toBe(true); // unclosed: still bounded
  });
});

describe('the NUL check', () => {
  it('walks any depth without recursion, naming the field', () => {
    let value: unknown = { name: 'x\u0000' };
    for (let level = 0; level < 100_000; level += 1) value = [value];
    const [detail] = nulCharacterDetails({ deep: value });
    expect(detail).toEqual({
      code: 'invalid_param',
      param: `deep.${'0.'.repeat(100_000)}name`,
      message: 'must not contain the NUL character (\\u0000)',
    });
  });

  it('reports keys and values in document order', () => {
    expect(
      nulCharacterDetails({
        a: ['ok', 'b\u0000'],
        'k\u0000': { inner: 'not looked into\u0000' },
        z: { y: '\u0000' },
      }).map((detail) => detail.param),
    ).toEqual(['a.1', 'k\u0000', 'z.y']);
    expect(nulCharacterDetails('\u0000')).toEqual([expect.objectContaining({ param: 'body' })]);
  });
});

describe('JSON body size', () => {
  it(`answers a body over ${JSON_BODY_LIMIT_MB} MB with 413 payload_too_large naming the limit, and nothing is done`, async () => {
    const before = await partnerRows();
    const text = JSON.stringify(individualCustomer({ first_name: 'x'.repeat(JSON_BODY_LIMIT_MB * 1024 * 1024) }));
    const response = await postJson('/v1/customers', text, `large-${Math.random()}`);
    expect(response.status).toBe(413);
    expect(response.body).toEqual({
      error: { code: 'payload_too_large', message: `The request body exceeds ${JSON_BODY_LIMIT_MB} MB.` },
    });
    expect(await partnerRows()).toEqual(before);
  });

  it('measures a compressed body once inflated: a small gzip of a large body is refused the same way', async () => {
    const inflated = JSON.stringify({ ...fiatToFiatQuote, padding: ' '.repeat(20 * 1024 * 1024) });
    const compressed = gzipSync(inflated);
    expect(compressed.length).toBeLessThan(100 * 1024);
    const before = await partnerRows();
    const response = await partner.api
      .post('/v1/quote/fiat-to-fiat')
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'gzip')
      .serialize((bytes: Buffer) => bytes as unknown as string) // sent as they are, not as JSON of a Buffer
      .send(compressed);
    expect(response.status).toBe(413);
    expect(response.body.error.code).toBe('payload_too_large');
    expect(await partnerRows()).toEqual(before);
  });

  it('accepts a body just under the limit (here: refused by the schema, not by its size)', async () => {
    const text = JSON.stringify(
      individualCustomer({ first_name: 'x'.repeat(JSON_BODY_LIMIT_MB * 1024 * 1024 - 1000) }),
    );
    const response = await postJson('/v1/customers', text);
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([
      { code: 'invalid_param', param: 'first_name', message: 'must be at most 100 characters' },
    ]);
  });
});
