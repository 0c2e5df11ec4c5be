// The OpenAPI description: valid by a standard validator, complete (every operation and error
// code), and in agreement with the error table of docs/errors.md.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { routesOf } from '../src/http/app';
import { errorCatalogue, ErrorCode } from '../src/http/error-codes';
import { buildOpenApiDocument, errorCodesOf } from '../src/http/openapi';
import { allRoutes } from '../src/routes';
import { projectRoot } from './support/paths';

type Document = ReturnType<typeof buildOpenApiDocument>;
const documents = new Map<'sandbox' | 'production', Document>();
/** Built once per environment: the tests only read it. */
function documentFor(appEnv: 'sandbox' | 'production'): Document {
  let document = documents.get(appEnv);
  if (!document) {
    document = buildOpenApiDocument(routesOf(allRoutes, appEnv), { appEnv, publicBaseUrl: 'https://api.example.com' });
    documents.set(appEnv, document);
  }
  return document;
}

function operations(document: Document) {
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item as Record<string, { operationId?: string; responses: Record<string, unknown> }>).map(
      ([method, operation]) => ({ path, method, operation }),
    ),
  );
}

it.each(['sandbox', 'production'] as const)('the %s description is valid OpenAPI 3.1', (appEnv) => {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'openapi-'));
  const file = path.join(directory, 'openapi.json');
  let output: string;
  try {
    writeFileSync(file, JSON.stringify(documentFor(appEnv)));
    output = execFileSync(process.execPath, [path.join(projectRoot, 'scripts', 'validate-openapi.mjs'), file], {
      encoding: 'utf8',
    });
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  expect(JSON.parse(output)).toEqual({ valid: true });
});

it('describes every operation of the route table exactly once', () => {
  const described = operations(documentFor('sandbox')).map(
    ({ method, path, operation }) => `${method} ${path} ${operation.operationId}`,
  );
  const expected = allRoutes.map((route) => `${route.method} ${route.path} ${route.operationId}`);
  expect(described.sort()).toEqual(expected.sort());
  expect(new Set(allRoutes.map((route) => route.operationId)).size).toBe(allRoutes.length);
});

it('documents each operation’s error codes under their HTTP status', () => {
  const document = documentFor('sandbox');
  for (const route of allRoutes) {
    const responses = (
      document.paths?.[route.path] as Record<string, { responses: Record<string, { content?: unknown }> }>
    )[route.method]!.responses;
    for (const code of errorCodesOf(route)) {
      const response = responses[String(errorCatalogue[code].status)] as
        | {
            content: {
              'application/json': { schema: { properties: { error: { properties: { code: { enum: string[] } } } } } };
            };
          }
        | undefined;
      expect(response).toBeDefined();
      expect(response!.content['application/json'].schema.properties.error.properties.code.enum).toContain(code);
    }
  }
});

it('states the conventions decided where the SPEC is silent', () => {
  const description = documentFor('sandbox').info.description ?? '';
  for (const phrase of [
    'maximum 100',
    'default 10',
    'page_count',
    'Idempotency-Key',
    'X-Request-Id',
    'api-key',
    'decimal strings',
  ]) {
    expect(description).toContain(phrase);
  }
});

it('has the error table of docs/errors.md agree with the error catalogue', () => {
  const readme = readFileSync(path.join(projectRoot, 'docs', 'errors.md'), 'utf8');
  const table = readme.slice(readme.indexOf('## Error codes'));
  const rows = [...table.matchAll(/^\| `([a-z0-9_]+)` \| (\d{3}) \| (.+) \|$/gm)].map((match) => ({
    code: match[1] as ErrorCode,
    status: Number(match[2]),
  }));
  expect(rows.map((row) => row.code).sort()).toEqual(Object.keys(errorCatalogue).sort());
  for (const row of rows) expect(row.status).toBe(errorCatalogue[row.code].status);
});

it('documents the limits of a JSON body and the limit of failed authentications', () => {
  const document = documentFor('sandbox');
  const description = (document.info.description ?? '').replace(/\s+/g, ' ');
  for (const phrase of [
    'at most 1 MB',
    '413 `payload_too_large`',
    'nested at most 32 levels deep',
    '400 `invalid_json`',
    'Unknown and revoked keys count against the client address: past 20 in 60 s',
    'RateLimit-Policy: "auth"',
  ]) {
    expect(description).toContain(phrase);
  }
  const responses = (document.paths?.['/v1/customers'] as Record<string, { responses: Record<string, never> }>).post!
    .responses as Record<string, { description: string; headers?: Record<string, unknown> }>;
  expect(responses['429']!.description).toContain('too many failed authentications');
  expect(responses['429']!.headers).toHaveProperty('Retry-After');
  expect(responses['413']!.description).toContain('1 MB for a JSON body');
  expect(responses['400']!.description).toContain('deeper than 32 levels');
});
