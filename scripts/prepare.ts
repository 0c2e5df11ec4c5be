// Prepares what the service needs before it starts: the Prisma client, the database and its schema.
// Used by `npm run dev` and `npm test`; `npm run db:migrate` runs it alone.
import { generatePrismaClient, prepareDatabase } from './lib/database';

async function main(): Promise<void> {
  await generatePrismaClient();
  const { url, localCluster } = await prepareDatabase({ localDatabase: 'payments' });
  console.error(`database ready: ${url}`);
  localCluster?.stopIfStartedHere();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
