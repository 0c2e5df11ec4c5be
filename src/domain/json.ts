// How deep a JSON value may nest, checked on its text before it is parsed (request bodies, a document's metadata).

/**
 * Deepest nesting of arrays and objects accepted in a JSON body (the body itself is level 1); deeper ones answer 400
 * invalid_json. The deepest request of the API is 4 levels (a business customer's beneficiaries[].address.country):
 * 32 leaves ample room for growth while keeping every walk of a request value shallow.
 */
export const MAX_JSON_DEPTH = 32;

const OPEN_BRACKET = 0x5b; // [
const OPEN_BRACE = 0x7b; // {
const CLOSE_BRACKET = 0x5d; // ]
const CLOSE_BRACE = 0x7d; // }
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * True when JSON text nests arrays and objects deeper than `maxDepth` (brackets inside strings do not count). One
 * pass over the text, no allocation; text that is not JSON is left to the parser to refuse.
 */
export function jsonNestsDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === BACKSLASH) index += 1;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      depth += 1;
      if (depth > maxDepth) return true;
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) {
      depth -= 1;
    }
  }
  return false;
}
