// Prints the error table of docs/errors.md from the error catalogue: `npm run -s docs:errors`.
import { errorCatalogue } from '../src/http/error-codes';

const rows = Object.entries(errorCatalogue)
  .sort(([, a], [, b]) => a.status - b.status)
  .map(([code, { status, when }]) => `| \`${code}\` | ${status} | ${when} |`);
console.log(['| Code | HTTP status | When |', '|---|---|---|', ...rows].join('\n'));
