// Builds the OpenAPI 3.1 description from the route table: the same zod schemas that validate
// requests describe them here, and each operation's error responses come from the error catalogue.
import { OpenAPIRegistry, OpenApiGeneratorV31, extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { DEFAULT_AUTH_FAILURE_LIMIT, DEFAULT_AUTH_FAILURE_WINDOW_SECONDS, type AppConfig } from '../config';
import { ErrorCode, errorCatalogue, validationDetailCodes } from './error-codes';
import { JSON_BODY_LIMIT_MB, MAX_JSON_DEPTH } from './limits';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '../schemas/pagination';
import { isRateLimited } from './rate-limit';
import { isCustomBody, RouteDefinition } from './route';
import { documentMetadataSchema } from '../schemas/customers';
import { addOperationLinks } from './openapi-links';

extendZodWithOpenApi(z);

export const API_VERSION = '1.0.0';

const conventions = `
Cross-border payments API for platforms (partners) acting for their customers.

## Conventions
- **Authentication**: send your API key as \`Authorization: <API_KEY>\`, \`Authorization: Bearer <API_KEY>\` or \`api-key: <API_KEY>\`.
  A missing, unknown or revoked key answers 401 \`unauthorized\`. Unknown and revoked keys count against the client
  address: past ${DEFAULT_AUTH_FAILURE_LIMIT} in ${DEFAULT_AUTH_FAILURE_WINDOW_SECONDS} s (the default; the answers to failed authentications carry
  \`RateLimit-Policy: "auth";q=<limit>;w=<window seconds>\` and \`RateLimit: "auth";r=<remaining>;t=<seconds to reset>\`)
  every authenticated request from that address answers 429 \`rate_limited\` with \`Retry-After\` until the window
  ends, whatever its key: no key is looked up meanwhile. Successful requests are never counted.
- **Scoping**: every lookup and list only sees the authenticated partner's resources. Another partner's id answers
  404 \`not_found\`, exactly like an id that does not exist (and so does a malformed id).
- **What 400 means**: a request is refused with 400 only when this description says no: a field, parameter or header
  that breaks its schema (type, format, pattern, length, bounds, enum, \`oneOf\`/\`not\`/\`dependentRequired\`), or
  a body that is not JSON or too deep. A request the schemas accept is never refused for its shape: rules across
  resources or state (a quote of another type, an amount the quote already fixes, a cursor this API did not issue,
  shares adding up to more than 100%) answer 422 with their own code. Generate requests from this description and
  every 400 is a bug on one side.
- **Formats beyond JSON Schema's**: \`phone\` (a number valid for its country; E.164 with or without \`+\`, or the
  national format of the customer's \`country\`), \`mx-phone\` (a Mexican mobile number), \`cpf\`, \`cnpj\` and
  \`cpf-cnpj\` (Brazilian tax ids with valid check digits, bare or masked), \`iban\` (country length and format,
  mod-97 and national check digits; not a Swiss QR-IBAN), \`bic\`, \`aba-routing-number\` (9 digits, valid checksum,
  prefix 01-12, 21-32 or 61-72), \`clabe\` (18 digits, check digit), \`cvu\` and \`cbu\` (22 digits, check digits; a
  CVU starts with 000), \`blockchain-address\` (ethereum: 0x + 40 hex in one case or EIP-55 checksum case; solana:
  base58 of 32 bytes). A value that is not of its format answers 400 naming the field.
- **Enum values** are lower snake_case (\`passport\`, \`front\`, \`awaiting_deposit\`), as Stripe's and Bridge's are; codes
  of ISO standards keep their standard's spelling (currencies \`USD\`, countries \`BRA\`), and event types are the
  SPEC's (\`walletTransfer.created\`). Where the SPEC shows upper case in a request (\`document_type: PASSPORT\`,
  \`document_side: FRONT\`) both spellings are accepted; the lower-case one is canonical.
- **Empty query parameters** are refused, like any value their schema does not allow (\`?after=\` answers 400 naming
  \`after\`), as Stripe does: leave a parameter out to leave it unset.
- **Links**: each create operation's response links (OpenAPI \`links\`) to the operations that take the new id (read,
  update, lists filtered by it, sub-resources), so that clients and stateful testers can chain them.
- **Errors**: \`{"error": {"code", "message"}}\`; a 400 \`validation_error\` adds \`details\`, a list of
  \`{code: missing_param | invalid_param, param, message}\` where \`param\` is the dotted path of the field
  (\`address.country\`, \`beneficiaries.0.share_size\`). Unknown fields are rejected as \`invalid_param\`.
  Every response carries an \`X-Request-Id\` header (yours, if you send a valid one); quote it to support.
- **Pagination**: lists take \`limit\` (default ${DEFAULT_PAGE_LIMIT}, maximum ${MAX_PAGE_LIMIT}), \`after\` / \`before\`
  (opaque cursors from the previous response) and \`start_date\` / \`end_date\` (filters on \`created_at\`, inclusive;
  a bare \`YYYY-MM-DD\` means that whole UTC day). Items are ordered newest first. The response is
  \`{items, cursor: {after, before, limit, page_count}}\` where \`page_count\` is the number of items in the page and a
  null cursor means there is nothing further in that direction.
- **Formats**: timestamps are ISO 8601 in UTC, identifiers are UUIDs, money amounts are decimal strings.
  Creating a resource answers 201. Request bodies are JSON unless an operation says otherwise.
- **Limits of a JSON body**: at most ${JSON_BODY_LIMIT_MB} MB (after any \`Content-Encoding\` is undone; larger answers 413
  \`payload_too_large\`) and arrays and objects nested at most ${MAX_JSON_DEPTH} levels deep, the body itself being level 1
  (deeper answers 400 \`invalid_json\`, naming the limit). Both are checked while the body is read, before anything is
  validated or done. Strings must not contain the NUL character (400 \`validation_error\` naming the field).
- **Idempotency**: every POST and PUT accepts an \`Idempotency-Key\` header (1-255 visible ASCII characters). A repeat
  of the same request (method, path, query and body) with the same key within 24 hours returns the stored status and
  body with \`Idempotent-Replayed: true\` and does nothing again. The same key with a different request answers 422
  \`idempotency_key_reused\`; while the first request is still running a repeat waits up to 5 seconds, then answers 409
  \`idempotency_key_in_use\`. Validation errors (400) and server faults (500) are not stored. Keys are per partner.
  A request that creates a resource stores its response in the same database transaction as the resource, so a retry
  after any failure (timeout, 503, lost connection) returns the resource that was created, never a second one.
- **Deadlines and outages**: every request answers within its deadline (15 s by default). When the database or the
  workflow engine is down or too slow, the answer is 503 \`service_unavailable\` with \`Retry-After\` (seconds):
  retry then, with the same \`Idempotency-Key\`. A create refused with 503 before anything was written leaves
  nothing behind.
- **Environments**: sandbox and production have separate base URLs and keys (\`sk_sandbox_...\`, \`sk_live_...\`);
  a key of the other environment answers 401. Operations under \`/v1/sandbox\` exist only in the sandbox.
  Production serves the flows it has providers for (a rail's deposits or payouts, a chain, the exchange, screening):
  a quote or transaction that needs another answers 422 \`flow_not_available\`, naming each missing flow, before
  anything is created; the sandbox serves every flow with its simulations.
- **Rate limits**: per partner (and per client address on the hosted verification pages), in fixed windows. Responses
  carry \`RateLimit-Policy: "partner";q=<limit>;w=<window seconds>\` and
  \`RateLimit: "partner";r=<remaining>;t=<seconds to reset>\`; over the limit the answer is 429 \`rate_limited\` with
  \`Retry-After\` (seconds).
`.trim();

function errorResponseSchema(codes: ErrorCode[]) {
  return z.object({
    error: z.object({
      code: z.enum(codes as [ErrorCode, ...ErrorCode[]]),
      message: z.string(),
      details: z
        .array(z.object({ code: z.enum(validationDetailCodes), param: z.string(), message: z.string() }))
        .optional()
        .meta({ description: 'Present for validation_error: one entry per invalid or missing field.' }),
    }),
  });
}

/** Error codes an operation can answer: its own plus those every operation of its kind has. */
export function errorCodesOf(route: RouteDefinition): ErrorCode[] {
  const codes = new Set<ErrorCode>(route.errors);
  if (route.auth === 'partner') codes.add('unauthorized');
  if (route.params || route.query || route.body) codes.add('validation_error');
  if (isListQuery(route.query)) codes.add('invalid_cursor').add('conflicting_list_filters');
  if (route.body && !isCustomBody(route.body)) {
    codes.add('invalid_json').add('unsupported_media_type').add('payload_too_large');
  }
  if (acceptsIdempotencyKey(route))
    codes.add('idempotency_key_reused').add('idempotency_key_in_use').add('validation_error');
  if (isRateLimited(route)) codes.add('rate_limited');
  // Every operation has a deadline and dependencies: an outage answers 503 (with Retry-After), never 500.
  codes.add('service_unavailable').add('internal_error');
  return [...codes];
}

/** A list's query (the pagination parameters, extended or not). */
function isListQuery(query: RouteDefinition['query']): boolean {
  return query instanceof z.ZodObject && 'after' in query.shape && 'before' in query.shape;
}

export function acceptsIdempotencyKey(route: RouteDefinition): boolean {
  return route.auth === 'partner' && (route.method === 'post' || route.method === 'put');
}

const idempotencyHeader = z.object({
  'Idempotency-Key': z
    .string()
    .optional()
    .meta({
      pattern: '^[\\x21-\\x7E]{1,255}$',
      minLength: 1,
      maxLength: 255,
      description:
        'Makes the request safe to retry: repeats with the same key and the same request within 24 hours return the stored ' +
        'response (with the header `Idempotent-Replayed: true`) without doing anything again. 1-255 visible ASCII characters.',
      example: 'c0a8012e-7f4d-4c1e-9a55-2f4f9c1b7d10',
    }),
});

export function buildOpenApiDocument(routes: RouteDefinition[], config: Pick<AppConfig, 'publicBaseUrl' | 'appEnv'>) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'ApiKeyAuthorization', {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: 'The API key, bare or as `Bearer <API_KEY>`.',
  });
  registry.registerComponent('securitySchemes', 'ApiKeyHeader', { type: 'apiKey', in: 'header', name: 'api-key' });
  // The JSON inside the document upload's `metadata` part (referenced by its contentSchema).
  // (Registered as a definition: the schema carries its id in its metadata already.)
  (registry as unknown as { _definitions: unknown[] })._definitions.push({
    type: 'schema',
    schema: documentMetadataSchema,
  });

  for (const route of routes) {
    const byStatus = new Map<number, ErrorCode[]>();
    for (const code of errorCodesOf(route)) {
      const status = errorCatalogue[code].status;
      byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
    }
    const errorResponses = Object.fromEntries(
      [...byStatus.entries()].map(([status, codes]) => [
        status,
        {
          description: codes.map((code) => `\`${code}\`: ${errorCatalogue[code].when}`).join('\n\n'),
          ...(status === 503 || status === 429
            ? {
                headers: {
                  'Retry-After': {
                    description:
                      status === 503
                        ? 'Seconds to wait before retrying (with the same Idempotency-Key).'
                        : 'Seconds until the window ends and requests are counted anew.',
                    schema: { type: 'integer', minimum: 1 },
                  },
                },
              }
            : {}),
          content: { 'application/json': { schema: errorResponseSchema(codes) } },
        },
      ]),
    );
    const body = route.body;
    registry.registerPath({
      method: route.method,
      path: route.path,
      operationId: route.operationId,
      tags: [route.tag],
      summary: route.summary,
      description: route.description,
      security: route.auth === 'partner' ? [{ ApiKeyAuthorization: [] }, { ApiKeyHeader: [] }] : [],
      request: {
        headers: acceptsIdempotencyKey(route) ? (idempotencyHeader as never) : undefined,
        params: route.params as never,
        query: route.query as never,
        body: body
          ? isCustomBody(body)
            ? { required: true, content: { [body.contentType]: { schema: body.schema } } }
            : { required: true, content: { 'application/json': { schema: body } } }
          : undefined,
      },
      responses: {
        [route.response.status]: {
          description: route.response.description,
          ...(route.response.schema
            ? { content: { [route.response.contentType ?? 'application/json']: { schema: route.response.schema } } }
            : {}),
        },
        ...errorResponses,
      },
    });
  }

  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: 'Payments API', version: API_VERSION, description: conventions },
    servers: [{ url: config.publicBaseUrl, description: config.appEnv }],
  });
  stateServerWideRules(document, config.appEnv);
  addOperationLinks(document);
  return document;
}

