// `npm run test:profile -- [jest arguments]`: runs the suite once (scripts/test.ts, no type check) and says where its
// time went: jest's wall time, the CPU of everything the run started (jest, its workers and what they started:
// Temporal servers, Chromium, worker processes, Anvil) and of PostgreSQL, and per test file (profiling-environment.ts)
// the CPU of loading its modules, of the harness's parts and of its tests. Writes .data/test-profile/summary.md (the
// table of docs/development.md "Test suite time") beside each file's line (files.jsonl) and jest's results.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureLocalPostgres } from './lib/postgres';
import { projectRoot } from './lib/paths';
import { prepareTools, runSuite } from './test';

const outputDir = path.join(projectRoot, '.data', 'test-profile');
const TICK_MS = 10;

interface FileLine {
  file: string;
  pid: number;
  loadWallMs: number;
  loadCpuMs: number;
  runWallMs: number;
  runCpuMs: number;
  childrenCpuMs: number;
  marks: { name: string; cpuMs: number; wallMs: number }[];
  processes: { kind: string; cpuMs: number }[];
}

function statFields(pid: number | 'self'): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** CPU ms of the processes this one has reaped (jest and, through it, everything the run started). */
function reapedCpuMs(): number {
  const fields = statFields('self');
  return fields ? (Number(fields[13]) + Number(fields[14])) * TICK_MS : 0;
}

/** The cluster's CPU so far: the postmaster, the backends it reaped, the live ones (as scripts/bench/stack.ts). */
function postgresCpuMs(dataDir: string): number {
  const postmaster = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const own = statFields(postmaster);
  let total = own ? own.slice(11, 15).reduce((sum, field) => sum + Number(field), 0) * TICK_MS : 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (fields && Number(fields[1]) === postmaster) total += (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  }
  return total;
}

const s = (ms: number) => (ms / 1000).toFixed(1);

interface RunFigures {
  jestWallMs: number;
  reapedMs: number;
  postgresMs: number;
  devServerMs: number;
  /** The JVM of the time-skipping test servers (temporal-servers.ts), when the run had one. */
  testServersMs: number;
}

