import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from './paths';

/**
 * Path of a Temporal binary from scripts/temporal-binaries.sh (env override, cache, or a local build);
 * undefined when none can be provided here, and the SDK then downloads its own.
 */
export function temporalBinary(which: 'cli' | 'test-server'): string | undefined {
  const output = execFileSync('bash', [path.join(projectRoot, 'scripts', 'temporal-binaries.sh'), which], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const value = output.trim().split('=').slice(1).join('=');
  return value === '' ? undefined : value;
}
