// Pieces of webhook delivery that need no Temporal: signatures, the address rules, the HTTP sender.
import { loadConfig } from '../src/config';
import { productionTestSecrets } from './support/harness';
import { isPublicAddress, webhookUrlProblem } from '../src/webhooks/destinations';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { generateWebhookSecret, standardWebhookSecret, webhookHeaders } from '../src/domain/webhook-signature';
import { HttpWebhookSender } from '../src/providers/webhook-sender';
import { WebhookReceiver } from './support/webhook-receiver';

describe('signatures (Standard Webhooks)', () => {
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw9F5jzFjyq1c=';
  const body = '{"test": 2432232314}';
  const now = new Date(1614265330 * 1000);

  it('signs "<id>.<timestamp>.<body>" with HMAC-SHA256 under the decoded secret, in base64', () => {
    // Known answer, computed independently with:
    //   printf '%s' 'msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.{"test": 2432232314}' |
    //     openssl dgst -sha256 -mac HMAC -macopt hexkey:<hex of base64-decoded secret> -binary | base64
    expect(webhookHeaders('msg_p5jXN8AQM9LWM0D4loKWxJek', body, [secret], now)).toEqual({
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,lJjDIaOGvhCrdQb+JtddfTDZNzMc3SIVPSmJu1P+gdw=',
    });
  });

  it('carries one signature per secret, space-separated, each verifiable by the official verifier', () => {
    const other = generateWebhookSecret();
    const headers = webhookHeaders('e1', body, [other, secret]);
    expect(headers['webhook-signature']).toMatch(/^v1,\S+ v1,\S+$/);
    for (const each of [other, secret]) expect(() => new Webhook(each).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow(WebhookVerificationError);
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow(WebhookVerificationError);
  });

  it('is refused by the official verifier when the timestamp is more than 5 minutes off', () => {
    const stale = webhookHeaders('e1', body, [secret], new Date(Date.now() - 301_000));
    expect(() => new Webhook(secret).verify(body, stale)).toThrow('Message timestamp too old');
    const recent = webhookHeaders('e1', body, [secret], new Date(Date.now() - 200_000));
    expect(() => new Webhook(secret).verify(body, recent)).not.toThrow();
  });

  it("makes a new random 32-byte secret each time, in the scheme's whsec_<base64> form", () => {
    const secrets = new Set(Array.from({ length: 20 }, generateWebhookSecret));
    expect(secrets.size).toBe(20);
    for (const value of secrets) {
      expect(value).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(value.slice(6), 'base64')).toHaveLength(32);
    }
  });

  it('reads secrets of the earlier whsec_<base64url> form as the same key bytes', () => {
    const legacy = `whsec_${Buffer.alloc(32, 0xfb).toString('base64url')}`;
    expect(legacy).toMatch(/[-_]/);
    expect(standardWebhookSecret(legacy)).toBe(`whsec_${Buffer.alloc(32, 0xfb).toString('base64')}`);
    expect(standardWebhookSecret(secret)).toBe(secret);
  });
});

