// The webhook configuration API (one per partner, validation, production URL rules), the event log and the
// sandbox mock trigger.
import request from 'supertest';
import { eventTypes } from '../src/events';
import { Harness, startHarness, TestPartner } from './support/harness';
import { createCustomer } from './support/fixtures';
import { WebhookReceiver } from './support/webhook-receiver';
import { signingSecretsOf } from '../src/domain/webhook-signature';
import { createApiKey } from '../src/services/api-keys';
import { secretBoxOf } from '../src/domain/secret-box';
import { configureWebhooks, newId, recordPayoutEvent, verifiesWithStandardWebhooks } from './support/webhooks';

let harness: Harness;
const receivers: WebhookReceiver[] = [];
const isoTimestamp = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

beforeAll(async () => {
  harness = await startHarness({ SANDBOX_VERIFICATION_DELAY_SECONDS: String(6 * 3600) });
});
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await harness?.teardown();
});

async function startReceiver(status = 200) {
  const receiver = await WebhookReceiver.start(() => status);
  receivers.push(receiver);
  return receiver;
}

let productionApp: ReturnType<Harness['createApp']> | undefined;

/** The same services as a production deployment would see them, with a live key of the partner. */
async function productionAgent(partner: TestPartner) {
  const app = (productionApp ??= harness.createApp({
    ...harness.services,
    config: { ...harness.config, appEnv: 'production' },
  }));
  const { api_key: liveKey } = await createApiKey(harness.prisma, 'production', partner.partnerId);
  return {
    post: (path: string) => request(app.callback()).post(path).set('Authorization', liveKey),
    put: (path: string) => request(app.callback()).put(path).set('Authorization', liveKey),
  };
}