type Json = Record<string, unknown>;
type GeneratedDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

/** Every schema object reachable from `start`, each once ($refs followed into the components). */
function reachableSchemas(document: GeneratedDocument, start: unknown[]): Json[] {
  const components = (document.components?.schemas ?? {}) as Record<string, Json>;
  const seen = new Set<unknown>();
  const found: Json[] = [];
  const stack = [...start];
  while (stack.length > 0) {
    const value = stack.pop();
    if (!value || typeof value !== 'object' || seen.has(value)) continue;
    seen.add(value);
    if (Array.isArray(value)) {
      stack.push(...value);
      continue;
    }
    const schema = value as Json;
    found.push(schema);
    if (typeof schema.$ref === 'string') stack.push(components[schema.$ref.replace('#/components/schemas/', '')]);
    stack.push(...Object.values(schema));
  }
  return found;
}

/**
 * Rules the server applies to every request, stated in each schema they concern: no NUL character in any text (no
 * column can store it), a path parameter is not empty, and production has no sandbox controls (`simulate`).
 */
function stateServerWideRules(document: GeneratedDocument, appEnv: AppConfig['appEnv']): void {
  const requestSide: unknown[] = [];
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item as Record<string, Json>)) {
      for (const parameter of (operation.parameters as Json[] | undefined) ?? []) {
        if (parameter.in === 'path') Object.assign(parameter.schema as Json, { minLength: 1 });
        requestSide.push(parameter.schema);
      }
      requestSide.push(operation.requestBody);
    }
  }
  for (const schema of reachableSchemas(document, requestSide)) {
    const plainText =
      schema.type === 'string' && !schema.pattern && !schema.enum && !('const' in schema) && !schema.format;
    if (plainText) schema.pattern = '^[^\\u0000]*$';
    const properties = schema.properties as Json | undefined;
    if (appEnv === 'production' && properties && 'simulate' in properties) {
      delete properties.simulate;
    }
  }
}