describe('destinations', () => {
  it.each([
    ['8.8.8.8', true],
    ['2606:4700:4700::1111', true],
    ['127.0.0.1', false],
    ['10.0.0.1', false],
    ['172.16.5.4', false],
    ['172.32.0.1', true],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['224.0.0.1', false],
    ['::1', false],
    ['::', false],
    ['fe80::1', false],
    ['fd12:3456::1', false],
    ['::ffff:127.0.0.1', false],
    // Global unicast only: every form that embeds an IPv4 address or is not in 2000::/3 is refused.
    ['::ffff:8.8.8.8', false], // IPv4-mapped
    ['::ffff:7f00:1', false], // IPv4-mapped, hex form
    ['0:0:0:0:0:ffff:808:808', false], // IPv4-mapped, long form
    ['::8.8.8.8', false], // IPv4-compatible
    ['::7f00:1', false], // IPv4-compatible, hex form
    ['64:ff9b::808:808', false], // NAT64
    ['64:ff9b::7f00:1', false], // NAT64 to loopback
    ['64:ff9b:1::a00:1', false], // local-use NAT64
    ['2002:7f00:1::1', false], // 6to4
    ['2002:808:808::1', false], // 6to4 of a public address
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', false], // Teredo
    ['2001:2::1', false], // benchmarking
    ['2001:db8::1', false], // documentation
    ['3fff::1', false], // documentation (RFC 9637)
    ['fec0::1', false], // site-local
    ['fe80::1%eth0', false], // link-local with a zone
    ['ff02::1', false], // multicast
    ['100::1', false], // discard-only
    ['2001:4860:4860::8888', true],
    ['2a00:1450:4001:81c::200e', true],
    ['192.88.99.1', false], // 6to4 relay anycast
    ['255.255.255.255', false],
    ['not-an-ip', false],
  ])('%s is public: %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });

  const localSandbox = { appEnv: 'sandbox', allowPrivateUrls: true } as const;
  const sandbox = { appEnv: 'sandbox', allowPrivateUrls: false } as const;
  const production = { appEnv: 'production', allowPrivateUrls: false } as const;

  it.each([
    ['http://localhost:3000/hooks', localSandbox, null],
    ['http://10.0.0.5/hooks', localSandbox, null],
    ['https://user:pass@partner.example/', localSandbox, 'must not contain credentials'],
    ['http://partner.example/hooks', sandbox, null],
    ['http://localhost:3000/hooks', sandbox, 'must use a public, fully qualified host name'],
    ['http://10.0.0.5/hooks', sandbox, 'must not point to a private, loopback or reserved address'],
    ['https://partner.example/', production, null],
    ['https://8.8.8.8/', production, null],
    ['http://partner.example/', production, 'must use https in production'],
    ['https://[::ffff:127.0.0.1]/', production, 'must not point to a private, loopback or reserved address'],
    ['https://[::ffff:8.8.8.8]/', production, 'must not point to a private, loopback or reserved address'],
    ['https://[64:ff9b::a00:1]/', production, 'must not point to a private, loopback or reserved address'],
    ['https://[2002:a00:1::1]/', production, 'must not point to a private, loopback or reserved address'],
    ['https://[fec0::1]/', production, 'must not point to a private, loopback or reserved address'],
    ['https://[2606:4700:4700::1111]/', production, null],
  ])('%s in %j: %s', (url, rules, problem) => {
    expect(webhookUrlProblem(url, rules)).toBe(problem);
  });

  it('never allows private URLs in production', () => {
    const env = {
      DATABASE_URL: 'postgresql://localhost/x',
      APP_ENV: 'production',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      ...productionTestSecrets,
    };
    expect(() => loadConfig(env)).toThrow(
      'Invalid configuration: WEBHOOK_ALLOW_PRIVATE_URLS cannot be true in production',
    );
    expect(loadConfig({ ...env, APP_ENV: 'sandbox' }).webhooks.allowPrivateUrls).toBe(true);
    expect(loadConfig({ ...env, WEBHOOK_ALLOW_PRIVATE_URLS: undefined }).webhooks).toEqual({
      timeoutSeconds: 10,
      relaySweepSeconds: 5,
      allowPrivateUrls: false,
      partnerConcurrency: 5,
      retry: { initialIntervalMs: 30_000, maximumIntervalMs: 3_600_000 },
    });
  });
});

describe('the HTTP sender', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await WebhookReceiver.start((request) =>
      request.path.endsWith('/slow') ? new Promise(() => undefined) : 204,
    );
  });
  afterAll(() => receiver.close());

  it('posts the body with its headers and reports the answer', async () => {
    const sender = new HttpWebhookSender({ timeoutMs: 2000, publicAddressesOnly: false });
    const result = await sender.send({ url: receiver.url, headers: { 'Webhook-Id': 'e1' }, body: '{"a":1}' });
    expect(result).toEqual({ statusCode: 204, latencyMs: expect.any(Number), error: null });
    const received = receiver.requests.at(-1)!;
    expect(received.rawBody).toBe('{"a":1}');
    expect(received.headers['webhook-id']).toBe('e1');
  });

  it('gives up on a receiver that does not answer in time', async () => {
    const sender = new HttpWebhookSender({ timeoutMs: 200, publicAddressesOnly: false });
    const result = await sender.send({ url: receiver.url.replace('/webhooks', '/slow'), headers: {}, body: '{}' });
    expect(result).toEqual({ statusCode: null, latencyMs: expect.any(Number), error: 'timed out after 200 ms' });
    expect(result.latencyMs).toBeGreaterThanOrEqual(190);
  });

  it('reports a connection that cannot be made', async () => {
    const sender = new HttpWebhookSender({ timeoutMs: 2000, publicAddressesOnly: false });
    const result = await sender.send({ url: 'http://127.0.0.1:1/hooks', headers: {}, body: '{}' });
    expect(result.statusCode).toBeNull();
    expect(result.error).toMatch(/^ECONNREFUSED/);
  });

  it('in production, never connects to a non-public address, by IP or by a name resolving to one', async () => {
    const sender = new HttpWebhookSender({ timeoutMs: 2000, publicAddressesOnly: true });
    const before = receiver.requests.length;
    const byIp = await sender.send({ url: receiver.url, headers: {}, body: '{}' });
    expect(byIp).toEqual({
      statusCode: null,
      latencyMs: expect.any(Number),
      error: 'refused: destination is not a public address',
    });
    const byName = await sender.send({ url: receiver.url.replace('127.0.0.1', 'localhost'), headers: {}, body: '{}' });
    expect(byName.statusCode).toBeNull();
    expect(byName.error).toBe('refused: localhost resolves to a non-public address');
    expect(receiver.requests.length).toBe(before);
  });
});
