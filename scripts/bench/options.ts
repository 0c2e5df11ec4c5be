// Options of `npm run bench` (see scripts/bench/index.ts).
import os from 'node:os';

export interface BenchOptions {
  quick: boolean;
  /** The API and the worker from `npm run build` (as production runs them; the default), or from sources (--tsx). */
  dist: boolean;
  profile: boolean;
  /** Metrics served and every span exported by the API and the workers (BenchStack's Runtime.telemetry). */
  telemetry: boolean;
  /** Sections to run (default read, quote, settlement (with the ceiling and the 2-worker run); scale only when named). */
  only: Set<string>;
  attach: boolean;
  /** The Temporal engine: the CLI's dev server (default) or the production topology's Temporal server on PostgreSQL. */
  engine: 'dev' | 'server';
  settlements: number;
  concurrency: number;
  durationMs: number;
  warmupMs: number;
  rounds: number;
  pollMs: number;
  partners: number;
  /** Scale section: transactions and events of the large partner (the small one has 1,000). */
  scaleRows: number;
  /**
   * Scale section: closed loops per read. 2 by default: at 8 (the measurement) a read's p99 is the API's
   * queue behind one stall of a shared 2-core machine, and the ratios of two p99s mostly measure those stalls.
   */
  scaleConcurrency: number;
}

export function parseOptions(argv: string[]): BenchOptions {
  const flag = (name: string) => argv.includes(`--${name}`);
  const value = (name: string): number | undefined => {
    const index = argv.indexOf(`--${name}`);
    if (index < 0) return undefined;
    const parsed = Number(argv[index + 1]);
    if (!Number.isFinite(parsed) || parsed <= 0) throw new Error(`--${name} needs a positive number`);
    return parsed;
  };
  const sections = ['read', 'quote', 'settlement', 'scale'];
  // The scale section seeds millions of rows: it runs when named only.
  const byDefault = ['read', 'quote', 'settlement'];
  const onlyIndex = argv.indexOf('--only');
  const only = new Set(onlyIndex >= 0 ? (argv[onlyIndex + 1] ?? '').split(',') : byDefault);
  for (const section of only) if (!sections.includes(section)) throw new Error(`--only takes ${sections.join(',')}`);
  const known = new Set([
    'only',
    'quick',
    'dist',
    'tsx',
    'profile',
    'telemetry',
    'attach',
    'settlements',
    'concurrency',
    'duration',
    'rounds',
    'poll-ms',
    'engine',
    'rows',
  ]);
  for (const arg of argv) {
    if (arg.startsWith('--') && !known.has(arg.slice(2))) throw new Error(`unknown option ${arg}`);
  }
  const quick = flag('quick');
  const engineIndex = argv.indexOf('--engine');
  const engine = engineIndex >= 0 ? argv[engineIndex + 1] : 'dev';
  if (engine !== 'dev' && engine !== 'server') throw new Error('--engine takes dev or server');
  return {
    quick,
    dist: !flag('tsx'),
    profile: flag('profile'),
    telemetry: flag('telemetry'),
    only,
    attach: flag('attach'),
    engine,
    settlements: value('settlements') ?? (quick ? 150 : 500),
    concurrency: value('concurrency') ?? 16,
    durationMs: (value('duration') ?? (quick ? 5 : 12)) * 1000,
    warmupMs: quick ? 1000 : 2000,
    rounds: value('rounds') ?? (quick ? 2 : 3),
    pollMs: value('poll-ms') ?? 100,
    partners: 4,
    scaleRows: value('rows') ?? (quick ? 100_000 : 1_000_000),
    scaleConcurrency: value('concurrency') ?? 2,
  };
}

export const machineLoad = () => os.loadavg().map((load) => Math.round(load * 100) / 100);
