// Idempotency keys on POST/PUT: replay, mismatch, scoping, what is stored, concurrency, expiry.
import { createCustomer, files, individualCustomer, uploadDocument } from './support/fixtures';
import { Harness, startHarness, TestPartner } from './support/harness';
import { fingerprintOf } from '../src/http/idempotency';

let harness: Harness;
let partner: TestPartner;

beforeAll(async () => {
  harness = await startHarness({}, { realTime: true });
  partner = await harness.createPartner();
});
afterAll(() => harness?.teardown());

const customersOf = (partnerId: string) => harness.prisma.customer.count({ where: { partnerId } });
const create = (api: TestPartner['api'], key: string, body: Record<string, unknown> = individualCustomer()) =>
  api.post('/v1/customers').set('Idempotency-Key', key).send(body);

it('replays the stored response of a repeated request without doing it again', async () => {
  const first = await create(partner.api, 'replay-1');
  const second = await create(partner.api, 'replay-1');
  expect(first.status).toBe(201);
  expect(first.headers['idempotent-replayed']).toBeUndefined();
  expect(second.status).toBe(201);
  expect(second.headers['idempotent-replayed']).toBe('true');
  expect(second.body).toEqual(first.body);
  expect(await harness.prisma.customer.count({ where: { id: first.body.id } })).toBe(1);
  expect(await harness.prisma.event.count({ where: { resourceId: first.body.id } })).toBe(1);
});

it('treats a body with the same content in another key order as the same request', async () => {
  const body = individualCustomer();
  const reversed = Object.fromEntries(Object.entries(body).reverse());
  const first = await create(partner.api, 'order-1', body);
  const second = await create(partner.api, 'order-1', reversed);
  expect(second.headers['idempotent-replayed']).toBe('true');
  expect(second.body.id).toBe(first.body.id);
});

it('answers 422 idempotency_key_reused for the same key with another body or path, changing nothing', async () => {
  await create(partner.api, 'mismatch-1');
  const before = await customersOf(partner.partnerId);
  const otherBody = await create(partner.api, 'mismatch-1', individualCustomer({ first_name: 'Other' }));
  expect(otherBody.status).toBe(422);
  expect(otherBody.body.error.code).toBe('idempotency_key_reused');
  const customer = await createCustomer(partner.api);
  const otherPath = await partner.api.post(`/v1/customers/${customer.id}/check`).set('Idempotency-Key', 'mismatch-1');
  expect(otherPath.status).toBe(422);
  expect(otherPath.body.error.code).toBe('idempotency_key_reused');
  expect(await customersOf(partner.partnerId)).toBe(before + 1);
});

it('scopes keys to the partner', async () => {
  const other = await harness.createPartner('Other');
  const mine = await create(partner.api, 'shared-key');
  const theirs = await create(other.api, 'shared-key');
  expect(theirs.status).toBe(201);
  expect(theirs.headers['idempotent-replayed']).toBeUndefined();
  expect(theirs.body.id).not.toBe(mine.body.id);
  expect(theirs.body.partner_id).toBe(other.partnerId);
});

it('does not store validation errors: the key stays free for the corrected request', async () => {
  const invalid = await create(partner.api, 'fix-me', individualCustomer({ email: 'nope' }));
  expect(invalid.status).toBe(400);
  const fixed = await create(partner.api, 'fix-me', individualCustomer({ email: 'fixed@example.com' }));
  expect(fixed.status).toBe(201);
  expect(fixed.headers['idempotent-replayed']).toBeUndefined();
});

it('stores business refusals: a repeat replays the 422', async () => {
  const customer = await createCustomer(partner.api);
  const refused = await partner.api.post(`/v1/customers/${customer.id}/check`).set('Idempotency-Key', 'check-1');
  expect(refused.status).toBe(422);
  expect(refused.body.error.code).toBe('verification_documents_missing');
  const again = await partner.api.post(`/v1/customers/${customer.id}/check`).set('Idempotency-Key', 'check-1');
  expect(again.status).toBe(422);
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(again.body).toEqual(refused.body);
});

