// `npm run test:repeat -- N [--load] [--no-typecheck] [jest arguments]`: type-checks once, then runs the suite
// (scripts/test.ts: a fresh test database each run) N times and prints, for every test that failed at least once,
// in how many of the N runs it failed: a measure of flakiness. `--load` keeps every core busy meanwhile, as on a
// loaded CI machine. Each run's jest results stay in .data/test-repeat/run-<k>.json, the table in summary.json.
// Exits 1 when any run failed.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from './lib/paths';
import { prepareTools, runSuite } from './test';

const outputDir = path.join(projectRoot, '.data', 'test-repeat');
/** The name standing for the file itself when its suite failed outside any test (compile error, a hook's error). */
const SUITE_LEVEL = '(suite failed to run, or a hook failed)';
/** The name standing for a jest run that failed without a failing file (its results missing, or its exit code). */
const JEST_LEVEL = '(jest)';
const USAGE = 'usage: npm run test:repeat -- N [--load] [--no-typecheck] [jest arguments]';

function log(message: string): void {
  console.log(`[test:repeat] ${message}`);
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

interface Options {
  runs: number;
  load: boolean;
  typecheck: boolean;
  jestArgs: string[];
}

function parseArgs(args: string[]): Options | string {
  const [count, ...rest] = args;
  const runs = Number(count);
  if (!count || !Number.isInteger(runs) || runs < 1) return `the first argument must be the number of runs\n${USAGE}`;
  const jestArgs = rest.filter((arg) => arg !== '--load' && arg !== '--no-typecheck');
  const reserved = jestArgs.find((arg) => /^--(json|outputFile|watch|watchAll)(=|$)/.test(arg));
  if (reserved) return `${reserved} is set by test:repeat itself (or cannot repeat)\n${USAGE}`;
  return { runs, load: rest.includes('--load'), typecheck: !rest.includes('--no-typecheck'), jestArgs };
}

/**
 * One busy-looping process per core, at normal priority. Each checks now and then that this process is still its
 * parent and exits otherwise, so none outlives a run that was killed before it could stop them.
 */
function startLoad(): { count: number; stop(): void } {
  const spin = 'const p=process.ppid;for(let i=0;;i++){if(i===1e8){i=0;if(process.ppid!==p)process.exit()}}';
  const spinners: ChildProcess[] = [];
  for (let core = 0; core < os.availableParallelism(); core += 1) {
    spinners.push(spawn(process.execPath, ['-e', spin], { stdio: 'ignore' }));
  }
  return {
    count: spinners.length,
    stop() {
      for (const spinner of spinners)
        if (spinner.exitCode === null && spinner.signalCode === null) spinner.kill('SIGKILL');
    },
  };
}

interface RunRecord {
  run: number;
  exitCode: number;
  wallTimeMs: number;
  passed: number;
  failed: number;
  /** Test files that failed outside their tests (or did not run at all). */
  failedSuites: number;
  /** "file › test" of every failure in this run (SUITE_LEVEL for the file itself). */
  failures: string[];
  outputFile: string;
}

/** The part of jest's --json output read here. */
interface JestResults {
  numPassedTests: number;
  numFailedTests: number;
  testResults: {
    name: string;
    status: 'passed' | 'failed' | 'skipped' | 'focused';
    message: string;
    assertionResults: { ancestorTitles: string[]; title: string; status: string }[];
  }[];
}

function readResults(file: string): JestResults | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as JestResults;
  } catch {
    return undefined;
  }
}

/** What failed in one run, from jest's --json output. */
function recordOf(run: number, exitCode: number, wallTimeMs: number, outputFile: string): RunRecord {
  const record: RunRecord = {
    run,
    exitCode,
    wallTimeMs,
    passed: 0,
    failed: 0,
    failedSuites: 0,
    failures: [],
    outputFile,
  };
  const results = readResults(outputFile);
  if (!results) {
    record.failures.push(`${JEST_LEVEL} › exited with code ${exitCode} without writing its results`);
    return record;
  }
  record.passed = results.numPassedTests;
  record.failed = results.numFailedTests;
  for (const suite of results.testResults) {
    const file = path.relative(projectRoot, suite.name);
    const failedTests = suite.assertionResults.filter((test) => test.status === 'failed');
    for (const test of failedTests) record.failures.push([file, ...test.ancestorTitles, test.title].join(' › '));
    // A suite-level error (compile error, an afterAll's error) fails the file with "Test suite failed to run".
    const suiteLevel =
      suite.status === 'failed' && (failedTests.length === 0 || suite.message.includes('Test suite failed to run'));
    if (suiteLevel) {
      record.failedSuites += 1;
      record.failures.push(`${file} › ${SUITE_LEVEL}`);
    }
  }
  if (exitCode !== 0 && record.failures.length === 0) {
    record.failures.push(`${JEST_LEVEL} › exited with code ${exitCode} without a failing test`);
  }
  return record;
}