function summarise(lines: FileLine[], run: RunFigures): string {
  const sum = (pick: (line: FileLine) => number) => lines.reduce((total, line) => total + pick(line), 0);
  const load = sum((l) => l.loadCpuMs);
  const tests = sum((l) => l.runCpuMs);
  const children = sum((l) => l.childrenCpuMs);
  const byMark = new Map<string, { cpu: number; wall: number; count: number }>();
  for (const line of lines) {
    for (const mark of line.marks) {
      const entry = byMark.get(mark.name) ?? { cpu: 0, wall: 0, count: 0 };
      entry.cpu += mark.cpuMs;
      entry.wall += mark.wallMs;
      entry.count += 1;
      byMark.set(mark.name, entry);
    }
  }
  const byProcess = new Map<string, { cpu: number; count: number }>();
  for (const line of lines) {
    for (const process of line.processes) {
      const entry = byProcess.get(process.kind) ?? { cpu: 0, count: 0 };
      entry.cpu += process.cpuMs;
      entry.count += 1;
      byProcess.set(process.kind, entry);
    }
  }
  const total = run.reapedMs + run.postgresMs;
  const out: string[] = [];
  out.push(
    `${lines.length} test files, jest ${s(run.jestWallMs)} s wall, ${os.cpus().length} cores, load average ` +
      `at the end ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
  );
  out.push('');
  out.push('| Where | CPU s | Share | Count | Per item |');
  out.push('| --- | --- | --- | --- | --- |');
  const row = (where: string, ms: number, count?: number) =>
    out.push(
      `| ${where} | ${s(ms)} | ${((100 * ms) / total).toFixed(0)} % | ${count ?? ''} | ${count ? `${s(ms / count)} s` : ''} |`,
    );
  row('Whole run (jest, workers, all they started, PostgreSQL)', total);
  row("jest workers: loading the test files' modules", load, lines.length);
  row('jest workers: running the files (harness and tests)', tests, lines.length);
  for (const [name, entry] of [...byMark].sort((a, b) => b[1].cpu - a[1].cpu)) {
    row(`&nbsp;&nbsp;of which ${name} (${s(entry.wall)} s wall)`, entry.cpu, entry.count);
  }
  row('child processes reaped by the workers (servers, Chromium, workers)', children);
  for (const [kind, entry] of byProcess) row(`&nbsp;&nbsp;of which ${kind}`, entry.cpu, entry.count);
  if (run.testServersMs > 0) row("Temporal test servers' JVM (one per run)", run.testServersMs);
  row('Temporal dev server (shared by the files that do not skip time)', run.devServerMs);
  row('PostgreSQL', run.postgresMs);
  row(
    "rest (jest's parent, database set-up and migrations, global set-up, Anvil)",
    run.reapedMs - load - tests - children - run.devServerMs - run.testServersMs,
  );
  out.push('');
  out.push('| Slowest files | wall s | load CPU s | run CPU s | children CPU s |');
  out.push('| --- | --- | --- | --- | --- |');
  for (const line of [...lines]
    .sort((a, b) => b.loadWallMs + b.runWallMs - (a.loadWallMs + a.runWallMs))
    .slice(0, 15)) {
    out.push(
      `| ${line.file} | ${s(line.loadWallMs + line.runWallMs)} | ${s(line.loadCpuMs)} | ${s(line.runCpuMs)} | ${s(line.childrenCpuMs)} |`,
    );
  }
  out.push('');
  out.push('| Most CPU (worker + children) | CPU s | wall s |');
  out.push('| --- | --- | --- |');
  const cpuOf = (l: FileLine) => l.loadCpuMs + l.runCpuMs + l.childrenCpuMs;
  for (const line of [...lines].sort((a, b) => cpuOf(b) - cpuOf(a)).slice(0, 15)) {
    out.push(`| ${line.file} | ${s(cpuOf(line))} | ${s(line.loadWallMs + line.runWallMs)} |`);
  }
  return out.join('\n');
}

/** Each file's wall time in seconds, for the sequencer's order on a machine without jest's cache. */
function writeFileDurations(lines: FileLine[]): void {
  const durations = Object.fromEntries(
    [...lines]
      .sort((a, b) => a.file.localeCompare(b.file))
      .map((line) => [line.file, Math.round((line.loadWallMs + line.runWallMs) / 100) / 10]),
  );
  writeFileSync(
    path.join(projectRoot, 'test', 'support', 'file-durations.json'),
    `${JSON.stringify(durations, null, 2)}\n`,
  );
}

async function main(): Promise<number> {
  const jestArgs = process.argv.slice(2).filter((arg) => arg !== '--no-typecheck');
  rmSync(outputDir, { recursive: true, force: true });
  mkdirSync(outputDir, { recursive: true });
  await prepareTools({ typecheck: false });
  // The private cluster started here (not by runSuite, which would stop it before its CPU could be read).
  const cluster = process.env.DATABASE_URL ? null : await ensureLocalPostgres();
  try {
    const postgresBefore = cluster ? postgresCpuMs(cluster.dataDir) : 0;
    const reapedBefore = reapedCpuMs();
    const started = Date.now();
    process.env.TEST_PROFILE_DIR = outputDir;
    const code = await runSuite({
      jestArgs: [...jestArgs, '--json', '--outputFile', path.join(outputDir, 'jest.json')],
      typecheck: false,
      toolsReady: true,
    });
    const jestJson = JSON.parse(readFileSync(path.join(outputDir, 'jest.json'), 'utf8')) as {
      startTime: number;
      testResults: { endTime: number }[];
    };
    const jestEnd = Math.max(...jestJson.testResults.map((result) => result.endTime));
    // What global-teardown.ts read of the processes it stopped (absent when the run had none).
    const cpuOfStopped = (file: string) => {
      try {
        return (JSON.parse(readFileSync(path.join(outputDir, file), 'utf8')) as { cpuMs: number }).cpuMs;
      } catch {
        return 0;
      }
    };
    const devServerMs = cpuOfStopped('dev-server.json');
    const testServersMs = cpuOfStopped('test-servers.json');
    const run: RunFigures = {
      devServerMs,
      testServersMs,
      jestWallMs: Number.isFinite(jestEnd) ? jestEnd - jestJson.startTime : Date.now() - started,
      reapedMs: reapedCpuMs() - reapedBefore,
      postgresMs: cluster ? postgresCpuMs(cluster.dataDir) - postgresBefore : 0,
    };
    const lines = readFileSync(path.join(outputDir, 'files.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as FileLine);
    const summary = summarise(lines, run);
    // A run of the whole suite tells the sequencer (test/support/sequencer.cjs) how long each file takes.
    if (jestArgs.every((arg) => arg.startsWith('-'))) writeFileDurations(lines);
    writeFileSync(path.join(outputDir, 'summary.md'), `${summary}\n`);
    console.log(`\n${summary}\n\n[test:profile] ${path.relative(projectRoot, outputDir)}/summary.md`);
    return code;
  } finally {
    cluster?.stopIfStartedHere();
  }
}

main()
  .then((code) => process.exit(code))
  .catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
