// Makes the development CA and the certificates of mutual TLS to Temporal (scripts/lib/tls.ts) in a folder:
//   npx tsx scripts/production/temporal-certificates.ts [folder] [server host ...]
// Default folder .data/production/tls (what `npm run stack -- --production` uses). Present files are kept: delete
// one client's pair to reissue it, or the CA's to start over (docs/operations.md "Temporal behind mutual TLS").
import path from 'node:path';
import { projectRoot } from '../lib/paths';
import { ensureTemporalCertificates, TEMPORAL_SERVER_NAME } from '../lib/tls';

const [folder, ...hosts] = process.argv.slice(2);
const files = ensureTemporalCertificates(
  path.resolve(folder ?? path.join(projectRoot, '.data', 'production', 'tls')),
  hosts.length > 0 ? [TEMPORAL_SERVER_NAME, ...hosts] : undefined,
);
console.log(JSON.stringify(files, null, 2));
