// Webhook secrets and delivery fairness: Standard Webhooks signatures checked with the official verifier, secrets
// encrypted at rest (also in idempotency rows), rotation with an overlap during which both secrets sign, and a
// partner whose endpoint hangs (a tarpit) that cannot hold up another partner's deliveries.
import { randomBytes } from 'node:crypto';
import { SANDBOX_SECRETS_KEY } from '../src/config';
import { generateWebhookSecret } from '../src/domain/webhook-signature';
import { signingSecretsOf } from '../src/domain/webhook-signature';
import { encryptLegacyWebhookSecrets } from '../src/services/webhooks';
import { SecretBox, secretBoxOf } from '../src/domain/secret-box';
import { Harness, startHarness, TestPartner } from './support/harness';
import { WebhookReceiver } from './support/webhook-receiver';
import {
  configureWebhooks,
  deliveriesSettled as settled,
  newId,
  recordPayoutEvent,
  verifiesWithStandardWebhooks,
} from './support/webhooks';

let harness: Harness;
const receivers: WebhookReceiver[] = [];

// A small worker (4 activity slots, 2 attempts in flight per partner) and a long receiver timeout: a partner whose
// endpoint hangs would hold every slot for 30 s without the per-partner limit.
const SLOTS = 4;
const PER_PARTNER = 2;

beforeAll(async () => {
  harness = await startHarness({
    WORKER_MAX_CONCURRENT_ACTIVITIES: String(SLOTS),
    WEBHOOK_PARTNER_CONCURRENCY: String(PER_PARTNER),
    WEBHOOK_TIMEOUT_SECONDS: '30',
  });
});
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await harness?.teardown();
});

async function startReceiver(responder?: Parameters<typeof WebhookReceiver.start>[0]) {
  const receiver = await WebhookReceiver.start(responder);
  receivers.push(receiver);
  return receiver;
}

const deliveriesSettled = (partner: TestPartner, resourceId: string) => settled(harness, partner, resourceId);

/** Records a payout event and returns the request the receiver got for it. */
async function deliverOne(partner: TestPartner, receiver: WebhookReceiver) {
  const payoutId = newId();
  const eventId = await recordPayoutEvent(harness.prisma, partner.partnerId, payoutId);
  await receiver.waitFor((requests) => requests.some((r) => r.headers['webhook-id'] === eventId), eventId);
  await deliveriesSettled(partner, payoutId);
  return receiver.forEvent(eventId)[0]!;
}

describe('signatures', () => {
  it('follow Standard Webhooks: the official verifier accepts a delivery with the secret, and nothing else', async () => {
    const partner = await harness.createPartner();
    const receiver = await startReceiver();
    const { secret } = await configureWebhooks(partner, receiver.url, ['payout.created']);
    const request = await deliverOne(partner, receiver);
    expect(request.headers['webhook-id']).toBe(request.body.event_id);
    expect(request.headers['webhook-timestamp']).toMatch(/^\d{10}$/);
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(verifiesWithStandardWebhooks(request, secret)).toBe(true);
    expect(verifiesWithStandardWebhooks(request, generateWebhookSecret())).toBe(false);
    expect(
      verifiesWithStandardWebhooks({ ...request, rawBody: request.rawBody.replace('10.00', '99.00') }, secret),
    ).toBe(false);
  });
});

