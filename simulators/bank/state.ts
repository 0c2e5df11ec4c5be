// A channel's state as one JSON file in the simulator's stateDir, so that a restart (a bank outage in chaos) keeps
// what the bank had done. Written whole after each change: the simulator holds a test's worth of records, not a bank's.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export class JsonState<T extends object> {
  readonly data: T;
  private readonly file: string;

  constructor(stateDir: string, name: string, empty: () => T) {
    this.file = path.join(stateDir, `${name}.json`);
    this.data = existsSync(this.file) ? (JSON.parse(readFileSync(this.file, 'utf8')) as T) : empty();
  }

  save(): void {
    const temporary = `${this.file}.tmp`;
    writeFileSync(temporary, JSON.stringify(this.data));
    renameSync(temporary, this.file);
  }
}
