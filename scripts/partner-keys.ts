// API keys of partners (src/services/api-keys.ts). The environment is APP_ENV's (sandbox by default): keys made
// here work only in a deployment of that environment.
//   npm run partner:keys -- create --partner <partner id> [--label <text>]   prints the key (shown only here)
//   npm run partner:keys -- list [--partner <partner id>]                    one JSON line per key, never the key
//   npm run partner:keys -- revoke --key <key id>                            effective on the next request
import { parseArgs } from 'node:util';
import type { AppEnvironment } from '../src/config';
import {
  createPrismaClient,
  type Database,
  type DatabaseClient,
  closeDatabaseClient,
} from '../src/persistence/database';
import { ApiKeyCommandError, createApiKey, listApiKeys, revokeApiKey } from '../src/services/api-keys';
import { prepareDatabase } from './lib/database';

const usage = [
  'usage: npm run partner:keys -- create --partner <partner id> [--label <text>]',
  '       npm run partner:keys -- list [--partner <partner id>]',
  '       npm run partner:keys -- revoke --key <key id>',
].join('\n');

/** Runs one command; returns the lines to print (JSON). */
export async function partnerKeysCommand(
  argv: string[],
  db: DatabaseClient,
  appEnv: AppEnvironment,
): Promise<string[]> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { partner: { type: 'string' }, label: { type: 'string' }, key: { type: 'string' } },
  });
  const [command, ...extra] = positionals;
  if (extra.length > 0) throw new ApiKeyCommandError(usage);
  switch (command) {
    case 'create':
      if (!values.partner) throw new ApiKeyCommandError(usage);
      return [JSON.stringify(await createApiKey(db, appEnv, values.partner, values.label))];
    case 'list':
      return (await listApiKeys(db, values.partner)).map((key) => JSON.stringify(key));
    case 'revoke':
      if (!values.key) throw new ApiKeyCommandError(usage);
      return [JSON.stringify(await revokeApiKey(db, values.key))];
    default:
      throw new ApiKeyCommandError(usage);
  }
}

async function main(): Promise<void> {
  const appEnv: AppEnvironment = process.env.APP_ENV === 'production' ? 'production' : 'sandbox';
  const { url, localCluster } = await prepareDatabase({ localDatabase: 'payments', skipMigrations: true });
  const prisma = createPrismaClient(url, { role: 'partner-keys', poolSize: 1 });
  try {
    for (const line of await partnerKeysCommand(process.argv.slice(2), prisma, appEnv))
      process.stdout.write(`${line}\n`);
  } finally {
    await closeDatabaseClient(prisma);
    localCluster?.stopIfStartedHere();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof ApiKeyCommandError ? error.message : error);
    process.exit(error instanceof ApiKeyCommandError ? 2 : 1);
  });
}
