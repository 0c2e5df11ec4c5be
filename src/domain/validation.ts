// Turns zod issues into the validation_error details: `missing_param` when the field is
// absent, `invalid_param` for everything else, with the dotted path of the field.
import { z } from 'zod';
import type { ValidationDetail } from './errors';

type Issue = z.core.$ZodIssue;

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let current: unknown = input;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function describeExpected(expected: string): string {
  const article = /^[aeiou]/.test(expected) ? 'an' : 'a';
  return `must be ${article} ${expected}`;
}

function messageFor(issue: Issue): string {
  switch (issue.code) {
    case 'invalid_type':
      return describeExpected(issue.expected);
    case 'invalid_value':
      return `must be one of: ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
    case 'too_small':
      if (issue.origin === 'string')
        return issue.minimum === 1 ? 'must not be empty' : `must be at least ${issue.minimum} characters`;
      if (issue.origin === 'array') return `must contain at least ${issue.minimum} item(s)`;
      return `must be ${issue.inclusive ? 'at least' : 'greater than'} ${issue.minimum}`;
    case 'too_big':
      if (issue.origin === 'string') return `must be at most ${issue.maximum} characters`;
      if (issue.origin === 'array') return `must contain at most ${issue.maximum} item(s)`;
      return `must be ${issue.inclusive ? 'at most' : 'less than'} ${issue.maximum}`;
    case 'invalid_union':
      return 'options' in issue && Array.isArray(issue.options)
        ? `must be one of: ${issue.options.map((value) => JSON.stringify(value)).join(', ')}`
        : issue.message;
    case 'invalid_format':
      return issue.message.startsWith('Invalid') ? `must be a valid ${issue.format}` : issue.message;
    default:
      return issue.message;
  }
}

/**
 * `input` is the value the issues were found in; `prefix` is where that value sits in the request
 * (e.g. `metadata` for the JSON inside a multipart part), used only to name the params.
 */
export function issuesToDetails(
  issues: readonly Issue[],
  input: unknown,
  prefix: PropertyKey[] = [],
): ValidationDetail[] {
  const details: ValidationDetail[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        details.push({ code: 'invalid_param', param: [...path, key].join('.'), message: 'is not a known field' });
      }
      continue;
    }
    if (issue.code === 'invalid_union' && issue.errors.length > 0 && !('discriminator' in issue)) {
      // A plain union: report the branch whose problems are fewest (the one the caller most likely meant).
      const best = [...issue.errors].sort((a, b) => a.length - b.length)[0] ?? [];
      details.push(...issuesToDetails(best, valueAt(input, issue.path), path));
      continue;
    }
    const param = path.map(String).join('.') || 'body';
    // invalid_value: an absent enum or literal field (zod reports the value, not the type).
    const missing =
      (issue.code === 'invalid_type' || issue.code === 'invalid_union' || issue.code === 'invalid_value') &&
      valueAt(input, issue.path) === undefined;
    details.push(
      missing
        ? { code: 'missing_param', param, message: 'is required' }
        : { code: 'invalid_param', param, message: messageFor(issue) },
    );
  }
  return dedupe(details);
}

/** One detail per field: the first problem found is the one to fix first. */
function dedupe(details: ValidationDetail[]): ValidationDetail[] {
  const seen = new Set<string>();
  return details.filter((detail) => {
    const key = detail.param;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
