// Hosted verification links (`verification.verification_link`): `<PUBLIC_BASE_URL>/verify/<token>`.
// The token is HMAC-SHA256(key derived from SECRETS_ENCRYPTION_KEY, "<customer id>:<version>"), so the service can
// show the link again without keeping it: the database stores only SHA-256(token), the version and the expiry.
// A new version (a new token; the old one stops working) is issued on every status change of the customer and
// when the API shows a customer whose link expired. Event payloads store a placeholder naming the version
// (storedLinkPlaceholder) instead of the link; it is turned back into the link when the event is shown or sent.
import { createHash, createHmac } from 'node:crypto';
import { deriveKey } from './secret-box';

export interface VerificationLinkState {
  id: string;
  status: string;
  verificationTokenHash: string;
  verificationLinkVersion: number;
  verificationLinkExpiresAt: Date;
}

/** The parts of the configuration links depend on (src/config.ts). */
export interface LinkConfig {
  secrets: { encryptionKey: Buffer };
  publicBaseUrl: string;
  verificationLinkTtlHours: number;
}

export interface LinkSettings {
  encryptionKey: Buffer;
  publicBaseUrl: string;
  ttlHours: number;
}

/** The link is offered while the customer has something to submit. */
export function offersVerificationLink(status: string): boolean {
  return status === 'pending' || status === 'partially_rejected';
}

export function hashVerificationToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

const tokenKeys = new WeakMap<Buffer, Buffer>();

export function verificationToken(encryptionKey: Buffer, customerId: string, version: number): string {
  let key = tokenKeys.get(encryptionKey);
  if (!key) {
    key = deriveKey(encryptionKey, 'verification-link/v1');
    tokenKeys.set(encryptionKey, key);
  }
  return createHmac('sha256', key).update(`${customerId}:${version}`, 'utf8').digest('base64url');
}

/** Tokens are 43 base64url characters; anything else is refused before touching the database. */
export function isWellFormedToken(token: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(token);
}

/** The columns of a new version of the link (on creation, status changes and renewal). */
export function issueVerificationLink(
  settings: Pick<LinkSettings, 'encryptionKey' | 'ttlHours'>,
  customerId: string,
  version: number,
  now: Date = new Date(),
): Pick<VerificationLinkState, 'verificationTokenHash' | 'verificationLinkVersion' | 'verificationLinkExpiresAt'> {
  return {
    verificationTokenHash: hashVerificationToken(verificationToken(settings.encryptionKey, customerId, version)),
    verificationLinkVersion: version,
    verificationLinkExpiresAt: new Date(now.getTime() + settings.ttlHours * 3_600_000),
  };
}

/**
 * False when the stored link cannot be shown as is: it expired, or it was not derived from the current key
 * (a key change, or a link issued before links were derived). The API issues a new version then.
 */
export function isLinkCurrent(
  settings: Pick<LinkSettings, 'encryptionKey'>,
  row: VerificationLinkState,
  now: Date = new Date(),
): boolean {
  if (row.verificationLinkExpiresAt.getTime() <= now.getTime()) return false;
  const expected = hashVerificationToken(
    verificationToken(settings.encryptionKey, row.id, row.verificationLinkVersion),
  );
  return expected === row.verificationTokenHash;
}

export function verificationLinkUrl(
  settings: Pick<LinkSettings, 'encryptionKey' | 'publicBaseUrl'>,
  customerId: string,
  version: number,
): string {
  return `${settings.publicBaseUrl}/verify/${verificationToken(settings.encryptionKey, customerId, version)}`;
}

/** What the customer resource shows: the link while the customer can submit, else null. */
export function verificationLinkOf(
  settings: Pick<LinkSettings, 'encryptionKey' | 'publicBaseUrl'>,
  row: Pick<VerificationLinkState, 'id' | 'status' | 'verificationLinkVersion'>,
): string | null {
  return offersVerificationLink(row.status) ? verificationLinkUrl(settings, row.id, row.verificationLinkVersion) : null;
}

const placeholderPattern = /^verification-link:v(\d+)$/;

/** What an event row stores where the link would be: its version, no token. */
export function storedLinkPlaceholder(
  row: Pick<VerificationLinkState, 'status' | 'verificationLinkVersion'>,
): string | null {
  return offersVerificationLink(row.status) ? `verification-link:v${row.verificationLinkVersion}` : null;
}

/** The link a stored placeholder stands for (the version of that time: it may have been replaced since). */
export function linkFromPlaceholder(
  settings: Pick<LinkSettings, 'encryptionKey' | 'publicBaseUrl'>,
  customerId: string,
  stored: unknown,
): unknown {
  const match = typeof stored === 'string' ? placeholderPattern.exec(stored) : null;
  return match ? verificationLinkUrl(settings, customerId, Number(match[1])) : stored;
}
