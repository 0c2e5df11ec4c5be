// `npm run chaos [-- --quick] [-- --only api-kill,fuzz] [-- --seed N] [-- --engine server]`: kills, restarts and fuzzes the real
// processes (docs/chaos.md). One summary line per scenario; exits non-zero when any scenario failed.
// Everything runs on loopback; every loop is bounded in count and time, and each scenario has a time limit.
import { generatePrismaClientIfStale } from '../lib/database';
import { RunSize, ScenarioReport } from './report';
import type { ChaosEngine, ChaosSystem } from './system';

type ScenarioRun = (system: ChaosSystem, report: ScenarioReport, size: RunSize) => Promise<void>;

interface Scenario {
  number: number;
  name: string;
  /**
   * Loaded only when it runs: scenarios import the system, which loads the Prisma client, and that must be the
   * client generated at the start of the run (a checkout whose schema moved on would otherwise run a stale one).
   */
  load(): Promise<ScenarioRun>;
  /** Time limit of the full size; the quick size gets a third of it. */
  limitSeconds: number;
}

/** In the order they run: steady-state checks first, then the ones that break processes. */
const scenarios: Scenario[] = [
  { number: 5, name: 'fuzz', load: async () => (await import('./scenarios/fuzz')).fuzzScenario, limitSeconds: 1200 },
  {
    number: 7,
    name: 'isolation',
    load: async () => (await import('./scenarios/isolation')).isolationScenario,
    limitSeconds: 600,
  },
  {
    number: 1,
    name: 'worker-kill',
    load: async () => (await import('./scenarios/worker-kill')).workerKillScenario,
    limitSeconds: 900,
  },
  {
    number: 2,
    name: 'api-kill',
    load: async () => (await import('./scenarios/api-kill')).apiKillScenario,
    limitSeconds: 900,
  },
  {
    number: 3,
    name: 'webhook-outage',
    load: async () => (await import('./scenarios/webhook-outage')).webhookOutageScenario,
    limitSeconds: 900,
  },
  {
    number: 4,
    name: 'outages',
    load: async () => (await import('./scenarios/outages')).outagesScenario,
    limitSeconds: 900,
  },
  {
    number: 8,
    name: 'chain',
    load: async () => (await import('./scenarios/chain')).chainScenario,
    limitSeconds: 600,
  },
  {
    number: 9,
    name: 'chain-reorg',
    load: async () => (await import('./scenarios/chain-reorg')).chainReorgScenario,
    limitSeconds: 600,
  },
  {
    number: 10,
    name: 'bank',
    load: async () => (await import('./scenarios/bank')).bankScenario,
    limitSeconds: 900,
  },
  {
    number: 11,
    name: 'fx-band-jump',
    load: async () => (await import('./scenarios/fx')).fxBandJumpScenario,
    limitSeconds: 900,
  },
  {
    number: 12,
    name: 'fx-quotes-down',
    load: async () => (await import('./scenarios/fx')).fxQuotesDownScenario,
    limitSeconds: 300,
  },
  {
    number: 13,
    name: 'pix-webhook',
    load: async () => (await import('./scenarios/fx')).pixWebhookScenario,
    limitSeconds: 900,
  },
  {
    number: 14,
    name: 'chain-legs',
    load: async () => (await import('./scenarios/chain-legs')).chainLegsScenario,
    limitSeconds: 600,
  },
];

const runStarted = Date.now();
function log(message: string): void {
  console.error(`[chaos ${((Date.now() - runStarted) / 1000).toFixed(1)}s] ${message}`);
}

function parseArgs(argv: string[]): { quick: boolean; only: string[] | null; seed: number; engine: ChaosEngine } {
  const valueOf = (flag: string) => {
    const inline = argv.find((arg) => arg.startsWith(`${flag}=`));
    if (inline) return inline.slice(flag.length + 1);
    const index = argv.indexOf(flag);
    return index >= 0 ? argv[index + 1] : undefined;
  };
  const only = valueOf('--only');
  const seed = valueOf('--seed');
  const engine = argv.includes('--production') ? 'server' : (valueOf('--engine') ?? 'dev');
  if (engine !== 'dev' && engine !== 'server') throw new Error(`--engine takes dev or server, not ${engine}`);
  return {
    engine,
    quick: argv.includes('--quick'),
    only: only ? only.split(',').map((name) => name.trim()) : null,
    seed: seed !== undefined ? Number(seed) : Math.floor(Math.random() * 2 ** 31),
  };
}

function withinLimit<T>(work: Promise<T>, seconds: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not finish within its limit of ${seconds} s`)), seconds * 1000);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const unknown = args.only?.filter((name) => !scenarios.some((scenario) => scenario.name === name)) ?? [];
  if (unknown.length > 0) {
    log(`unknown scenario(s) ${unknown.join(', ')}; known: ${scenarios.map((scenario) => scenario.name).join(', ')}`);
    return 2;
  }
  const started = Date.now();
  const size: RunSize = { quick: args.quick, seed: args.seed };
  log(
    `${args.quick ? 'quick' : 'full'} run on the ${args.engine === 'server' ? 'Temporal server' : 'dev server'}, seed ${args.seed} (repeat with --seed ${args.seed})`,
  );
  await generatePrismaClientIfStale();
  // Imported only now: the system loads the Prisma client, which must be the one just generated.
  const { ChaosSystem: System } = await import('./system');
  const system = await System.start(log, args.engine);
  const reports: ScenarioReport[] = [];
  try {
    for (const scenario of scenarios) {
      if (args.only && !args.only.includes(scenario.name)) continue;
      const report = new ScenarioReport(scenario.number, scenario.name);
      reports.push(report);
      log(`scenario ${scenario.number} ${scenario.name} ...`);
      const limit = args.quick ? Math.ceil(scenario.limitSeconds / 3) : scenario.limitSeconds;
      try {
        const run = await scenario.load();
        await withinLimit(run(system, report, size), limit);
      } catch (error) {
        report.fail(`scenario stopped: ${(error as Error).stack ?? String(error)}`);
      }
      for (const exit of system.takeUnexpectedExits()) report.fail(exit);
      // A scenario leaves every process running for the next one.
      for (const process of [system.temporalServer, system.api, ...system.workers]) {
        if (!process.running) {
          report.fail(`${process.name} was left stopped; starting it for the next scenario`);
          await process.start();
        }
      }
      console.log(report.line());
      for (const failure of report.failures) console.log(`    ${failure.split('\n').join('\n    ')}`);
      if (report.failureCount > report.failures.length)
        console.log(`    ... and ${report.failureCount - report.failures.length} more`);
    }
  } finally {
    await system.stop();
  }
  const failed = reports.filter((report) => report.failureCount > 0);
  log(
    `${reports.length} scenario(s), ${failed.length} failed, in ${((Date.now() - started) / 1000).toFixed(1)} s ` +
      `(seed ${args.seed}; logs in .data/chaos/logs)`,
  );
  return failed.length === 0 ? 0 : 1;
}

main()
  .then((code) => process.exit(code))
  .catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
