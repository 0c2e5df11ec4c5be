// How the operators' database commands run (npm run reconciliation, fx:result, audit): on DATABASE_URL or the
// development database, with a client of their own; the command's lines on stdout; a usage error on stderr with exit
// code 2, anything else with 1; the client closed and a cluster started here stopped either way.
import { createPrismaClient, type DatabaseClient, closeDatabaseClient } from '../../src/persistence/database';
import { prepareDatabase } from './database';

/** Wrong arguments: the message is the command's usage. */
export class CommandUsageError extends Error {}

export function runOperatorCommand(role: string, command: (prisma: DatabaseClient) => Promise<string[]>): void {
  const main = async () => {
    const { url, localCluster } = await prepareDatabase({ localDatabase: 'payments', skipMigrations: true });
    const prisma = createPrismaClient(url, { role, poolSize: 1 });
    try {
      for (const line of await command(prisma)) process.stdout.write(`${line}\n`);
    } catch (error) {
      if (!(error instanceof CommandUsageError)) throw error;
      process.stderr.write(`${error.message}\n`);
      process.exitCode = 2;
    } finally {
      await closeDatabaseClient(prisma);
      localCluster?.stopIfStartedHere();
    }
  };
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
