// Schema-valid requests drawn from an OpenAPI description, operation by operation, for the contract test
// (test/contract.test.ts). Path parameters and `*_id` fields mix real ids of the partner's resources with
// generated values, so that requests also get past the lookups.
import fc from 'fast-check';
import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { arbitraryFor, GeneratorContext } from './schema-arbitrary';

export type Schema = Record<string, unknown>;
export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Schema;
}
export interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  security?: unknown[];
  responses: Record<string, unknown>;
}
export interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

export interface GeneratedRequest {
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body?: unknown;
  contentType?: string;
}

/** Which resource's ids a path parameter or body field takes. */
const resourceOfSegment: Record<string, string> = {
  customers: 'customer',
  'external-accounts': 'external_account',
  wallets: 'wallet',
  'wallet-transfers': 'wallet_transfer',
  'virtual-accounts': 'virtual_account',
  quotes: 'quote',
  transactions: 'transaction',
  'webhook-configs': 'webhook_config',
  events: 'event',
};
const resourceOfField = (name: string): string | undefined =>
  ({ from_wallet_id: 'wallet', to_wallet_id: 'wallet', event_resource_id: 'customer' })[name] ??
  (name.endsWith('_id') ? name.slice(0, -3) : undefined);

function resourceOfPathParam(template: string, name: string): string | undefined {
  const segments = template.split('/');
  const index = segments.indexOf(`{${name}}`);
  return resourceOfSegment[segments[index - 1] ?? ''];
}

/** How many candidates are drawn per valid request, first and then at most: generation is bounded, never a loop. */
const CANDIDATE_DRAWS = [2, 6, 30];

function resolveRef(schema: Schema, document: Document): Schema {
  const ref = schema.$ref;
  return typeof ref === 'string'
    ? (document.components.schemas[ref.replace('#/components/schemas/', '')] ?? {})
    : schema;
}

export class RequestGenerator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false });
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(
    private readonly document: Document,
    private readonly formatValues: Record<string, readonly string[]>,
    /** Real ids by resource (`customer`, `wallet`, ...); grows as the test creates resources. */
    readonly ids: Record<string, string[]>,
  ) {
    addFormats(this.ajv);
    for (const format of Object.keys(formatValues)) this.ajv.addFormat(format, true);
    this.ajv.addSchema({ components: document.components }, 'description');
  }

  /** A validator of one schema of the description ($refs resolved against its components). */
  validatorFor(schema: Schema): ValidateFunction {
    const text = JSON.stringify(schema).replace(/"#\/components\//g, '"description#/components/');
    if (!this.validators.has(text)) this.validators.set(text, this.ajv.compile(JSON.parse(text) as Schema));
    return this.validators.get(text)!;
  }

  private context(): GeneratorContext {
    return {
      document: this.document,
      formatValues: this.formatValues,
      propertyValues: (name) => {
        const resource = resourceOfField(name);
        return resource ? this.ids[resource] : undefined;
      },
    };
  }

  /**
   * Draws up to `count` schema-valid requests for one operation (the same ones for the same seed): candidates come
   * from the schemas, and only those every parameter's and the body's schema accept are kept.
   */
  generateRequests(template: string, operation: Operation, count: number, seed: number): GeneratedRequest[] {
    const context = this.context();
    const parts: Record<string, fc.Arbitrary<unknown>> = {};
    const checks: Array<(drawn: Record<string, unknown>) => boolean> = [];
    for (const parameter of operation.parameters ?? []) {
      const key = `${parameter.in}:${parameter.name}`;
      const resource = parameter.in === 'path' ? resourceOfPathParam(template, parameter.name) : undefined;
      const known = resource ? (this.ids[resource] ?? []) : [];
      const generated = arbitraryFor(parameter.schema, context);
      if (!generated) throw new Error(`${operation.operationId}: cannot generate parameter ${parameter.name}`);
      const valid = this.validatorFor(parameter.schema);
      const arbitrary = known.length > 0 ? fc.oneof(fc.constantFrom(...known), generated) : generated;
      parts[key] = parameter.required ? arbitrary : fc.option(arbitrary, { nil: undefined });
      checks.push((drawn) => drawn[key] === undefined || valid(drawn[key]));
    }
    const [contentType, media] = Object.entries(operation.requestBody?.content ?? {})[0] ?? [];
    if (media) {
      const generated = arbitraryFor(media.schema, context);
      if (!generated) throw new Error(`${operation.operationId}: cannot generate a body`);
      const valid = this.validatorFor(media.schema);
      parts.body = generated;
      checks.push((drawn) => valid(drawn.body));
      // contentSchema is only an annotation to validators: the JSON inside such a part is checked here.
      const properties = (resolveRef(media.schema, this.document).properties ?? {}) as Record<string, Schema>;
      for (const [name, property] of Object.entries(properties)) {
        if (property.contentMediaType !== 'application/json' || !property.contentSchema) continue;
        const validContent = this.validatorFor(property.contentSchema as Schema);
        checks.push((drawn) => {
          const text = (drawn.body as Record<string, unknown> | undefined)?.[name];
          return typeof text !== 'string' || validContent(JSON.parse(text));
        });
      }
    }
    // A seed's candidates are one sequence whatever their number, so a short draw is the start of a long one: drawing
    // more only when the first ones hold too few valid requests keeps the requests the long draw would give.
    let drawn: Array<Record<string, unknown>> = [];
    for (const candidates of CANDIDATE_DRAWS) {
      drawn = fc
        .sample(fc.record(parts), { seed, numRuns: count * candidates })
        .filter((candidate) => checks.every((check) => check(candidate)));
      if (drawn.length >= count) break;
    }
    return drawn.slice(0, count).map((values) => {
      const request: GeneratedRequest = { path: template, query: {}, headers: {}, contentType };
      for (const [key, value] of Object.entries(values)) {
        if (value === undefined) continue;
        if (key === 'body') {
          request.body = value;
          continue;
        }
        const [where, name] = key.split(':') as [string, string];
        if (where === 'path') request.path = request.path.replace(`{${name}}`, encodeURIComponent(String(value)));
        if (where === 'query') request.query[name] = String(value);
        if (where === 'header') request.headers[name] = String(value);
      }
      return request;
    });
  }
}
