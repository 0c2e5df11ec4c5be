// Creates a partner and its API key: `npm run partner:create -- --name "Acme"`.
// Prints one line of JSON {"partner_id", "api_key"}; the key is shown only here (only its hash is stored).
import { parseArgs } from 'node:util';
import { createPrismaClient, closeDatabaseClient } from '../src/persistence/database';
import { createPartner } from '../src/services/partners';
import { prepareDatabase } from './lib/database';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { name: { type: 'string' } } });
  const name = values.name?.trim();
  if (!name) {
    console.error('usage: npm run partner:create -- --name NAME');
    process.exit(2);
  }
  const appEnv = process.env.APP_ENV === 'production' ? 'production' : 'sandbox';
  const { url, localCluster } = await prepareDatabase({ localDatabase: 'payments' });
  const prisma = createPrismaClient(url, { role: 'partner-create' });
  try {
    const created = await createPartner(prisma, name, appEnv);
    process.stdout.write(`${JSON.stringify(created)}\n`);
  } finally {
    await closeDatabaseClient(prisma);
    localCluster?.stopIfStartedHere();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
