// Registers the namespace (TEMPORAL_NAMESPACE, default `default`) with its retention and the project's search
// attributes on the Temporal server at TEMPORAL_ADDRESS, waiting for the server to answer first. Idempotent.
// docker-compose.yml's temporal-namespace service runs it; `npm run stack -- --production` calls the same function
// (scripts/lib/temporal-server.ts ensureNamespace) from its supervisor.
import { Client, Connection } from '@temporalio/client';
import { loadTemporalTls } from '../../src/config';
import { temporalTlsOptions } from '../../src/temporal/tls';
import { waitUntil } from '../lib/wait';
import { ensureNamespace, NAMESPACE, NAMESPACE_RETENTION_DAYS } from '../lib/temporal-server';

async function main(): Promise<void> {
  const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
  const namespace = process.env.TEMPORAL_NAMESPACE ?? NAMESPACE;
  let connection: Connection | undefined;
  const connected = await waitUntil(
    async () => {
      // TEMPORAL_TLS_* as the API's (docs/configuration.md): an admin client certificate on a server with mutual TLS.
      connection = await Connection.connect({ address, tls: temporalTlsOptions(loadTemporalTls(process.env)) });
      return true;
    },
    180_000,
    1000,
  );
  if (!connected || !connection) throw new Error(`no Temporal server at ${address} within 180 s`);
  try {
    await ensureNamespace(new Client({ connection, namespace }), namespace);
    console.log(
      `namespace ${namespace} ready (retention ${NAMESPACE_RETENTION_DAYS} days, search attributes registered)`,
    );
  } finally {
    await connection.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
