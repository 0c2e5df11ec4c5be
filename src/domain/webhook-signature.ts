// Webhook authenticity: the Standard Webhooks scheme (https://www.standardwebhooks.com), signed with its
// maintained library so that partners verify with the official verifier of their language. Every request carries
//   webhook-id: <event id>            (the same on every attempt and redelivery: drop duplicates by it)
//   webhook-timestamp: <unix seconds> (each attempt is signed anew; verifiers refuse more than 5 minutes of skew)
//   webhook-signature: v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<raw body>")> [v1,<...> ...]
// where the key is the base64-decoded part of the `whsec_...` secret. During a secret rotation's overlap the
// header carries one signature per secret (newest first), space-separated, and either secret verifies.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { SecretBox } from './secret-box';

export const WEBHOOK_ID_HEADER = 'webhook-id';
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';

/** `whsec_` and 32 random bytes in base64 (Standard Webhooks secrets are 24 to 64 bytes). */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * Secrets made before the Standard Webhooks scheme were `whsec_<base64url>`: the same key bytes in the base64
 * alphabet the scheme's libraries decode.
 */
export function standardWebhookSecret(secret: string): string {
  // Node's base64 decoder reads both alphabets.
  return `whsec_${Buffer.from(secret.replace(/^whsec_/, ''), 'base64').toString('base64')}`;
}

/** The headers of one delivery attempt (besides Content-Type and User-Agent), signed with every secret given. */
export function webhookHeaders(
  messageId: string,
  body: string,
  secrets: readonly string[],
  now: Date = new Date(),
): Record<string, string> {
  if (secrets.length === 0) throw new Error('a webhook needs at least one signing secret');
  return {
    [WEBHOOK_ID_HEADER]: messageId,
    [WEBHOOK_TIMESTAMP_HEADER]: String(Math.floor(now.getTime() / 1000)),
    [WEBHOOK_SIGNATURE_HEADER]: secrets.map((secret) => new Webhook(secret).sign(messageId, now, body)).join(' '),
  };
}

// ---- the configuration's secrets at rest (encrypted, see secret-box.ts) ----

/** Binds a sealed secret to its configuration: a ciphertext copied to another row does not open. */
export const webhookSecretContext = (configId: string) => `webhook_configs.secret:${configId}`;

/** The secret columns of a webhook configuration. */
export interface StoredWebhookSecrets {
  id: string;
  secretCiphertext: string | null;
  /** Plaintext of configurations saved before encryption at rest (until the worker encrypts it). */
  legacySecret: string | null;
  previousSecretCiphertext: string | null;
  previousSecretExpiresAt: Date | null;
}

/** The secrets deliveries are signed with at `now`: the current one, then the previous one during its overlap. */
export function signingSecretsOf(box: SecretBox, row: StoredWebhookSecrets, now: Date = new Date()): string[] {
  const current = row.secretCiphertext
    ? box.open(row.secretCiphertext, webhookSecretContext(row.id))
    : standardWebhookSecret(row.legacySecret ?? '');
  const overlapping =
    row.previousSecretCiphertext && row.previousSecretExpiresAt && row.previousSecretExpiresAt > now
      ? [box.open(row.previousSecretCiphertext, webhookSecretContext(row.id))]
      : [];
  return [current, ...overlapping];
}
