// The bank simulator (simulators/bank/) as a child process of its own, for one jest run (test/support/global-setup.ts)
// like the sandbox chain's node: on a free port, its state in a fresh folder, stopped by the run's teardown.
// Stack.startBankSimulator (scripts/lib/stack.ts) is the supervised form for dev, chaos and bench.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from './paths';
import { freePort } from './ports';
import { waitUntil } from './wait';

export interface LocalBankSimulator {
  /** e.g. http://127.0.0.1:41234; the ISO 20022 channel is under /iso20022. */
  url: string;
  stateDir: string;
  stop(): Promise<void>;
}

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) })).ok;
  } catch {
    return false;
  }
}

/** `env`: the simulator's own settings on top of this process's (e.g. ISO20022_SETTLE_MS). */
export async function startLocalBankSimulator(env: Record<string, string> = {}): Promise<LocalBankSimulator> {
  const port = await freePort();
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'bank-simulator-'));
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(projectRoot, 'simulators', 'bank', 'main.ts')],
    {
      cwd: projectRoot,
      env: { ...process.env, ...env, BANK_SIMULATOR_PORT: String(port), BANK_SIMULATOR_STATE_DIR: stateDir },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 5_000)))]);
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  if (!(await waitUntil(() => answers(url), 30_000, 100))) {
    await stop();
    throw new Error(`the bank simulator did not answer on ${url}: ${stderr}`);
  }
  return { url, stateDir, stop };
}
