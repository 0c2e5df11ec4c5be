// The bounds of a request body, in one place: the body readers enforce them, and the error catalogue and the
// OpenAPI description name them.

/** Largest JSON body accepted, in MB (after any Content-Encoding is undone); larger ones answer 413 payload_too_large. */
export const JSON_BODY_LIMIT_MB = 1;

/**
 * Deepest nesting of arrays and objects accepted in a JSON body (the body itself is level 1); deeper ones answer 400
 * invalid_json. The deepest request of the API is 4 levels (a business customer's beneficiaries[].address.country):
 * 32 leaves ample room for growth while keeping every walk of a request value shallow.
 */
export const MAX_JSON_DEPTH = 32;
