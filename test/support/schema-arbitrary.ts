// Generates values from the JSON Schemas of an OpenAPI 3.1 description with fast-check: the contract test sends
// them as a partner's property-based tester would. Covers the keywords the description uses (types, enum/const,
// pattern, formats, lengths and bounds, oneOf/anyOf/allOf, dependentRequired, not); every value is then checked
// against the schema with ajv, so only schema-valid values come out. Formats beyond JSON Schema's own (documented in
// the description's info) are drawn from `formatValues`, filtered by the schema's pattern and lengths.
import fc from 'fast-check';

type Schema = Record<string, unknown>;

export interface GeneratorContext {
  document: { components?: { schemas?: Record<string, Schema> } };
  /** Valid values of the custom formats (`iban`, `phone`, ...), the way schemathesis is given format strategies. */
  formatValues: Record<string, readonly string[]>;
  /** Values for properties whose name matches (e.g. real ids for `customer_id`), mixed with generated ones. */
  propertyValues?: (name: string) => readonly string[] | undefined;
}

const MAX_DEPTH = 12;

function resolve(schema: Schema, context: GeneratorContext): Schema {
  let current = schema;
  for (let hops = 0; typeof current.$ref === 'string' && hops < 20; hops += 1) {
    const name = current.$ref.replace('#/components/schemas/', '');
    const { $ref: _ignored, ...rest } = current;
    current = { ...(context.document.components?.schemas?.[name] ?? {}), ...rest };
  }
  return current;
}

/** Merges two schemas that must both hold (allOf, a oneOf branch with its base), for generation only. */
function merge(base: Schema, extra: Schema, context: GeneratorContext): Schema {
  const a = resolve(base, context);
  const b = resolve(extra, context);
  const merged: Schema = { ...a, ...b };
  if (a.properties || b.properties) {
    const properties: Record<string, Schema> = { ...((a.properties as Record<string, Schema>) ?? {}) };
    for (const [key, value] of Object.entries((b.properties as Record<string, Schema>) ?? {})) {
      properties[key] = properties[key] ? merge(properties[key], value, context) : value;
    }
    merged.properties = properties;
  }
  if (a.required || b.required) {
    merged.required = [...new Set([...((a.required as string[]) ?? []), ...((b.required as string[]) ?? [])])];
  }
  if (a.pattern && b.pattern && a.pattern !== b.pattern) merged.allOfPatterns = [a.pattern, b.pattern];
  return merged;
}

/** fast-check generates from a regex without lookarounds; those are left to the final schema check. */
function generable(pattern: string): RegExp {
  return new RegExp(pattern.replace(/\(\?[=!][^()]*(\([^()]*\)[^()]*)*\)/g, ''));
}

function matchesLengths(value: string, schema: Schema): boolean {
  const length = [...value].length;
  return (
    length >= ((schema.minLength as number) ?? 0) &&
    length <= ((schema.maxLength as number) ?? Infinity) &&
    [schema.pattern, ...((schema.allOfPatterns as string[]) ?? [])]
      .filter((pattern): pattern is string => typeof pattern === 'string')
      .every((pattern) => new RegExp(pattern, 'u').test(value))
  );
}

/** Building a pattern's arbitrary walks the regex each time; arbitraries are immutable, so one per pattern serves all. */
const patternArbitraries = new Map<string, fc.Arbitrary<string>>();
function patternArbitrary(pattern: string): fc.Arbitrary<string> {
  let arbitrary = patternArbitraries.get(pattern);
  if (!arbitrary) patternArbitraries.set(pattern, (arbitrary = fc.stringMatching(generable(pattern))));
  return arbitrary;
}

