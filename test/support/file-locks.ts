// A lock that test files running side by side on the shared database take when one of them changes rows that are not
// its own: the events retention purge deletes every event older than its cutoff, whichever file made it, so the two
// files that purge (maintenance, database-roles) would each delete the other's old events mid-test.
import { Client } from 'pg';

export type FileLockName = 'events-purge';

/** Waits for the PostgreSQL advisory lock `name` on a connection of its own; the returned function releases it. */
export async function holdFileLock(databaseUrl: string, name: FileLockName): Promise<() => Promise<void>> {
  const client = new Client({ connectionString: databaseUrl, application_name: `test-lock-${name}` });
  await client.connect();
  await client.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
  return async () => {
    // Ending the session releases its advisory locks.
    await client.end();
  };
}
