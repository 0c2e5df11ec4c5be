// jest's node environment (one realm per jest worker: shared-realm-environment.ts), which with TEST_PROFILE_DIR set
// also writes where each test file's time went (one JSON line per file in <dir>/files.jsonl): when it started, wall
// and CPU of the jest worker while loading the file's modules and while running its tests, the CPU of the child
// processes it reaped (Chromium, worker processes, test servers), and the parts the harness marks
// (test/support/profile.ts). scripts/test-profile.ts runs the suite this way and sums it up.
// See docs/development.md "Test suite time".
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';
import type { Circus } from '@jest/types';
import { SharedRealmEnvironment } from './shared-realm-environment';

/** USER_HZ: the kernel reports CPU times in 1/100 s whatever its internal rate. */
const TICK_MS = 10;

/** CPU ms of this process's reaped children so far (/proc/self/stat cutime + cstime). */
function reapedChildrenCpuMs(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) * TICK_MS;
  } catch {
    return 0;
  }
}

function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

export interface ProfileMark {
  name: string;
  cpuMs: number;
  wallMs: number;
}

/** What the harness reports into (globalThis.__testProfile inside the test file). */
export interface ProfileCollector {
  mark(mark: ProfileMark): void;
  /** A Temporal server process this file stopped: its whole CPU since it started. */
  process(kind: string, cpuMs: number): void;
}

export default class ProfilingEnvironment extends SharedRealmEnvironment {
  private readonly dir = process.env.TEST_PROFILE_DIR;
  private readonly file: string;
  private readonly started = { wall: Date.now(), cpu: cpuMs(), children: reapedChildrenCpuMs() };
  private loaded = { wall: 0, cpu: 0 };
  private readonly marks: ProfileMark[] = [];
  private readonly processes: { kind: string; cpuMs: number }[] = [];

  /** With TEST_CPU_PROFILE_DIR: a V8 CPU profile of the jest worker's main thread while it loads and runs the file. */
  private cpuProfile: Session | undefined;

  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context);
    this.file = path.relative(config.projectConfig.rootDir, context.testPath);
    if (this.dir) {
      const collector: ProfileCollector = {
        mark: (mark) => this.marks.push(mark),
        process: (kind, ms) => this.processes.push({ kind, cpuMs: ms }),
      };
      (this.global as { __testProfile?: ProfileCollector }).__testProfile = collector;
    }
  }

  override async setup(): Promise<void> {
    await super.setup();
    if (process.env.TEST_CPU_PROFILE_DIR) {
      this.cpuProfile = new Session();
      this.cpuProfile.connect();
      await this.cpuProfile.post('Profiler.enable');
      await this.cpuProfile.post('Profiler.start');
    }
  }

  handleTestEvent(event: Circus.Event): void {
    // run_start: the file's modules are loaded and its tests collected.
    if (event.name === 'run_start') this.loaded = { wall: Date.now(), cpu: cpuMs() };
  }

  override async teardown(): Promise<void> {
    await super.teardown();
    if (this.cpuProfile) {
      const { profile } = await this.cpuProfile.post('Profiler.stop');
      this.cpuProfile.disconnect();
      const dir = process.env.TEST_CPU_PROFILE_DIR!;
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, `${this.file.replace(/[/\\]/g, '_')}.cpuprofile`), JSON.stringify(profile));
    }
    if (!this.dir) return;
    const now = { wall: Date.now(), cpu: cpuMs() };
    const loaded = this.loaded.wall ? this.loaded : now;
    const line = {
      file: this.file,
      pid: process.pid,
      startedAtMs: this.started.wall,
      loadWallMs: loaded.wall - this.started.wall,
      loadCpuMs: Math.round(loaded.cpu - this.started.cpu),
      runWallMs: now.wall - loaded.wall,
      runCpuMs: Math.round(now.cpu - loaded.cpu),
      childrenCpuMs: reapedChildrenCpuMs() - this.started.children,
      marks: this.marks,
      processes: this.processes,
    };
    mkdirSync(this.dir, { recursive: true });
    appendFileSync(path.join(this.dir, 'files.jsonl'), `${JSON.stringify(line)}\n`);
  }
}
