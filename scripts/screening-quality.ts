// npm run screening:quality: recall, false-positive rate, latency per name and memory of the loaded lists, as JSON
// (scripts/lib/screening-quality.ts; figures in docs/screening.md).
import { measureQuality } from './lib/screening-quality';

void measureQuality().then((report) => {
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
});
