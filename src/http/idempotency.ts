// Idempotency keys (as Stripe): every POST and PUT accepts `Idempotency-Key`. The first request
// with a key claims it in the database (primary key partner + key) and its response is stored; a
// repeat of the same request within 24 hours replays that response without doing anything again.
// The same key on a different request answers 422 idempotency_key_reused; while the first request
// is still running, repeats wait for its result (up to a few seconds) and then answer 409
// idempotency_key_in_use. Validation failures (400) and server faults (500) are not stored: the key
// stays free to retry. A claim whose request died (process crash) is taken over after 2 minutes.
import { createHash } from 'node:crypto';
import type { Db } from '../db';
import type { SecretBox } from '../secrets';
import { ApiError } from './errors';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const IDEMPOTENCY_RETENTION_HOURS = 24;
export const ABANDONED_CLAIM_SECONDS = 120;
const MAX_WAIT_MS = 5000;

export interface StoredResponse {
  status: number;
  body: unknown;
}

export interface IdempotentRequest {
  partnerId: string;
  key: string;
  method: string;
  path: string;
  /** What makes two requests the same: query and body (files by their hash). */
  payload: unknown;
}

/** JSON with sorted keys and buffers replaced by their hash, so equal requests hash equally. */
function canonical(value: unknown): unknown {
  if (Buffer.isBuffer(value)) return { sha256: createHash('sha256').update(value).digest('hex') };
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

export function fingerprintOf(request: Pick<IdempotentRequest, 'method' | 'path' | 'payload'>): string {
  return createHash('sha256')
    .update(JSON.stringify(canonical([request.method, request.path, request.payload])))
    .digest('hex');
}

export function validateIdempotencyKey(key: string): void {
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw ApiError.invalidParam(
      IDEMPOTENCY_HEADER,
      'must be 1 to 255 visible ASCII characters (a UUID is a good choice)',
    );
  }
}

/** Claims the key; true when this request is the one to process it. */
async function claim(db: Db, request: IdempotentRequest, fingerprint: string): Promise<boolean> {
  const claimed = await db.$executeRaw`
    INSERT INTO idempotency_keys (partner_id, key, fingerprint, method, path, state, expires_at)
    VALUES (${request.partnerId}::uuid, ${request.key}, ${fingerprint}, ${request.method}, ${request.path}, 'in_progress',
            now() + make_interval(hours => ${IDEMPOTENCY_RETENTION_HOURS}))
    ON CONFLICT (partner_id, key) DO UPDATE
      SET fingerprint = EXCLUDED.fingerprint, method = EXCLUDED.method, path = EXCLUDED.path, state = 'in_progress',
          response_status = NULL, response_body = NULL, locked_at = now(), created_at = now(),
          expires_at = EXCLUDED.expires_at, completed_at = NULL
      WHERE idempotency_keys.expires_at < now()
         OR (idempotency_keys.state = 'in_progress'
             AND idempotency_keys.fingerprint = EXCLUDED.fingerprint
             AND idempotency_keys.locked_at < now() - make_interval(secs => ${ABANDONED_CLAIM_SECONDS}))`;
  return claimed === 1;
}

async function release(db: Db, request: IdempotentRequest): Promise<void> {
  await db.idempotencyKey.deleteMany({
    where: { partnerId: request.partnerId, key: request.key, state: 'in_progress' },
  });
}

// Stored bodies may carry secrets (a webhook signing secret, a verification link): they are kept encrypted,
// bound to their partner and key.
const sealedContext = (request: IdempotentRequest) => `idempotency_keys.response_body:${request.partnerId}:${request.key}`;

async function complete(db: Db, request: IdempotentRequest, response: StoredResponse, box: SecretBox): Promise<void> {
  const sealed = response.body === undefined ? null : { sealed: box.seal(JSON.stringify(response.body), sealedContext(request)) };
  await db.idempotencyKey.update({
    where: { partnerId_key: { partnerId: request.partnerId, key: request.key } },
    data: {
      state: 'completed',
      responseStatus: response.status,
      responseBody: sealed as never,
      completedAt: new Date(),
    },
  });
}

function storedBody(stored: unknown, request: IdempotentRequest, box: SecretBox): unknown {
  if (stored && typeof stored === 'object' && typeof (stored as { sealed?: unknown }).sealed === 'string') {
    return JSON.parse(box.open((stored as { sealed: string }).sealed, sealedContext(request))) as unknown;
  }
  return stored ?? undefined; // rows stored before encryption, and bodiless (204) responses
}

/** Processes the request once per key; returns the response and whether it is a replay. */
export async function withIdempotency(
  db: Db,
  request: IdempotentRequest,
  process: () => Promise<StoredResponse>,
  box: SecretBox,
): Promise<StoredResponse & { replayed: boolean }> {
  validateIdempotencyKey(request.key);
  const fingerprint = fingerprintOf(request);
  const deadline = Date.now() + MAX_WAIT_MS;
  let pause = 10;
  for (;;) {
    if (await claim(db, request, fingerprint)) break;
    const existing = await db.idempotencyKey.findUnique({
      where: { partnerId_key: { partnerId: request.partnerId, key: request.key } },
    });
    if (!existing) continue; // released by a failed first attempt: claim again
    if (existing.fingerprint !== fingerprint) {
      throw new ApiError(
        'idempotency_key_reused',
        `This Idempotency-Key was used for a different request (${existing.method} ${existing.path}) in the last ${IDEMPOTENCY_RETENTION_HOURS} hours.`,
      );
    }
    if (existing.state === 'completed') {
      return { status: existing.responseStatus ?? 200, body: storedBody(existing.responseBody, request, box), replayed: true };
    }
    if (Date.now() > deadline) {
      throw new ApiError(
        'idempotency_key_in_use',
        'A request with this Idempotency-Key is still being processed; retry shortly.',
      );
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(pause * 2, 200);
  }

  try {
    const response = await process();
    await complete(db, request, response, box);
    return { ...response, replayed: false };
  } catch (error) {
    // Business refusals (4xx other than validation) are part of the request's result and replayed;
    // anything else frees the key so that the partner can retry.
    if (error instanceof ApiError && error.status < 500 && error.code !== 'validation_error') {
      await complete(db, request, { status: error.status, body: error.toBody() }, box);
    } else {
      await release(db, request);
    }
    throw error;
  }
}
