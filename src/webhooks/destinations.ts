// Where webhooks may be sent. Every URL is an absolute http(s) URL without credentials. Production: https only.
// Both environments refuse this service's own network (SSRF): hosts that are IP literals of loopback, private,
// link-local, CGNAT, multicast or reserved ranges, `localhost` and single-label names are refused when the URL
// is saved, and the sender checks every address a host name resolves to when it connects (a public name may
// later resolve to a private address). Only a sandbox with WEBHOOK_ALLOW_PRIVATE_URLS=true (local development
// and the tests, whose receivers are on localhost) sends to such addresses.
import { BlockList, isIP } from 'node:net';
import type { AppEnvironment } from '../config';

const nonPublic = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv6');
}

/** False for loopback, private, link-local, shared, documentation, multicast and reserved addresses. */
export function isPublicAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 4) return !nonPublic.check(address, 'ipv4');
  if (version !== 6) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return isPublicAddress(mapped[1] as string);
  return !nonPublic.check(address, 'ipv6');
}

export interface DestinationRules {
  appEnv: AppEnvironment;
  /** Sandbox only (the configuration refuses it in production). */
  allowPrivateUrls: boolean;
}

/** True when webhooks may go to any address: a sandbox set up for local development. */
export function allowsPrivateDestinations(rules: DestinationRules): boolean {
  return rules.appEnv === 'sandbox' && rules.allowPrivateUrls;
}

/** A reason the URL cannot receive webhooks here, or null. The URL is already a valid http(s) URL. */
export function webhookUrlProblem(raw: string, rules: DestinationRules): string | null {
  const url = new URL(raw);
  if (url.username || url.password) return 'must not contain credentials';
  if (rules.appEnv === 'production' && url.protocol !== 'https:') return 'must use https in production';
  if (allowsPrivateDestinations(rules)) return null;
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (isIP(host)) return isPublicAddress(host) ? null : 'must not point to a private, loopback or reserved address';
  if (host === 'localhost' || host.endsWith('.localhost') || !host.includes('.'))
    return 'must use a public, fully qualified host name';
  return null;
}
