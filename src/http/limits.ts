// The bounds of a request body, in one place: the body readers enforce them, and the error catalogue and the
// OpenAPI description name them.

/** Largest JSON body accepted, in MB (after any Content-Encoding is undone); larger ones answer 413 payload_too_large. */
export const JSON_BODY_LIMIT_MB = 1;

export { MAX_JSON_DEPTH } from '../domain/json';
