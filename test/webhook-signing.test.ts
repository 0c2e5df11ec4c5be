// Pieces of webhook delivery that need no Temporal: signatures, the production address rules, the HTTP sender.
import { loadConfig } from '../src/config';
import { productionTestSecrets } from './support/harness';
import { isPublicAddress, webhookUrlProblem } from '../src/webhooks/destinations';
import {
  generateWebhookSecret,
  signatureHeader,
  verifyWebhookSignature,
  webhookHeaders,
} from '../src/domain/webhook-signature';
import { HttpWebhookSender } from '../src/providers/webhook-sender';
import { WebhookReceiver } from './support/webhook-receiver';

describe('signatures', () => {
  const secret = 'whsec_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG';
  const body = '{"event":"payout","event_id":"e1"}';
  const now = new Date('2026-11-22T10:00:00Z');
  const timestamp = Math.floor(now.getTime() / 1000);

  it('is an HMAC-SHA256 of "<timestamp>.<body>" in hex, with the timestamp', () => {
    // Known answer, computed with: printf '%s' '1795341600.<body>' | openssl dgst -sha256 -hmac <secret>
    expect(signatureHeader(secret, timestamp, body)).toBe(
      't=1795341600,v1=6fc9cae715ad52d91955cc062badc00f22774cae5ba133259f2241755be24a3c',
    );
    expect(webhookHeaders('e1', body, secret, now)).toEqual({
      'Webhook-Id': 'e1',
      'Webhook-Signature': signatureHeader(secret, timestamp, body),
    });
  });

  it('verifies a genuine signature and refuses tampering, other secrets and stale timestamps', () => {
    const header = signatureHeader(secret, timestamp, body);
    expect(verifyWebhookSignature(header, body, secret, { now })).toBe(true);
    expect(verifyWebhookSignature(header, `${body} `, secret, { now })).toBe(false);
    expect(verifyWebhookSignature(header, body, `${secret}x`, { now })).toBe(false);
    expect(verifyWebhookSignature(header, body, secret, { now: new Date(now.getTime() + 301_000) })).toBe(false);
    expect(verifyWebhookSignature(header, body, secret, { now: new Date(now.getTime() + 299_000) })).toBe(true);
    expect(verifyWebhookSignature(header.replace(/t=\d+/, `t=${timestamp + 1}`), body, secret, { now })).toBe(false);
    expect(verifyWebhookSignature('v1=abc', body, secret, { now })).toBe(false);
    expect(verifyWebhookSignature(`t=${timestamp},v1=zz`, body, secret, { now })).toBe(false);
  });

  it('makes a new random secret each time', () => {
    const secrets = new Set(Array.from({ length: 20 }, generateWebhookSecret));
    expect(secrets.size).toBe(20);
    for (const value of secrets) expect(value).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
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
    ['::ffff:8.8.8.8', true],
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
