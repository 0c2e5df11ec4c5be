// A helper process outside the stack supervisor (the jest run's Anvil, dev server and test servers' JVM, a test file's
// bank simulator): started, awaited until it answers, and stopped with SIGTERM, then SIGKILL after a bound. Stack
// (scripts/lib/stack.ts) supervises the long-lived ones of dev, chaos and bench.
import { type ChildProcess, spawn, type SpawnOptions } from 'node:child_process';
import { waitUntil } from './wait';

export interface ChildHandle {
  /** Its process id (its CPU is read from /proc by the test profile). */
  pid: number | undefined;
  stop(): Promise<void>;
}

/** True while a process with this id exists (signal 0 checks without signalling). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function startChild(options: {
  name: string;
  command: string;
  args: string[];
  spawnOptions?: SpawnOptions;
  /** True once the process serves (its port answers). */
  answers: () => Promise<boolean>;
  readyWithinMs: number;
  /** Never what keeps this process alive (jest's own process: its global teardown stops the child). */
  unref?: boolean;
}): Promise<ChildHandle> {
  const child: ChildProcess = spawn(options.command, options.args, {
    ...options.spawnOptions,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (options.unref) {
    child.unref();
    (child.stderr as { unref?: () => void } | null)?.unref?.();
  }
  const hasExited = () => child.exitCode !== null || child.signalCode !== null;
  const stop = async () => {
    if (!hasExited()) child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    // The bound's timer is cleared once the process exited: a pending one would hold the process (a jest worker) open.
    await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 5_000)))]);
    clearTimeout(timer);
    if (!hasExited()) child.kill('SIGKILL');
  };
  // A process that exits at start fails the start at once instead of at the bound.
  const ready = await waitUntil(async () => hasExited() || (await options.answers()), options.readyWithinMs, 100);
  if (hasExited()) throw new Error(`${options.name} exited at start: ${stderr}`);
  if (!ready) {
    await stop();
    throw new Error(`${options.name} did not answer: ${stderr}`);
  }
  return { pid: child.pid, stop };
}
