// The TypeScript entry points that tests and chaos start over and over (the API, the worker, the test worker, the
// bank simulator, the OIDC provider), bundled once per run into plain JavaScript (esbuild) with the packages they
// use, but those below. A process started from its bundle loads the app in half the CPU of `node --import tsx` (which
// resolves and looks up the transpiled code of every project module on each start) and with less memory, and Node's
// loader does not resolve, read and wrap each package's modules one by one: a suite or a chaos run starts such
// processes dozens of times. tsEntry uses a bundle when the run prepared one
// (ENTRY_BUNDLES_DIR, inherited by jest's workers), and tsx otherwise (`npm run dev`, the bench, a single script).
import { build, type Plugin } from 'esbuild';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from './paths';

/** The entry points bundled, relative to the project. */
export const BUNDLED_ENTRIES = [
  'src/server.ts',
  'src/worker.ts',
  'test/support/worker-process.ts',
  'simulators/bank/main.ts',
  'scripts/production/oidc-provider.ts',
] as const;

const ENV = 'ENTRY_BUNDLES_DIR';

/** A module's `__dirname` and `__filename` as where its source lies, so that files found beside it still are. */
const sourceLocations: Plugin = {
  name: 'source-locations',
  setup(builder) {
    builder.onLoad({ filter: /\.ts$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      if (!/\b__(dirname|filename)\b/.test(source)) return undefined;
      const contents = source
        .replace(/\b__dirname\b/g, JSON.stringify(path.dirname(args.path)))
        .replace(/\b__filename\b/g, JSON.stringify(args.path));
      return { contents, loader: 'ts' };
    });
  },
};

/**
 * Packages the bundles load from node_modules: those that load files beside their own by path, which a bundle moves
 * (the Temporal SDK: its native core, the workflow worker thread's code, its bundler; xmllint-wasm's and pino's worker
 * threads; Prisma's query compiler), and what OpenTelemetry instruments by hooking `require` (pg), with OpenTelemetry.
 */
const EXTERNAL_PACKAGES = [
  '@temporalio/*',
  '@prisma/*',
  'xmllint-wasm',
  'pino',
  '@opentelemetry/*',
  'pg',
  'pg-pool',
  'pg-native',
];

const bundleName = (entry: string) => `${entry.replace(/\.ts$/, '').replace(/[/\\]/g, '__')}.js`;

/**
 * Bundles every entry into `dir` (written under other names and renamed, so that a reader never sees half a file)
 * and sets ENTRY_BUNDLES_DIR for this process and those it starts.
 */
export async function prepareEntryBundles(dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const staging = path.join(dir, `staging-${process.pid}`);
  await build({
    entryPoints: BUNDLED_ENTRIES.map((entry) => ({
      in: path.join(projectRoot, entry),
      out: bundleName(entry).replace(/\.js$/, ''),
    })),
    outdir: staging,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node24',
    external: EXTERNAL_PACKAGES,
    sourcemap: 'linked',
    logLevel: 'error',
    plugins: [sourceLocations],
  });
  for (const entry of BUNDLED_ENTRIES) {
    const name = bundleName(entry);
    renameSync(path.join(staging, `${name}.map`), path.join(dir, `${name}.map`));
    renameSync(path.join(staging, name), path.join(dir, name));
  }
  rmSync(staging, { recursive: true, force: true });
  process.env[ENV] = dir;
  // Node's cache of compiled code, shared by the processes started from the bundles (and by whatever else this
  // process starts): each start after the first skips compiling the bundle and the packages it loads.
  process.env.NODE_COMPILE_CACHE = path.join(dir, 'compile-cache');
}

/** The run's bundle of `entry` (relative to the project, or absolute), or undefined. */
function entryBundle(entry: string): string | undefined {
  const dir = process.env[ENV];
  if (!dir) return undefined;
  const relative = path.relative(projectRoot, path.resolve(projectRoot, entry));
  if (!(BUNDLED_ENTRIES as readonly string[]).includes(relative)) return undefined;
  const bundle = path.join(dir, bundleName(relative));
  return existsSync(bundle) ? bundle : undefined;
}

/** Node flags for every process started from the run's bundles (ENTRY_BUNDLE_NODE_ARGS, which `npm test` sets). */
function bundleNodeArgs(): string[] {
  return (process.env.ENTRY_BUNDLE_NODE_ARGS ?? '').split(' ').filter(Boolean);
}

/** The command line of a TypeScript entry point of this repository. */
export function tsEntry(entry: string, nodeArgs: string[] = []): { command: string; args: string[] } {
  // The run's bundle of it when there is one (above), else `--import tsx`, which keeps the script in this
  // very process: a signal reaches the process itself, not a wrapper (the tsx CLI would add a parent process), and
  // the bench measures the process that does the work.
  const bundle = entryBundle(entry);
  if (bundle) return { command: process.execPath, args: [...bundleNodeArgs(), ...nodeArgs, bundle] };
  return { command: process.execPath, args: [...nodeArgs, '--import', 'tsx', entry] };
}
