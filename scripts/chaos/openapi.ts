// The operations of the running API, read from its GET /openapi.json: the fuzzer and the isolation scenario walk
// every one of them, so a new operation is covered (or the scenario says it has no fixture for it).
import { OpenApiConformance } from '../../test/support/openapi-conformance';
import { expectStatus } from './fixtures';
import type { HttpClient } from './http';

export interface Operation {
  method: string;
  /** The path as in the document, e.g. `/v1/customers/{id}`. */
  template: string;
  operationId: string;
  pathParams: string[];
  queryParams: string[];
  /** The request body's media type, or null when the operation takes none. */
  bodyType: string | null;
  /** Needs an API key (unauthenticated operations: health, hosted verification). */
  authenticated: boolean;
}

interface OpenApiDocument {
  paths: Record<
    string,
    Record<
      string,
      {
        operationId: string;
        parameters?: Array<{ name: string; in: string }>;
        requestBody?: { content: Record<string, unknown> };
        security?: unknown[];
        responses: Record<string, unknown>;
      }
    >
  >;
}

export interface ApiDescription {
  operations: Operation[];
  /** Checks a response against the document (documented status, schema of the body). */
  conformance: OpenApiConformance;
}

export async function describeApi(http: HttpClient): Promise<ApiDescription> {
  const document = expectStatus(await http.send({ method: 'GET', path: '/openapi.json' }), 200, 'openapi.json')
    .body as OpenApiDocument;
  const operations: Operation[] = [];
  for (const [template, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const parameters = operation.parameters ?? [];
      operations.push({
        method: method.toUpperCase(),
        template,
        operationId: operation.operationId,
        pathParams: parameters.filter((parameter) => parameter.in === 'path').map((parameter) => parameter.name),
        queryParams: parameters.filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name),
        bodyType: operation.requestBody ? (Object.keys(operation.requestBody.content)[0] ?? null) : null,
        authenticated: (operation.security ?? []).length > 0,
      });
    }
  }
  return { operations, conformance: new OpenApiConformance(document as never) };
}

/** The template with its parameters replaced by the given (already encoded) values. */
export function fillPath(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? `{${name}}`);
}
