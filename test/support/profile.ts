// Marks for the suite's profile (profiling-environment.ts): nothing happens unless TEST_PROFILE_DIR is set.
import { readFileSync } from 'node:fs';
import type { ProfileCollector } from './profiling-environment';

function collector(): ProfileCollector | undefined {
  return (globalThis as { __testProfile?: ProfileCollector }).__testProfile;
}

function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** Runs `step` and records its wall time and the jest worker's CPU meanwhile under `name`. */
export async function profiled<T>(name: string, step: () => Promise<T> | T): Promise<T> {
  const profile = collector();
  if (!profile) return step();
  const wall = Date.now();
  const cpu = cpuMs();
  try {
    return await step();
  } finally {
    profile.mark({ name, cpuMs: Math.round(cpuMs() - cpu), wallMs: Date.now() - wall });
  }
}

/** CPU ms a process has used so far (/proc/<pid>/stat utime + stime), or null when it is gone. */
export function processCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/** Records the CPU of a server process this file is about to stop. */
export function recordProcessCpu(kind: string, pid: number): void {
  const profile = collector();
  if (!profile) return;
  const ms = processCpuMs(pid);
  if (ms !== null) profile.process(kind, ms);
}
