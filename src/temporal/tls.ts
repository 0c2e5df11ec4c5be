// Mutual TLS to the Temporal frontend (TEMPORAL_TLS_*, docs/configuration.md): the files are read once, at
// connection time, so a rotated certificate takes effect on the process's next start (docs/operations.md).
import type { TLSConfig } from '@temporalio/common/lib/internal-non-workflow';
import { readFileSync } from 'node:fs';
import type { TemporalTlsFiles } from '../config';

/** The SDK's `tls` option (client and worker alike); undefined keeps plaintext (npm run dev, tests). */
export function temporalTlsOptions(files: TemporalTlsFiles | null | undefined): TLSConfig | undefined {
  if (!files) return undefined;
  return {
    ...(files.serverName ? { serverNameOverride: files.serverName } : {}),
    ...(files.caCertFile ? { serverRootCACertificate: readFileSync(files.caCertFile) } : {}),
    clientCertPair: { crt: readFileSync(files.certFile), key: readFileSync(files.keyFile) },
  };
}