describe('POST /v1/webhook-configs', () => {
  it('creates the configuration, disabled by default, and shows the secret only once', async () => {
    const partner = await harness.createPartner();
    const response = await partner.api
      .post('/v1/webhook-configs')
      .send({ url: 'https://partner.example/hooks', subscriptions: ['customer.approved', 'payout.completed'] });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.stringMatching(uuid),
      partner_id: partner.partnerId,
      url: 'https://partner.example/hooks',
      subscriptions: ['customer.approved', 'payout.completed'],
      enabled: false,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      created_at: expect.stringMatching(isoTimestamp),
      updated_at: expect.stringMatching(isoTimestamp),
    });

    const fetched = await partner.api.get('/v1/webhook-configs');
    expect(fetched.status).toBe(200);
    const { secret, ...withoutSecret } = response.body;
    expect(fetched.body).toEqual(withoutSecret);
    expect(JSON.stringify(fetched.body)).not.toContain(secret);
    // Stored encrypted, never in plaintext (test/webhook-security.test.ts has the details).
    const stored = await harness.prisma.webhookConfig.findUniqueOrThrow({ where: { id: response.body.id } });
    expect(stored.secretCiphertext).toMatch(/^v1\./);
    expect(JSON.stringify(stored)).not.toContain(secret.slice(6));
  });

  it('refuses a second configuration with 422 webhook_config_already_exists', async () => {
    const partner = await harness.createPartner();
    await configureWebhooks(partner, 'https://partner.example/a', ['customer.created']);
    const second = await partner.api
      .post('/v1/webhook-configs')
      .send({ url: 'https://partner.example/b', subscriptions: ['customer.created'] });
    expect(second.status).toBe(422);
    expect(second.body.error.code).toBe('webhook_config_already_exists');
    expect((await partner.api.get('/v1/webhook-configs')).body.url).toBe('https://partner.example/a');
  });

  it('creates exactly one under concurrent requests', async () => {
    const partner = await harness.createPartner();
    const responses = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        partner.api
          .post('/v1/webhook-configs')
          .send({ url: `https://partner.example/${index}`, subscriptions: ['customer.created'] }),
      ),
    );
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([201, 422, 422, 422, 422, 422]);
    for (const response of responses.filter((r) => r.status === 422)) {
      expect(response.body.error.code).toBe('webhook_config_already_exists');
    }
    expect(await harness.prisma.webhookConfig.count({ where: { partnerId: partner.partnerId } })).toBe(1);
  });

  it.each([
    ['url missing', { subscriptions: ['customer.created'] }, [['missing_param', 'url']]],
    ['subscriptions missing', { url: 'https://a.example' }, [['missing_param', 'subscriptions']]],
    ['a relative url', { url: '/hooks', subscriptions: ['customer.created'] }, [['invalid_param', 'url']]],
    ['an ftp url', { url: 'ftp://a.example/x', subscriptions: ['customer.created'] }, [['invalid_param', 'url']]],
    [
      'a url with credentials',
      { url: 'https://u:p@a.example/x', subscriptions: ['customer.created'] },
      [['invalid_param', 'url']],
    ],
    [
      'a too long url',
      { url: `https://a.example/${'x'.repeat(2048)}`, subscriptions: ['customer.created'] },
      [['invalid_param', 'url']],
    ],
    ['no subscriptions', { url: 'https://a.example', subscriptions: [] }, [['invalid_param', 'subscriptions']]],
    [
      'an unknown type',
      { url: 'https://a.example', subscriptions: ['customer.created', 'customer.deleted'] },
      [['invalid_param', 'subscriptions.1']],
    ],
    [
      'a duplicate',
      { url: 'https://a.example', subscriptions: ['payin.created', 'payout.created', 'payin.created'] },
      [['invalid_param', 'subscriptions.2']],
    ],
    [
      'subscriptions not a list',
      { url: 'https://a.example', subscriptions: 'customer.created' },
      [['invalid_param', 'subscriptions']],
    ],
    [
      'enabled not a boolean',
      { url: 'https://a.example', subscriptions: ['customer.created'], enabled: 'yes' },
      [['invalid_param', 'enabled']],
    ],
    [
      'an unknown field',
      { url: 'https://a.example', subscriptions: ['customer.created'], secret: 'mine' },
      [['invalid_param', 'secret']],
    ],
    [
      'everything wrong at once',
      { url: 'nope', subscriptions: ['x'], enabled: 1 },
      [
        ['invalid_param', 'url'],
        ['invalid_param', 'subscriptions.0'],
        ['invalid_param', 'enabled'],
      ],
    ],
  ])('answers 400 for %s', async (_, body, expected) => {
    const partner = await harness.createPartner();
    const response = await partner.api.post('/v1/webhook-configs').send(body);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('validation_error');
    expect(
      response.body.error.details.map((detail: { code: string; param: string }) => [detail.code, detail.param]),
    ).toEqual(expected);
    expect(await harness.prisma.webhookConfig.count({ where: { partnerId: partner.partnerId } })).toBe(0);
  });

  it('accepts every event type of SPEC 6', async () => {
    const partner = await harness.createPartner();
    const response = await partner.api
      .post('/v1/webhook-configs')
      .send({ url: 'http://localhost:9999/hooks', subscriptions: eventTypes, enabled: true });
    expect(response.status).toBe(201);
    expect(response.body.subscriptions).toEqual(eventTypes);
  });

  it('refuses private addresses in a sandbox not set up for local development', async () => {
    const partner = await harness.createPartner();
    const app = harness.createApp({
      ...harness.services,
      config: { ...harness.config, webhooks: { ...harness.config.webhooks, allowPrivateUrls: false } },
    });
    const refused = await request(app.callback())
      .post('/v1/webhook-configs')
      .set('Authorization', partner.apiKey)
      .send({ url: 'http://127.0.0.1:8080/hooks', subscriptions: ['customer.created'] });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toEqual({
      code: 'webhook_url_not_allowed',
      message: 'url must not point to a private, loopback or reserved address.',
    });
    const accepted = await request(app.callback())
      .post('/v1/webhook-configs')
      .set('Authorization', partner.apiKey)
      .send({ url: 'http://partner.example/hooks', subscriptions: ['customer.created'] });
    expect(accepted.status).toBe(201);
  });

  describe('in production', () => {
    it.each([
      ['http://partner.example/hooks', 'must use https in production'],
      ['https://127.0.0.1/hooks', 'must not point to a private, loopback or reserved address'],
      ['https://10.1.2.3/hooks', 'must not point to a private, loopback or reserved address'],
      ['https://192.168.0.10:8443/hooks', 'must not point to a private, loopback or reserved address'],
      ['https://169.254.169.254/latest', 'must not point to a private, loopback or reserved address'],
      ['https://localhost/hooks', 'must use a public, fully qualified host name'],
      ['https://api.localhost/hooks', 'must use a public, fully qualified host name'],
      ['https://intranet/hooks', 'must use a public, fully qualified host name'],
    ])('refuses %s', async (url, message) => {
      const partner = await harness.createPartner();
      const response = await (
        await productionAgent(partner)
      )
        .post('/v1/webhook-configs')
        .send({ url, subscriptions: ['customer.created'] });
      expect(response.status).toBe(422);
      expect(response.body.error).toEqual({ code: 'webhook_url_not_allowed', message: `url ${message}.` });
    });

    it.each(['https://[::1]/hooks', 'https://[fd00::1]/hooks'])(
      'refuses %s by its shape (IPv6 literal)',
      async (url) => {
        const partner = await harness.createPartner();
        const response = await (
          await productionAgent(partner)
        )
          .post('/v1/webhook-configs')
          .send({ url, subscriptions: ['customer.created'] });
        expect(response.status).toBe(400);
        expect(response.body.error.details).toEqual([expect.objectContaining({ code: 'invalid_param', param: 'url' })]);
      },
    );

    it('accepts a public https URL, and checks a changed URL the same way', async () => {
      const partner = await harness.createPartner();
      const production = await productionAgent(partner);
      const created = await production
        .post('/v1/webhook-configs')
        .send({ url: 'https://hooks.partner.example:8443/payments?source=api', subscriptions: ['customer.created'] });
      expect(created.status).toBe(201);
      const changed = await production
        .put(`/v1/webhook-configs/${created.body.id}`)
        .send({ url: 'http://hooks.partner.example/payments' });
      expect(changed.status).toBe(422);
      expect(changed.body.error.code).toBe('webhook_url_not_allowed');
      expect((await partner.api.get('/v1/webhook-configs')).body.url).toBe(
        'https://hooks.partner.example:8443/payments?source=api',
      );
    });
  });
});

