// The service's FX result per currency pair over a period, for operators: what every settlement leg executed at a
// liquidity provider's firm quote gained or lost against the partner's locked rate (fx_executions; docs/fx.md).
//   npm run fx:result -- --from 2026-11-01 --to 2026-12-01     [from, to), ISO dates or times; default the last 24 h
import { parseArgs } from 'node:util';
import type { DatabaseClient } from '../src/persistence/database';
import { fxResultByPair } from '../src/persistence/fx-executions';
import { CommandUsageError, runOperatorCommand } from './lib/operator-command';

export class FxResultCommandError extends CommandUsageError {}

/** The JSON the command prints. */
export async function fxResultCommand(args: string[], prisma: DatabaseClient, now = new Date()) {
  const { values } = parseArgs({ args, options: { from: { type: 'string' }, to: { type: 'string' } } });
  const to = values.to ? new Date(values.to) : now;
  const from = values.from ? new Date(values.from) : new Date(to.getTime() - 86_400_000);
  if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime()) || from >= to) {
    throw new FxResultCommandError('usage: npm run fx:result -- [--from <ISO date>] [--to <ISO date>] (from < to)');
  }
  return { from: from.toISOString(), to: to.toISOString(), pairs: await fxResultByPair(prisma, from, to) };
}

if (require.main === module) {
  runOperatorCommand('fx-result', async (prisma) => [
    JSON.stringify(await fxResultCommand(process.argv.slice(2), prisma), null, 2),
  ]);
}