it('applies to multipart uploads: a replayed upload stores one document', async () => {
  const customer = await createCustomer(partner.api);
  const upload = () =>
    partner.api
      .post(`/v1/customers/${customer.id}/documents`)
      .set('Idempotency-Key', 'upload-1')
      .field('metadata', JSON.stringify({ document_type: 'PROOF_OF_ADDRESS' }))
      .attach('file', files.pdf, 'bill.pdf');
  expect((await upload()).status).toBe(204);
  const replay = await upload();
  expect(replay.status).toBe(204);
  expect(replay.headers['idempotent-replayed']).toBe('true');
  expect(await harness.prisma.customerDocument.count({ where: { customerId: customer.id } })).toBe(1);
  const differentFile = await partner.api
    .post(`/v1/customers/${customer.id}/documents`)
    .set('Idempotency-Key', 'upload-1')
    .field('metadata', JSON.stringify({ document_type: 'PROOF_OF_ADDRESS' }))
    .attach('file', files.png, 'bill.pdf');
  expect(differentFile.status).toBe(422);
  expect(await uploadDocument(partner.api, customer.id, { document_type: 'SELFIE' })).toHaveProperty('status', 204);
});

it('creates exactly one customer from 50 concurrent identical requests with one key', async () => {
  const racer = await harness.createPartner('Racer');
  const responses = await Promise.all(Array.from({ length: 50 }, () => create(racer.api, 'race-1')));
  expect(await customersOf(racer.partnerId)).toBe(1);
  const created = responses.filter((response) => response.status === 201);
  const busy = responses.filter((response) => response.status === 409);
  expect(created.length + busy.length).toBe(50);
  expect(created.length).toBeGreaterThanOrEqual(1);
  expect(new Set(created.map((response) => response.body.id)).size).toBe(1);
  for (const response of busy) expect(response.body.error.code).toBe('idempotency_key_in_use');
  expect(created.filter((response) => response.headers['idempotent-replayed'] !== 'true')).toHaveLength(1);
});

it('keeps keys for 24 hours, then lets them be used again', async () => {
  const first = await create(partner.api, 'expiring-1');
  await harness.prisma.idempotencyKey.update({
    where: { partnerId_key: { partnerId: partner.partnerId, key: 'expiring-1' } },
    data: { expiresAt: new Date(Date.now() - 1000) },
  });
  const reused = await create(partner.api, 'expiring-1', individualCustomer({ first_name: 'Later' }));
  expect(reused.status).toBe(201);
  expect(reused.body.id).not.toBe(first.body.id);
  const stored = await harness.prisma.idempotencyKey.findUniqueOrThrow({
    where: { partnerId_key: { partnerId: partner.partnerId, key: 'expiring-1' } },
  });
  const hours = (stored.expiresAt.getTime() - stored.createdAt.getTime()) / 3600_000;
  expect(hours).toBeCloseTo(24, 3);
});

/** A claim as a process leaves it while running (or when it died before committing). */
async function storeClaim(key: string, body: Record<string, unknown>, lockedAt: Date): Promise<void> {
  await harness.prisma.idempotencyKey.create({
    data: {
      partnerId: partner.partnerId,
      key,
      fingerprint: fingerprintOf({ method: 'POST', path: '/v1/customers', payload: { query: {}, body } }),
      method: 'POST',
      path: '/v1/customers',
      state: 'in_progress',
      ownerToken: '00000000-0000-4000-8000-0000000000aa',
      lockedAt,
      expiresAt: new Date(Date.now() + 3600_000),
    },
  });
}

it('takes over a claim abandoned by a request that died before writing anything, creating one customer', async () => {
  const body = individualCustomer({ first_name: 'Crash' });
  // A process claimed the key and died before its transaction committed: the claim is all that is left.
  await storeClaim('crashed-1', body, new Date(Date.now() - 10 * 60_000));
  const before = await customersOf(partner.partnerId);
  const retried = await create(partner.api, 'crashed-1', body);
  expect(retried.status).toBe(201);
  const replayed = await create(partner.api, 'crashed-1', body);
  expect(replayed.headers['idempotent-replayed']).toBe('true');
  expect(replayed.body.id).toBe(retried.body.id);
  expect(await customersOf(partner.partnerId)).toBe(before + 1);
});

it('does not take over a claim whose request is still running (recent lock)', async () => {
  const body = individualCustomer({ first_name: 'Busy' });
  await storeClaim('busy-1', body, new Date());
  const before = await customersOf(partner.partnerId);
  const response = await create(partner.api, 'busy-1', body);
  expect(response.status).toBe(409);
  expect(response.body.error.code).toBe('idempotency_key_in_use');
  expect(await customersOf(partner.partnerId)).toBe(before);
});

it('rejects a malformed key', async () => {
  const response = await create(partner.api, 'x'.repeat(256));
  expect(response.status).toBe(400);
  expect(response.body.error.details).toEqual([
    expect.objectContaining({ code: 'invalid_param', param: 'Idempotency-Key' }),
  ]);
});