describe('GET /v1/webhook-configs', () => {
  it('answers 404 not_found while there is none, and never shows another partner’s', async () => {
    const owner = await harness.createPartner();
    const other = await harness.createPartner();
    const none = await owner.api.get('/v1/webhook-configs');
    expect(none.status).toBe(404);
    expect(none.body.error.code).toBe('not_found');
    await configureWebhooks(other, 'https://other.example/hooks', ['customer.created']);
    expect((await owner.api.get('/v1/webhook-configs')).status).toBe(404);
  });
});

describe('PUT /v1/webhook-configs/{id}', () => {
  it('changes the fields given and keeps the others (and the secret)', async () => {
    const partner = await harness.createPartner();
    const config = await configureWebhooks(partner, 'https://partner.example/a', ['customer.created'], false);
    const before = (await partner.api.get('/v1/webhook-configs')).body;

    const enabled = await partner.api.put(`/v1/webhook-configs/${config.id}`).send({ enabled: true });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toEqual({ ...before, enabled: true, updated_at: expect.stringMatching(isoTimestamp) });
    expect(enabled.body.updated_at >= before.updated_at).toBe(true);

    const changed = await partner.api
      .put(`/v1/webhook-configs/${config.id}`)
      .send({ url: 'https://partner.example/b', subscriptions: ['customer.approved', 'customer.rejected'] });
    expect(changed.body).toMatchObject({
      url: 'https://partner.example/b',
      subscriptions: ['customer.approved', 'customer.rejected'],
      enabled: true,
      created_at: before.created_at,
    });
    const paused = await partner.api.put(`/v1/webhook-configs/${config.id}`).send({ enabled: false });
    expect(paused.body).toMatchObject({ url: 'https://partner.example/b', enabled: false });
    expect((await partner.api.get('/v1/webhook-configs')).body).toEqual(paused.body);
    const stored = await harness.prisma.webhookConfig.findUniqueOrThrow({ where: { id: config.id } });
    expect(signingSecretsOf(secretBoxOf(harness.config), stored)).toEqual([config.secret]);
  });

  it('validates like create, and needs at least one field', async () => {
    const partner = await harness.createPartner();
    const config = await configureWebhooks(partner, 'https://partner.example/a', ['customer.created']);
    const empty = await partner.api.put(`/v1/webhook-configs/${config.id}`).send({});
    expect(empty.status).toBe(400);
    expect(empty.body.error.details).toEqual([
      { code: 'invalid_param', param: 'body', message: 'give at least one of url, subscriptions, enabled' },
    ]);
    const invalid = await partner.api
      .put(`/v1/webhook-configs/${config.id}`)
      .send({ url: 'mailto:a@b.example', subscriptions: ['customer.created', 'customer.created'], enabled: null });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.details.map((detail: { param: string }) => detail.param)).toEqual([
      'url',
      'subscriptions.1',
      'enabled',
    ]);
    expect((await partner.api.get('/v1/webhook-configs')).body.url).toBe('https://partner.example/a');
  });

  it('answers 404 for another partner’s configuration, an unknown id and a malformed id', async () => {
    const owner = await harness.createPartner();
    const intruder = await harness.createPartner();
    const config = await configureWebhooks(owner, 'https://owner.example/hooks', ['customer.created']);
    for (const id of [config.id, newId(), 'nope']) {
      const response = await intruder.api.put(`/v1/webhook-configs/${id}`).send({ enabled: false });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    expect((await owner.api.get('/v1/webhook-configs')).body.enabled).toBe(true);
  });
});