describe('secrets at rest', () => {
  it('are encrypted in webhook_configs and in the idempotency rows of create and rotate, and replays still show them', async () => {
    const partner = await harness.createPartner();
    const createKey = `create-${newId()}`;
    const created = await partner.api
      .post('/v1/webhook-configs')
      .set('Idempotency-Key', createKey)
      .send({ url: 'https://partner.example/hooks', subscriptions: ['payout.created'] });
    expect(created.status).toBe(201);
    const rotateKey = `rotate-${newId()}`;
    const rotated = await partner.api
      .post(`/v1/webhook-configs/${created.body.id}/rotate-secret`)
      .set('Idempotency-Key', rotateKey)
      .send({});
    expect(rotated.status).toBe(200);

    const secrets = [created.body.secret as string, rotated.body.secret as string];
    const dump = await harness.prisma.$queryRaw<{ dump: string }[]>`
      SELECT concat_ws(' ',
        (SELECT row_to_json(w)::text FROM webhook_configs w WHERE w.partner_id = ${partner.partnerId}::uuid),
        (SELECT string_agg(row_to_json(i)::text, ' ') FROM idempotency_keys i
          WHERE i.partner_id = ${partner.partnerId}::uuid)) AS dump`;
    expect(dump[0]!.dump).toContain(created.body.id);
    for (const secret of secrets) {
      expect(dump[0]!.dump).not.toContain(secret.slice('whsec_'.length, 30)); // no part of the key material
    }
    const row = await harness.prisma.webhookConfig.findUniqueOrThrow({ where: { id: created.body.id } });
    expect(row.secretCiphertext).toMatch(/^v1\.[0-9a-f]{8}\./);
    expect(row.legacySecret).toBeNull();

    const replayedCreate = await partner.api
      .post('/v1/webhook-configs')
      .set('Idempotency-Key', createKey)
      .send({ url: 'https://partner.example/hooks', subscriptions: ['payout.created'] });
    expect(replayedCreate.headers['idempotent-replayed']).toBe('true');
    expect(replayedCreate.body).toEqual(created.body);
    const replayedRotate = await partner.api
      .post(`/v1/webhook-configs/${created.body.id}/rotate-secret`)
      .set('Idempotency-Key', rotateKey)
      .send({});
    expect(replayedRotate.body).toEqual(rotated.body);
  });

  it('are sealed with AES-256-GCM bound to their row, and open with a previous key after a key change', () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const before = new SecretBox({ encryptionKey: oldKey, previousEncryptionKeys: [] });
    // Long enough not to turn up in random ciphertext by chance (a three-letter one did, once in CI).
    const sealed = before.seal('whsec_abcPlaintextSecret', 'webhook_configs.secret:1');
    expect(sealed).not.toContain('abcPlaintextSecret');
    expect(before.open(sealed, 'webhook_configs.secret:1')).toBe('whsec_abcPlaintextSecret');
    expect(() => before.open(sealed, 'webhook_configs.secret:2')).toThrow(); // copied to another row
    const tampered = sealed.replace(
      /\.([^.])([^.]*)\.([^.]+)$/,
      (_all, first: string, rest: string, tag: string) => `.${first === 'A' ? 'B' : 'A'}${rest}.${tag}`,
    );
    expect(() => before.open(tampered, 'webhook_configs.secret:1')).toThrow();
    expect(before.seal('whsec_abcPlaintextSecret', 'webhook_configs.secret:1')).not.toBe(sealed); // a fresh IV every time

    const after = new SecretBox({ encryptionKey: newKey, previousEncryptionKeys: [oldKey] });
    expect(after.open(sealed, 'webhook_configs.secret:1')).toBe('whsec_abcPlaintextSecret');
    expect(after.isCurrent(sealed)).toBe(false);
    expect(after.isCurrent(after.seal('x', 'c'))).toBe(true);
    expect(() =>
      new SecretBox({ encryptionKey: newKey, previousEncryptionKeys: [] }).open(sealed, 'webhook_configs.secret:1'),
    ).toThrow(/unknown|cannot open/);
    expect(harness.config.secrets.encryptionKey.equals(SANDBOX_SECRETS_KEY)).toBe(false); // tests use a key of their own
  });

  it('saved in plaintext before encryption are encrypted by the worker at start-up and keep verifying', async () => {
    const partner = await harness.createPartner();
    const receiver = await startReceiver();
    const legacy = `whsec_${randomBytes(32).toString('base64url')}`; // the earlier form
    await harness.prisma.webhookConfig.create({
      data: {
        id: newId(),
        partnerId: partner.partnerId,
        url: receiver.url,
        subscriptions: ['payout.created'],
        enabled: true,
        legacySecret: legacy,
      },
    });
    expect(await encryptLegacyWebhookSecrets(harness.prisma, secretBoxOf(harness.config))).toBeGreaterThanOrEqual(1);
    const row = await harness.prisma.webhookConfig.findUniqueOrThrow({ where: { partnerId: partner.partnerId } });
    expect(row.legacySecret).toBeNull();
    expect(row.secretCiphertext).not.toContain(legacy.slice(6));
    const request = await deliverOne(partner, receiver);
    const sameKeyBytes = `whsec_${Buffer.from(legacy.slice(6), 'base64url').toString('base64')}`;
    expect(verifiesWithStandardWebhooks(request, sameKeyBytes)).toBe(true);
  });
});

