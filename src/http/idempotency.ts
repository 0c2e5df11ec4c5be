// Idempotency keys (as Stripe): every POST and PUT accepts `Idempotency-Key`. The first request
// with a key claims it in the database (primary key partner + key) and its response is stored; a
// repeat of the same request within 24 hours replays that response without doing anything again.
// The same key on a different request answers 422 idempotency_key_reused; while the first request
// is still running, repeats wait for its result (up to a few seconds) and then answer 409
// idempotency_key_in_use. Validation failures (400) and server faults (500) are not stored: the key
// stays free to retry. A claim whose request died (process crash) is taken over after 2 minutes
// (IDEMPOTENCY_ABANDONED_CLAIM_SECONDS).
// Nothing can be done twice: the claim carries an owner token that complete and release check, a running
// request refreshes its claim, and a request that writes (src/temporal/write-then-start.ts) stores its response
// in the same database transaction as the resource, so a crash between the commit and the answer is replayed.
// Stored responses may carry secrets (a webhook signing secret, a verification link): they are kept encrypted
// (src/domain/secret-box.ts), bound to their partner and key.
import { createHash, randomUUID } from 'node:crypto';
import type { DatabaseTransaction, Database, DatabaseClient } from '../persistence/database';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  findIdempotencyKey,
  refreshIdempotencyClaim,
  releaseIdempotencyClaim,
} from '../persistence/idempotency-keys';
import type { SecretBox } from '../domain/secret-box';
import { currentRequestContext } from '../request-context';
import { ApiError, apiErrorOf } from './errors';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const IDEMPOTENCY_RETENTION_HOURS = 24;
/** Default of IDEMPOTENCY_ABANDONED_CLAIM_SECONDS. */
export const ABANDONED_CLAIM_MS = 120_000;
/** A running request refreshes its claim this often (or more often when claims are abandoned sooner). */
const HEARTBEAT_MS = 20_000;
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

/** Attempts of releaseSoon, and the pause before the first retry (doubled each time). */
const RELEASE_ATTEMPTS = 6;
const RELEASE_FIRST_RETRY_MS = 500;

/**
 * Frees the key of a request that failed. When the database is what failed, the release fails too, and the
 * partner's retry would meet `idempotency_key_in_use` until the claim counts as abandoned: so it is retried in the
 * background a few times (over about 15 s), and the key frees within moments of the database coming back.
 */
function releaseSoon(db: DatabaseClient, request: IdempotentRequest, owner: string, attempt = 1): Promise<void> {
  return releaseIdempotencyClaim(db, request, owner).catch(() => {
    if (attempt >= RELEASE_ATTEMPTS) return; // the claim is taken over once abandoned
    const retry = setTimeout(
      () => void releaseSoon(db, request, owner, attempt + 1),
      RELEASE_FIRST_RETRY_MS * 2 ** (attempt - 1),
    );
    retry.unref();
  });
}

/**
 * Stores the response; only the owner's claim. Throws when the claim is no longer ours (taken over): inside a
 * write transaction that rolls the write back, so two requests can never both commit under one key.
 */
async function complete(
  db: Database,
  request: IdempotentRequest,
  owner: string,
  response: StoredResponse,
  box: SecretBox,
): Promise<void> {
  const sealed =
    response.body === undefined ? null : { sealed: box.seal(JSON.stringify(response.body), sealedContext(request)) };
  if (!(await completeIdempotencyKey(db, request, owner, { status: response.status, body: sealed }))) {
    throw new ApiError(
      'idempotency_key_in_use',
      'This request lost its claim on the Idempotency-Key to a retry; retry to get the stored result.',
    );
  }
}

const sealedContext = (request: IdempotentRequest) =>
  `idempotency_keys.response_body:${request.partnerId}:${request.key}`;

/** A stored body as it was answered (rows stored before encryption are plain JSON; 204s have none). */
function storedBody(stored: unknown, request: IdempotentRequest, box: SecretBox): unknown {
  if (stored && typeof stored === 'object' && typeof (stored as { sealed?: unknown }).sealed === 'string') {
    return JSON.parse(box.open((stored as { sealed: string }).sealed, sealedContext(request))) as unknown;
  }
  return stored ?? undefined;
}

/** Keeps a running request's claim from being taken over as abandoned. */
function keepClaimAlive(
  db: DatabaseClient,
  request: IdempotentRequest,
  owner: string,
  abandonedClaimMs: number,
): () => void {
  const timer = setInterval(
    () => {
      void refreshIdempotencyClaim(db, request, owner).catch(() => undefined);
    },
    Math.min(HEARTBEAT_MS, abandonedClaimMs / 4),
  );
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Processes the request once per key; returns the response and whether it is a replay. `successStatus` is the
 * status the operation answers on success: a write transaction stores it with the body it returns.
 */
export async function withIdempotency(
  db: DatabaseClient,
  request: IdempotentRequest,
  successStatus: number,
  process: () => Promise<StoredResponse>,
  box: SecretBox,
  abandonedClaimMs = ABANDONED_CLAIM_MS,
): Promise<StoredResponse & { replayed: boolean }> {
  validateIdempotencyKey(request.key);
  const fingerprint = fingerprintOf(request);
  const owner = randomUUID();
  const deadline = Date.now() + MAX_WAIT_MS;
  const claim = {
    fingerprint,
    method: request.method,
    path: request.path,
    owner,
    retentionHours: IDEMPOTENCY_RETENTION_HOURS,
    abandonedClaimMs,
  };
  let pause = 10;
  for (;;) {
    if (await claimIdempotencyKey(db, request, claim)) break;
    const existing = await findIdempotencyKey(db, request);
    if (!existing) continue; // released by a failed first attempt: claim again
    if (existing.fingerprint !== fingerprint) {
      throw new ApiError(
        'idempotency_key_reused',
        `This Idempotency-Key was used for a different request (${existing.method} ${existing.path}) in the last ${IDEMPOTENCY_RETENTION_HOURS} hours.`,
      );
    }
    if (existing.state === 'completed') {
      return {
        status: existing.responseStatus ?? 200,
        body: storedBody(existing.responseBody, request, box),
        replayed: true,
      };
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

  const context = currentRequestContext();
  if (context) {
    context.idempotentRequest = `${request.partnerId}:${request.key}:${fingerprint}`;
    context.storeIdempotentResponse = (tx: DatabaseTransaction, body: unknown) =>
      complete(tx, request, owner, { status: successStatus, body: successStatus === 204 ? undefined : body }, box);
  }
  const stopHeartbeat = keepClaimAlive(db, request, owner, abandonedClaimMs);
  try {
    const response = await process();
    if (!context?.idempotentResponseStored) await complete(db, request, owner, response, box);
    return { ...response, replayed: false };
  } catch (error) {
    // Stored with the write: the work is done and the partner's retry replays it, whatever failed after.
    if (context?.idempotentResponseStored) throw error;
    // Business refusals (4xx other than validation) are part of the request's result and replayed;
    // anything else frees the key so that the partner can retry.
    const refusal = apiErrorOf(error);
    if (refusal && refusal.status < 500 && refusal.code !== 'validation_error') {
      await complete(db, request, owner, { status: refusal.status, body: refusal.toBody() }, box).catch(
        () => undefined,
      );
    } else {
      await releaseSoon(db, request, owner);
    }
    throw error;
  } finally {
    stopHeartbeat();
  }
}
