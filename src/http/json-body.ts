// Reading JSON request bodies, with the two bounds every JSON body has before anything walks it:
// - size: at most JSON_BODY_LIMIT_MB (1 MB) after any Content-Encoding is undone, else 413 payload_too_large;
// - nesting: arrays and objects at most MAX_JSON_DEPTH levels deep, else 400 invalid_json naming the limit. The
//   text is scanned before it is parsed, so a body of nested brackets is refused without building it, and no walk
//   of a request value (the NUL check, zod, the idempotency fingerprint, logs) ever meets a deep one.
// Parsing is @hapi/bourne's (co-body's parser): JSON.parse refusing `__proto__` keys.
import parseBody from 'co-body';
import { parse } from '@hapi/bourne';
import type { Context } from 'koa';
import { ApiError } from './errors';
import { jsonNestsDeeperThan } from '../domain/json';
import { JSON_BODY_LIMIT_MB, MAX_JSON_DEPTH } from './limits';

export const jsonTooDeepMessage = `The request body nests JSON arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`;

/** Only an object or an array is a request body (RFC 8259 whitespace first). */
const objectOrArray = /^[\x20\x09\x0a\x0d]*[[{]/;

/** Parses a JSON request body's text within the nesting bound; an empty body is `{}`. */
export function parseJsonBody(text: string): unknown {
  if (text === '') return {};
  if (jsonNestsDeeperThan(text, MAX_JSON_DEPTH)) throw new ApiError('invalid_json', jsonTooDeepMessage);
  if (!objectOrArray.test(text)) throw invalidJson();
  try {
    return parse(text, { protoAction: 'error' });
  } catch {
    throw invalidJson();
  }
}

function hasBody(ctx: Context): boolean {
  const length = ctx.get('content-length');
  return ctx.get('transfer-encoding') !== '' || (length !== '' && length !== '0');
}

export async function readJsonBody(ctx: Context): Promise<unknown> {
  // An absent body validates like `{}`, so each required field is reported as missing.
  if (!hasBody(ctx)) return {};
  if (!ctx.is('application/json')) {
    throw new ApiError('unsupported_media_type', 'Send the body as JSON with Content-Type: application/json.');
  }
  return parseJsonBody(await readText(ctx));
}

export async function rejectUnexpectedBody(ctx: Context): Promise<void> {
  if (!['POST', 'PUT', 'PATCH'].includes(ctx.method) || !hasBody(ctx)) return;
  // The operation takes no body; an empty JSON object is tolerated, anything else is a mistake.
  const raw = await readText(ctx);
  if (raw.trim() !== '' && raw.trim() !== '{}')
    throw ApiError.invalidParam('body', 'this operation takes no request body');
}

/** The body as text, at most JSON_BODY_LIMIT_MB once decoded (co-body: Content-Encoding, charset, Content-Length). */
function readText(ctx: Context): Promise<string> {
  return parseBody.text(ctx.req, { limit: `${JSON_BODY_LIMIT_MB}mb` }).catch((error: unknown) => {
    throw bodyReadError(error);
  });
}

function invalidJson(): ApiError {
  return new ApiError('invalid_json', 'The request body is not valid JSON.');
}

function bodyReadError(error: unknown): ApiError {
  const type = (error as { type?: string }).type;
  const status = (error as { status?: number }).status;
  if (type === 'entity.too.large' || status === 413) {
    return new ApiError('payload_too_large', `The request body exceeds ${JSON_BODY_LIMIT_MB} MB.`);
  }
  if (status === 415) return new ApiError('unsupported_media_type', 'Unsupported Content-Encoding.');
  return invalidJson();
}