describe('rotation', () => {
  it('returns a new secret; during the overlap deliveries carry two signatures, each verifiable', async () => {
    const partner = await harness.createPartner();
    const receiver = await startReceiver();
    const config = await configureWebhooks(partner, receiver.url, ['payout.created']);
    const before = Date.now();
    const rotated = await partner.api.post(`/v1/webhook-configs/${config.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const { secret, previous_secret_expires_at: expiresAt, ...shown } = rotated.body;
    expect(shown).toEqual((await partner.api.get('/v1/webhook-configs')).body);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secret).not.toBe(config.secret);
    const overlapMs = Date.parse(expiresAt) - before;
    expect(overlapMs).toBeGreaterThanOrEqual(24 * 3_600_000 - 60_000); // default: 24 hours
    expect(overlapMs).toBeLessThanOrEqual(24 * 3_600_000 + 60_000);

    const request = await deliverOne(partner, receiver);
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifiesWithStandardWebhooks(request, secret)).toBe(true);
    expect(verifiesWithStandardWebhooks(request, config.secret)).toBe(true);
  });

  it('ends the overlap on time: then only the new secret signs, and the old one no longer verifies', async () => {
    const partner = await harness.createPartner();
    const receiver = await startReceiver();
    const config = await configureWebhooks(partner, receiver.url, ['payout.created']);
    const { secret } = (
      await partner.api.post(`/v1/webhook-configs/${config.id}/rotate-secret`).send({ overlap_hours: 1 })
    ).body;
    expect(verifiesWithStandardWebhooks(await deliverOne(partner, receiver), config.secret)).toBe(true);

    // The hour passes (the end of the overlap is moved instead of the clock).
    await harness.prisma.webhookConfig.update({
      where: { id: config.id },
      data: { previousSecretExpiresAt: new Date(Date.now() - 1000) },
    });
    const after = await deliverOne(partner, receiver);
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifiesWithStandardWebhooks(after, secret)).toBe(true);
    expect(verifiesWithStandardWebhooks(after, config.secret)).toBe(false);
  });

  it('with overlap_hours 0 switches at once; a rotation during an overlap drops the oldest secret', async () => {
    const partner = await harness.createPartner();
    const config = await configureWebhooks(partner, 'https://partner.example/hooks', ['payout.created']);
    const box = secretBoxOf(harness.config);
    const stored = () => harness.prisma.webhookConfig.findUniqueOrThrow({ where: { id: config.id } });

    const second = (await partner.api.post(`/v1/webhook-configs/${config.id}/rotate-secret`)).body.secret;
    const third = await partner.api.post(`/v1/webhook-configs/${config.id}/rotate-secret`).send({ overlap_hours: 72 });
    expect(signingSecretsOf(box, await stored())).toEqual([third.body.secret, second]);
    const fourth = await partner.api.post(`/v1/webhook-configs/${config.id}/rotate-secret`).send({ overlap_hours: 0 });
    expect(fourth.body.previous_secret_expires_at).toBeNull();
    expect(signingSecretsOf(box, await stored())).toEqual([fourth.body.secret]);
  });

  it("validates overlap_hours and finds only the partner's own configuration", async () => {
    const partner = await harness.createPartner();
    const other = await harness.createPartner();
    const config = await configureWebhooks(partner, 'https://partner.example/hooks', ['payout.created']);
    for (const overlap of [-1, 169, 1.5, '24']) {
      const response = await partner.api
        .post(`/v1/webhook-configs/${config.id}/rotate-secret`)
        .send({ overlap_hours: overlap });
      expect(response.status).toBe(400);
      expect(response.body.error.details).toEqual([
        expect.objectContaining({ code: 'invalid_param', param: 'overlap_hours' }),
      ]);
    }
    const foreign = await other.api.post(`/v1/webhook-configs/${config.id}/rotate-secret`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('not_found');
    const box = secretBoxOf(harness.config);
    const row = await harness.prisma.webhookConfig.findUniqueOrThrow({ where: { id: config.id } });
    expect(signingSecretsOf(box, row)).toEqual([config.secret]); // nothing changed on refusal
  });
});

describe('fairness', () => {
  it(`a partner whose endpoint hangs holds at most ${PER_PARTNER} of the worker's ${SLOTS} slots; another partner's delivery goes through meanwhile`, async () => {
    let release!: () => void;
    const released = new Promise<number>((resolve) => (release = () => resolve(200)));
    const tarpit = await startReceiver(() => released); // answers nothing until released (30 s timeout)
    const slow = await harness.createPartner('Tarpit partner');
    await configureWebhooks(slow, tarpit.url, ['payout.created']);
    const payouts = Array.from({ length: 6 }, () => newId());
    for (const payoutId of payouts) await recordPayoutEvent(harness.prisma, slow.partnerId, payoutId);
    // Six deliveries of six resources are ready to run; the worker has four slots.
    await tarpit.waitForArrivals(PER_PARTNER);

    const fast = await harness.createPartner('Healthy partner');
    const healthy = await startReceiver();
    await configureWebhooks(fast, healthy.url, ['payout.created']);
    const eventId = await recordPayoutEvent(harness.prisma, fast.partnerId, newId());
    // Without the limit the tarpit's attempts would fill all four slots for 30 s and this wait would time out.
    await healthy.waitFor(
      (requests) => requests.some((r) => r.headers['webhook-id'] === eventId),
      'the healthy delivery',
    );
    expect(tarpit.requests).toHaveLength(PER_PARTNER); // still hanging, and never more than the limit at once

    release();
    await tarpit.waitForCount(payouts.length);
    for (const payoutId of payouts) await deliveriesSettled(slow, payoutId);
    // Attempts put off for the limit are not attempts: each delivery shows the one attempt that was sent.
    const deliveries = await harness.prisma.webhookDelivery.findMany({
      where: { partnerId: slow.partnerId },
      include: { attempts: true },
    });
    expect(deliveries.map((delivery) => [delivery.status, delivery.attempts.map((a) => a.attempt)])).toEqual(
      payouts.map(() => ['succeeded', [1]]),
    );
  });
});
