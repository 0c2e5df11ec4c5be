// Validates an OpenAPI file with a standard validator (@seriousme/openapi-schema-validator, OpenAPI 3.0/3.1):
// `node scripts/validate-openapi.mjs <file>`. Prints the result as JSON; exits 1 when invalid.
// (An ES module: the validator ships only as ESM, which the CommonJS project loads from here.)
import { Validator } from '@seriousme/openapi-schema-validator';

const file = process.argv[2];
if (!file) {
  console.error('usage: node scripts/validate-openapi.mjs <openapi.json>');
  process.exit(2);
}
const result = await new Validator().validate(file);
console.log(JSON.stringify(result));
process.exit(result.valid ? 0 : 1);
