// The bank simulator (simulators/bank/) as a child process of its own, for one test file (test/support/bank.ts
// startTestBank): on a free port, its state in a fresh folder, stopped by the file's teardown.
// Stack.startBankSimulator (scripts/lib/stack.ts) is the supervised form for dev, chaos and bench.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from './paths';
import { freePort } from './ports';
import { startChild } from './child-process';
import { tsEntry } from './entry-points';

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
  const url = `http://127.0.0.1:${port}`;
  const { command, args } = tsEntry(path.join(projectRoot, 'simulators', 'bank', 'main.ts'));
  const child = await startChild({
    name: `the bank simulator on ${url}`,
    command,
    args,
    spawnOptions: {
      cwd: projectRoot,
      env: { ...process.env, ...env, BANK_SIMULATOR_PORT: String(port), BANK_SIMULATOR_STATE_DIR: stateDir },
    },
    answers: () => answers(url),
    readyWithinMs: 30_000,
  }).catch((error: unknown) => {
    rmSync(stateDir, { recursive: true, force: true });
    throw error;
  });
  const stop = async () => {
    await child.stop();
    rmSync(stateDir, { recursive: true, force: true });
  };
  return { url, stateDir, stop };
}
