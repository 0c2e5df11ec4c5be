// The service's FX result per currency pair over a period, for operators: what every settlement leg executed at a
// liquidity provider's firm quote gained or lost against the partner's locked rate (fx_executions; docs/fx.md).
//   npm run fx:result -- --from 2026-11-01 --to 2026-12-01     [from, to), ISO dates or times; default the last 24 h
import { parseArgs } from 'node:util';
import { createPrismaClient, type PrismaClient } from '../src/persistence/database';
import { fxResultByPair } from '../src/persistence/fx-executions';
import { prepareDatabase } from './lib/database';

export class FxResultCommandError extends Error {}

/** The JSON the command prints. */
export async function fxResultCommand(args: string[], prisma: PrismaClient, now = new Date()) {
  const { values } = parseArgs({ args, options: { from: { type: 'string' }, to: { type: 'string' } } });
  const to = values.to ? new Date(values.to) : now;
  const from = values.from ? new Date(values.from) : new Date(to.getTime() - 86_400_000);
  if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime()) || from >= to) {
    throw new FxResultCommandError('usage: npm run fx:result -- [--from <ISO date>] [--to <ISO date>] (from < to)');
  }
  return { from: from.toISOString(), to: to.toISOString(), pairs: await fxResultByPair(prisma, from, to) };
}

async function main(): Promise<void> {
  const { url, localCluster } = await prepareDatabase({ localDatabase: 'payments', skipMigrations: true });
  const prisma = createPrismaClient(url, { role: 'fx-result', poolSize: 1 });
  try {
    process.stdout.write(`${JSON.stringify(await fxResultCommand(process.argv.slice(2), prisma), null, 2)}\n`);
  } catch (error) {
    if (!(error instanceof FxResultCommandError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exitCode = 2;
  } finally {
    await prisma.$disconnect();
    localCluster?.stopIfStartedHere();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
