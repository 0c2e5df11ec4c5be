// Where webhooks may be sent. Every URL is an absolute http(s) URL without credentials. Production: https only.
// Both environments refuse this service's own network (SSRF): hosts that are IP literals of anything but global
// unicast addresses (below), `localhost` and single-label names are refused when the URL is saved, and the sender checks every address a host name resolves to when it connects (a public name may
// later resolve to a private address). Only a sandbox with WEBHOOK_ALLOW_PRIVATE_URLS=true (local development
// and the tests, whose receivers are on localhost) sends to such addresses.
import { BlockList, isIP } from 'node:net';
import type { AppEnvironment } from '../config';

// Global unicast only. IPv4: everything except the special-purpose ranges below (IANA registry). IPv6: inside
// 2000::/3 (global unicast) and outside its special-purpose ranges. Everything else is refused, which covers the
// forms that carry an IPv4 address to somewhere else: IPv4-mapped (::ffff:0:0/96) and IPv4-compatible (::/96)
// addresses, NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4 (2002::/16) and Teredo (2001::/32), as well as site-local
// (fec0::/10), unique-local, link-local, multicast, loopback and the unspecified address.
const specialIpv4 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared address space (CGNAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
] as const) {
  specialIpv4.addSubnet(network, prefix, 'ipv4');
}

const globalUnicastIpv6 = new BlockList();
globalUnicastIpv6.addSubnet('2000::', 3, 'ipv6');
const specialIpv6 = new BlockList();
for (const [network, prefix] of [
  ['2001::', 23], // IETF protocol assignments: Teredo (2001::/32), benchmarking, ORCHID...
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4
  ['3fff::', 20], // documentation
] as const) {
  specialIpv6.addSubnet(network, prefix, 'ipv6');
}

/** True for global unicast addresses only (the only ones webhooks may reach outside a local sandbox). */
export function isPublicAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 4) return !specialIpv4.check(address, 'ipv4');
  if (version !== 6) return false;
  // BlockList compares IPv4-mapped addresses as their IPv4 form: refuse them before it can.
  if (/^[0:]*:ffff:/i.test(address)) return false;
  try {
    return globalUnicastIpv6.check(address, 'ipv6') && !specialIpv6.check(address, 'ipv6');
  } catch {
    return false; // e.g. a zone index (fe80::1%eth0)
  }
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
