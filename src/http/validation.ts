// Request values checked against their schema: the NUL character refused, then zod's issues as the API's
// validation_error details (src/domain/validation.ts).
import { z } from 'zod';
import { issuesToDetails } from '../domain/validation';
import { ApiError, ValidationDetail } from './errors';

/**
 * Every place in a request value (keys included) holding the NUL character, which no text column can store:
 * refused as invalid_param instead of failing in the database. Iterative (an explicit stack, each entry naming its
 * parent), so no shape of input can exhaust the call stack; JSON bodies are also bounded in depth when parsed.
 */
export function nulCharacterDetails(value: unknown): ValidationDetail[] {
  interface Place {
    value: unknown;
    key: string | null;
    parent: Place | null;
  }
  const pathOf = (place: Place): string => {
    const keys: string[] = [];
    for (let at: Place | null = place; at && at.key !== null; at = at.parent) keys.push(at.key);
    return keys.reverse().join('.') || 'body';
  };
  const detail = (place: Place): ValidationDetail => ({
    code: 'invalid_param',
    param: pathOf(place),
    message: 'must not contain the NUL character (\\u0000)',
  });
  const details: ValidationDetail[] = [];
  const stack: Place[] = [{ value, key: null, parent: null }];
  while (stack.length > 0) {
    const place = stack.pop() as Place;
    const current = place.value;
    if (place.key?.includes('\u0000')) {
      details.push(detail(place)); // a key holding NUL: reported, its value not looked into
      continue;
    }
    if (typeof current === 'string') {
      if (current.includes('\u0000')) details.push(detail(place));
      continue;
    }
    if (!current || typeof current !== 'object' || Buffer.isBuffer(current)) continue;
    const entries: Array<[string, unknown]> = Array.isArray(current)
      ? current.map((item, index) => [String(index), item])
      : Object.entries(current as Record<string, unknown>);
    // Pushed in reverse so that the details come out in document order.
    for (let index = entries.length - 1; index >= 0; index -= 1) {
      const [key, item] = entries[index] as [string, unknown];
      stack.push({ value: item, key, parent: place });
    }
  }
  return details;
}

/** Parses input with a schema or throws a validation_error listing every problem. */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const nul = nulCharacterDetails(input);
  if (nul.length > 0) throw ApiError.validation(nul);
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw ApiError.validation(issuesToDetails(result.error.issues, input));
}
