// How zod issues become validation_error details: missing vs invalid, with prefixes and unions.
import { z } from 'zod';
import { issuesToDetails } from '../src/domain/validation';

const detailsOf = (schema: z.ZodType, input: unknown, prefix: string[] = []) => {
  const result = schema.safeParse(input);
  if (result.success) throw new Error('expected a failure');
  return issuesToDetails(result.error.issues, input, prefix);
};

it('reports an absent enum as missing_param and a wrong one as invalid_param', () => {
  const schema = z.object({ chain: z.enum(['ethereum', 'solana']) });
  expect(detailsOf(schema, {})).toEqual([{ code: 'missing_param', param: 'chain', message: 'is required' }]);
  expect(detailsOf(schema, { chain: 'btc' })).toEqual([
    { code: 'invalid_param', param: 'chain', message: 'must be one of: "ethereum", "solana"' },
  ]);
});

it('looks values up in the input, not under the prefix, which only names the field', () => {
  const schema = z.object({ country: z.string(), side: z.enum(['FRONT', 'BACK']) });
  expect(detailsOf(schema, { country: 5, side: 'UP' }, ['metadata'])).toEqual([
    { code: 'invalid_param', param: 'metadata.country', message: 'must be a string' },
    { code: 'invalid_param', param: 'metadata.side', message: 'must be one of: "FRONT", "BACK"' },
  ]);
  expect(detailsOf(schema, {}, ['metadata'])).toEqual([
    { code: 'missing_param', param: 'metadata.country', message: 'is required' },
    { code: 'missing_param', param: 'metadata.side', message: 'is required' },
  ]);
});

it('reports the closest branch of a nested union at its full path', () => {
  const schema = z.object({
    a: z.object({ u: z.union([z.object({ x: z.string(), y: z.string() }), z.object({ z: z.number() })]) }),
  });
  expect(detailsOf(schema, { a: { u: { z: 'no' } } })).toEqual([
    { code: 'invalid_param', param: 'a.u.z', message: 'must be a number' },
  ]);
  expect(detailsOf(schema, { a: { u: { x: 1 } } })).toEqual([
    { code: 'missing_param', param: 'a.u.z', message: 'is required' },
  ]);
  expect(detailsOf(schema, { a: { u: { x: 1 } } }, ['body'])[0]?.param).toBe('body.a.u.z');
});