function stringArbitrary(schema: Schema, context: GeneratorContext): fc.Arbitrary<string> | null {
  const format = schema.format as string | undefined;
  if (format && context.formatValues[format]) {
    const values = context.formatValues[format].filter((value) => matchesLengths(value, schema));
    return values.length > 0 ? fc.constantFrom(...values) : null;
  }
  if (schema.contentMediaType === 'application/json' && schema.contentSchema) {
    const inner = arbitraryFor(schema.contentSchema as Schema, context, 0);
    return inner ? inner.map((value) => JSON.stringify(value)) : null;
  }
  const minLength = (schema.minLength as number) ?? 0;
  const maxLength = Math.min((schema.maxLength as number) ?? 40, minLength + 40);
  let base: fc.Arbitrary<string>;
  if (typeof schema.pattern === 'string') base = patternArbitrary(schema.pattern);
  else if (format === 'email') base = fc.emailAddress();
  else if (format === 'uuid') base = fc.uuid();
  else if (format === 'date') base = fc.date({ noInvalidDate: true }).map((date) => date.toISOString().slice(0, 10));
  else if (format === 'date-time') base = fc.date({ noInvalidDate: true }).map((date) => date.toISOString());
  else if (format === 'uri') base = fc.webUrl();
  else base = fc.string({ minLength, maxLength, unit: 'grapheme' });
  // Truncated to maxLength in code points (JSON Schema's unit); anything else wrong is left to the schema check.
  const max = schema.maxLength as number | undefined;
  return max === undefined ? base : base.map((value) => [...value].slice(0, max).join(''));
}

/** An arbitrary of values valid for `schema` (mostly: the caller checks them with ajv), or null when it has none. */
export function arbitraryFor(input: Schema, context: GeneratorContext, depth = 0): fc.Arbitrary<unknown> | null {
  if (depth > MAX_DEPTH) return null;
  let schema = resolve(input, context);
  if (Array.isArray(schema.allOf)) {
    const { allOf, ...rest } = schema;
    schema = (allOf as Schema[]).reduce((merged, part) => merge(merged, part, context), rest as Schema);
  }
  for (const keyword of ['oneOf', 'anyOf'] as const) {
    if (Array.isArray(schema[keyword])) {
      const { [keyword]: branches, ...rest } = schema;
      const arbitraries = (branches as Schema[])
        .map((branch) => arbitraryFor(merge(rest as Schema, branch, context), context, depth + 1))
        .filter((arbitrary): arbitrary is fc.Arbitrary<unknown> => arbitrary !== null);
      return arbitraries.length > 0 ? fc.oneof(...arbitraries) : null;
    }
  }
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.length > 0 ? fc.constantFrom(...schema.enum) : null;
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string | undefined];
  const options = types
    .map((type) => typedArbitrary(type, schema, context, depth))
    .filter((arbitrary): arbitrary is fc.Arbitrary<unknown> => arbitrary !== null);
  return options.length > 0 ? fc.oneof(...options) : null;
}

function typedArbitrary(
  type: string | undefined,
  schema: Schema,
  context: GeneratorContext,
  depth: number,
): fc.Arbitrary<unknown> | null {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number':
      return fc.integer({
        min: (schema.minimum as number) ?? -1000,
        max: (schema.maximum as number) ?? 1_000_000,
      });
    case 'string':
      return stringArbitrary(schema, context);
    case 'array': {
      const item = arbitraryFor((schema.items as Schema) ?? {}, context, depth + 1);
      if (!item) return (schema.minItems ?? 0) === 0 ? fc.constant([]) : null;
      const minLength = (schema.minItems as number) ?? 0;
      return fc.array(item, { minLength, maxLength: Math.min((schema.maxItems as number) ?? 3, minLength + 3) });
    }
    case 'object':
    case undefined: {
      if (type === undefined && !schema.properties) return null;
      const properties = (schema.properties as Record<string, Schema>) ?? {};
      const required = new Set((schema.required as string[]) ?? []);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, property] of Object.entries(properties)) {
        let arbitrary = arbitraryFor(property, context, depth + 1);
        const known = context.propertyValues?.(name);
        if (known && known.length > 0) {
          arbitrary = arbitrary ? fc.oneof(fc.constantFrom(...known), arbitrary) : fc.constantFrom(...known);
        }
        if (!arbitrary) {
          if (required.has(name)) return null;
          continue;
        }
        record[name] = arbitrary;
      }
      return fc.record(record, { requiredKeys: [...required].filter((name) => name in record) });
    }
    default:
      return null;
  }
}
