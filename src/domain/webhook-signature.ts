// Webhook authenticity (README "Verifying webhook signatures"): every request carries
//   Webhook-Id: <event_id>
//   Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
// The secret is the configuration's `whsec_...` string, used as is (UTF-8) as the HMAC key. The timestamp is
// signed so that a captured request cannot be replayed later; each attempt is signed anew.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const WEBHOOK_ID_HEADER = 'Webhook-Id';
export const WEBHOOK_SIGNATURE_HEADER = 'Webhook-Signature';
/** Receivers should refuse signatures whose timestamp is further than this from their clock. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

function hmacHex(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');
}

export function signatureHeader(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${hmacHex(secret, timestamp, body)}`;
}

/** The headers of one delivery attempt (besides Content-Type and User-Agent). */
export function webhookHeaders(
  eventId: string,
  body: string,
  secret: string,
  now: Date = new Date(),
): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return { [WEBHOOK_ID_HEADER]: eventId, [WEBHOOK_SIGNATURE_HEADER]: signatureHeader(secret, timestamp, body) };
}

/** The check a receiver does (the README shows the same steps as a snippet). */
export function verifyWebhookSignature(
  header: string,
  rawBody: string,
  secret: string,
  options: { now?: Date; toleranceSeconds?: number } = {},
): boolean {
  const parts = header.split(',').map((part) => part.trim().split('='));
  const timestamp = Number(parts.find(([key]) => key === 't')?.[1]);
  if (!Number.isInteger(timestamp)) return false;
  const nowSeconds = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(nowSeconds - timestamp) > (options.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS)) return false;
  const expected = Buffer.from(hmacHex(secret, timestamp, rawBody), 'hex');
  return parts
    .filter(([key, value]) => key === 'v1' && value !== undefined && /^[0-9a-f]{64}$/.test(value))
    .some(([, value]) => timingSafeEqual(Buffer.from(value as string, 'hex'), expected));
}
