// What one scenario tried and found, printed as its one summary line.

/** Failure messages kept per scenario (the count covers all of them). */
const KEPT_FAILURES = 25;

export class ScenarioReport {
  cases = 0;
  kills = 0;
  restarts = 0;
  eventsChecked = 0;
  failureCount = 0;
  readonly failures: string[] = [];
  /** Extra figures worth printing (e.g. `503s=12`). */
  readonly notes: Record<string, string | number> = {};
  private readonly started = Date.now();

  constructor(
    readonly number: number,
    readonly name: string,
  ) {}

  fail(message: string): void {
    this.failureCount += 1;
    if (this.failures.length < KEPT_FAILURES) this.failures.push(message);
  }

  /** Records a failure unless `condition` holds; returns the condition. */
  check(condition: boolean, message: () => string): boolean {
    if (!condition) this.fail(message());
    return condition;
  }

  get seconds(): number {
    return (Date.now() - this.started) / 1000;
  }

  line(): string {
    const extra = Object.entries(this.notes).map(([key, value]) => ` ${key}=${value}`);
    return (
      `chaos ${this.number} ${this.name}: ${this.failureCount === 0 ? 'PASS' : 'FAIL'} cases=${this.cases} ` +
      `failures=${this.failureCount} kills=${this.kills} restarts=${this.restarts} events=${this.eventsChecked}` +
      `${extra.join('')} time=${this.seconds.toFixed(1)}s`
    );
  }
}

/** The sizes of a run: `--quick` (CI) or full. */
export interface RunSize {
  quick: boolean;
  /** fast-check seed of the fuzzer and of every random choice, printed so a failing run can be repeated. */
  seed: number;
}

/** A deterministic pseudo-random generator (mulberry32) for the scenarios' choices, seeded from the run's seed. */
export function randomSource(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
