import { execFile } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from './paths';

/**
 * Path of a Temporal binary from scripts/temporal-binaries.sh (env override, cache, or a local build);
 * undefined when none can be provided here, and the SDK then downloads its own. Asynchronous, so that a first
 * run's download overlaps the other start-up work.
 */
export function temporalBinary(which: 'cli' | 'test-server' | 'test-servers'): Promise<string | undefined> {
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

/**
 * Arguments for a dev server on an SQLite file (npm run dev, chaos, bench). Its default rollback journal
 * serialises readers behind every write: under the chaos load its store timed out ("context deadline exceeded",
 * even NamespaceNotFound). WAL lets reads run beside the writer; synchronous=normal keeps every commit across a
 * killed process (only an OS crash could lose the last ones, which a dev server may).
 */
export const devServerSqliteArgs = ['--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal'];