describe('GET /v1/events', () => {
  let partner: TestPartner;
  let payoutA: string;
  let events: string[];
  let customerId: string;

  beforeAll(async () => {
    partner = await harness.createPartner();
    payoutA = newId();
    const payoutB = newId();
    customerId = (await createCustomer(partner.api)).id;
    events = [
      await recordPayoutEvent(harness.prisma, partner.partnerId, payoutA, 'payout.created'),
      await recordPayoutEvent(harness.prisma, partner.partnerId, payoutB, 'payout.created'),
      await recordPayoutEvent(harness.prisma, partner.partnerId, payoutA, 'payout.completed'),
    ];
  });

  it('lists every event, newest first, in the webhook shape', async () => {
    const response = await partner.api.get('/v1/events');
    expect(response.status).toBe(200);
    expect(response.body.items.map((item: { event_id: string }) => item.event_id).slice(0, 3)).toEqual(
      [...events].reverse(),
    );
    expect(response.body.items).toHaveLength(4);
    const customerEvent = response.body.items[3];
    const row = await harness.prisma.event.findUniqueOrThrow({ where: { id: customerEvent.event_id } });
    expect(customerEvent).toEqual({
      event: 'customer',
      event_id: row.id,
      event_type: 'customer.created',
      event_resource_id: customerId,
      event_resource_status: 'pending',
      event_resource: (await partner.api.get(`/v1/customers/${customerId}`)).body,
      event_created_at: row.createdAt.toISOString(),
    });
    expect(response.body.cursor).toEqual({ after: null, before: null, limit: 10, page_count: 4 });
  });

  it('filters by event_type and event_resource_id, and pages', async () => {
    const byType = await partner.api.get('/v1/events?event_type=payout.created');
    expect(byType.body.items.map((item: { event_id: string }) => item.event_id)).toEqual([events[1], events[0]]);
    const byResource = await partner.api.get(`/v1/events?event_resource_id=${payoutA}`);
    expect(byResource.body.items.map((item: { event_id: string }) => item.event_id)).toEqual([events[2], events[0]]);
    const both = await partner.api.get(`/v1/events?event_resource_id=${payoutA}&event_type=payout.completed`);
    expect(both.body.items.map((item: { event_id: string }) => item.event_id)).toEqual([events[2]]);

    const first = await partner.api.get('/v1/events?limit=2&event_type=payout.created');
    expect(first.body.items).toHaveLength(2);
    expect(first.body.cursor.after).toBeNull();
    const page = await partner.api.get('/v1/events?limit=1');
    const next = await partner.api.get(`/v1/events?limit=1&after=${page.body.cursor.after}`);
    expect(next.body.items[0].event_id).toBe(events[1]);
  });

  it.each([
    ['event_type=customer.deleted', 'event_type'],
    ['event_resource_id=abc', 'event_resource_id'],
    ['resource_id=abc', 'resource_id'],
  ])('rejects %s', async (query, param) => {
    const response = await partner.api.get(`/v1/events?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([expect.objectContaining({ code: 'invalid_param', param })]);
  });

  it('shows one event by id, and nothing of other partners', async () => {
    const one = await partner.api.get(`/v1/events/${events[0]}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ event_id: events[0], event: 'payout', event_type: 'payout.created' });
    const other = await harness.createPartner();
    expect((await other.api.get('/v1/events')).body.items).toEqual([]);
    expect((await other.api.get(`/v1/events?event_resource_id=${payoutA}`)).body.items).toEqual([]);
    for (const id of [events[0], newId(), 'x']) {
      const response = await other.api.get(`/v1/events/${id}`);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
  });
});

