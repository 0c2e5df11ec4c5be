import { execFile } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from './paths';

/**
 * Path of a Temporal binary from scripts/temporal-binaries.sh (env override, cache, or a local build);
 * undefined when none can be provided here, and the SDK then downloads its own. Asynchronous, so that a first
 * run's download overlaps the other start-up work.
 */
export function temporalBinary(which: 'cli' | 'test-server'): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'bash',
      [path.join(projectRoot, 'scripts', 'temporal-binaries.sh'), which],
      { encoding: 'utf8' },
      (error, stdout) => {
        if (error) return reject(error);
        const value = stdout.trim().split('=').slice(1).join('=');
        resolve(value === '' ? undefined : value);
      },
    );
    child.stderr?.pipe(process.stderr);
  });
}