function runLine(record: RunRecord, runs: number): string {
  const suites = record.failedSuites ? `, ${record.failedSuites} file(s) failed outside their tests` : '';
  const verdict = record.exitCode === 0 ? 'ok' : `FAILED (exit ${record.exitCode})`;
  return `run ${record.run}/${runs}: ${verdict}, ${record.passed} passed, ${record.failed} failed${suites}, ${seconds(record.wallTimeMs)}`;
}

interface FailureRow {
  /** "file › test", as printed. */
  name: string;
  file: string;
  /** The test's describe blocks and title joined by " › ", or SUITE_LEVEL. */
  test: string;
  /** In how many runs it failed, and which. */
  failures: number;
  runs: number[];
}

/** Every failure with the runs it happened in, most frequent first. */
function failureTable(records: RunRecord[]): FailureRow[] {
  const byName = new Map<string, number[]>();
  for (const record of records) {
    for (const name of new Set(record.failures)) byName.set(name, [...(byName.get(name) ?? []), record.run]);
  }
  return [...byName]
    .map(([name, runs]) => {
      const [file = name, ...test] = name.split(' › ');
      return { name, file, test: test.join(' › '), failures: runs.length, runs };
    })
    .sort((a, b) => b.failures - a.failures || a.name.localeCompare(b.name));
}

async function main(): Promise<number> {
  const options = parseArgs(process.argv.slice(2));
  if (typeof options === 'string') {
    console.error(options);
    return 2;
  }
  const started = Date.now();
  const controller = new AbortController();
  let stoppedBy: NodeJS.Signals | undefined;
  let load: ReturnType<typeof startLoad> | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stoppedBy) return;
    stoppedBy = signal;
    log(`${signal}: stopping the current run`);
    load?.stop();
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  rmSync(outputDir, { recursive: true, force: true });
  mkdirSync(outputDir, { recursive: true });
  const records: RunRecord[] = [];
  try {
    const prepared = await prepareTools({ typecheck: options.typecheck });
    if (prepared !== 0) return prepared;
    if (options.load && !stoppedBy) {
      load = startLoad();
      log(`load on: ${load.count} busy-looping processes (one per core) until the last run ends`);
    }
    for (let run = 1; run <= options.runs && !stoppedBy; run += 1) {
      const outputFile = path.join(outputDir, `run-${run}.json`);
      log(`run ${run}/${options.runs}`);
      const runStarted = Date.now();
      const exitCode = await runSuite({
        jestArgs: [...options.jestArgs, '--json', `--outputFile=${outputFile}`],
        toolsReady: true,
        signal: controller.signal,
      });
      if (stoppedBy) break; // an interrupted run measures nothing
      records.push(recordOf(run, exitCode, Date.now() - runStarted, outputFile));
      log(runLine(records[records.length - 1]!, options.runs));
    }
  } finally {
    load?.stop();
  }

  const table = failureTable(records);
  const wallTimeMs = Date.now() - started;
  const summary = {
    runs: records.length,
    requestedRuns: options.runs,
    interruptedBy: stoppedBy ?? null,
    load: options.load,
    jestArgs: options.jestArgs,
    wallTimeMs,
    perRun: records.map(({ failures: _, ...record }) => ({
      ...record,
      outputFile: path.relative(projectRoot, record.outputFile),
    })),
    failures: table,
  };
  writeFileSync(path.join(outputDir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  if (table.length > 0) {
    log(`failed at least once (failures/runs  file › test):`);
    for (const row of table) console.log(`  ${row.failures}/${records.length}  ${row.name}`);
  }
  const failingTests = table.filter((row) => row.test !== SUITE_LEVEL && row.file !== JEST_LEVEL).length;
  const interrupted = stoppedBy ? ` (stopped by ${stoppedBy} after ${records.length} of ${options.runs})` : '';
  log(
    `${records.length} run(s)${interrupted}${options.load ? ' under load' : ''} in ${seconds(wallTimeMs)}: ` +
      `${failingTests} failing test(s), ${table.length - failingTests} failing file(s) or jest run(s) ` +
      `outside any test; summary in ${path.relative(projectRoot, outputDir)}/summary.json`,
  );
  if (stoppedBy) return 128 + os.constants.signals[stoppedBy];
  return records.some((record) => record.exitCode !== 0) ? 1 : 0;
}

main()
  .then((code) => process.exit(code))
  .catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