describe('POST /webhooks/mock', () => {
  it.each([
    ['payout.created', 'payout', 'awaiting_deposit'],
    ['payout.completed', 'payout', 'completed'],
    ['payin.refunded', 'payin', 'refunded'],
    ['walletTransfer.created', 'walletTransfer', 'pending'],
    ['walletTransfer.failed', 'walletTransfer', 'failed'],
  ])('sends a signed, mocked %s, whatever the subscriptions', async (eventType, resource, status) => {
    const partner = await harness.createPartner();
    const receiver = await startReceiver();
    const { secret } = await configureWebhooks(partner, receiver.url, ['customer.approved']);
    const response = await partner.api.post('/webhooks/mock').send({ event_type: eventType });
    expect(response.status).toBe(200);
    expect(receiver.requests).toHaveLength(1);
    const [received] = receiver.requests;
    expect(verifiesWithStandardWebhooks(received!, secret)).toBe(true);
    expect(received!.headers['webhook-id']).toBe(received!.body.event_id);
    expect(received!.body).toEqual({
      event: resource,
      event_id: expect.stringMatching(uuid),
      event_type: eventType,
      event_resource_id: (received!.body.event_resource as { id: string }).id,
      event_resource_status: status,
      event_resource: expect.objectContaining({ id: expect.stringMatching(uuid), status }),
      event_created_at: expect.stringMatching(isoTimestamp),
    });
    expect(response.body).toEqual({
      event: received!.body,
      delivery: { url: receiver.url, succeeded: true, status_code: 200, latency_ms: expect.any(Number), error: null },
    });
    // A mock is not an event of the partner.
    expect(await harness.prisma.event.count({ where: { partnerId: partner.partnerId } })).toBe(0);
  });

  it('reports what a failing receiver answered, without retrying', async () => {
    const partner = await harness.createPartner();
    const receiver = await startReceiver(503);
    await configureWebhooks(partner, receiver.url, ['payout.created']);
    const response = await partner.api.post('/webhooks/mock').send({ event_type: 'payout.failed' });
    expect(response.status).toBe(200);
    expect(response.body.delivery).toEqual({
      url: receiver.url,
      succeeded: false,
      status_code: 503,
      latency_ms: expect.any(Number),
      error: 'HTTP 503',
    });
    expect(receiver.requests).toHaveLength(1);
  });

  it.each([
    [{ event_type: 'customer.created' }, 'invalid_param'],
    [{ event_type: 'external_account.approved' }, 'invalid_param'],
    [{ event_type: 'payout.exploded' }, 'invalid_param'],
    [{}, 'missing_param'],
  ])('refuses %j', async (body, code) => {
    const partner = await harness.createPartner();
    const receiver = await startReceiver();
    await configureWebhooks(partner, receiver.url, ['customer.created']);
    const response = await partner.api.post('/webhooks/mock').send(body);
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([expect.objectContaining({ code, param: 'event_type' })]);
    expect(receiver.requests).toHaveLength(0);
  });

  it('needs an enabled configuration', async () => {
    const partner = await harness.createPartner();
    const missing = await partner.api.post('/webhooks/mock').send({ event_type: 'payout.created' });
    expect(missing.status).toBe(422);
    expect(missing.body.error.code).toBe('webhook_config_missing');
    const receiver = await startReceiver();
    await configureWebhooks(partner, receiver.url, ['payout.created'], false);
    const disabled = await partner.api.post('/webhooks/mock').send({ event_type: 'payout.created' });
    expect(disabled.status).toBe(422);
    expect(disabled.body.error.code).toBe('webhook_config_disabled');
    expect(receiver.requests).toHaveLength(0);
  });

  it('does not exist in production', async () => {
    const partner = await harness.createPartner();
    const response = await (
      await productionAgent(partner)
    )
      .post('/webhooks/mock')
      .send({ event_type: 'payout.created' });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('not_found');
    const openApi = await harness.http.get('/openapi.json');
    expect(Object.keys(openApi.body.paths)).toEqual(
      expect.arrayContaining(['/v1/webhook-configs', '/v1/webhook-configs/{id}', '/webhooks/mock', '/v1/events']),
    );
  });
});
