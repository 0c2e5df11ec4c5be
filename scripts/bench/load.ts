// The load side of `npm run bench`: a lean keep-alive HTTP client (the client shares the machine's two cores
// with what it measures, so it does as little as it can), closed loops of virtual partners, and latency stats.
import http from 'node:http';
import { pause } from '../lib/wait';

export interface HttpResponse {
  status: number;
  /** Parsed JSON when asked for (`json: true`) and the body is JSON; otherwise undefined. */
  body: any;
}

export class HttpClient {
  private readonly agent: http.Agent;
  private readonly host: string;
  private readonly port: number;

  constructor(
    baseUrl: string,
    private readonly defaultHeaders: Record<string, string> = {},
    maxSockets = 64,
  ) {
    const url = new URL(baseUrl);
    this.host = url.hostname;
    this.port = Number(url.port || 80);
    this.agent = new http.Agent({ keepAlive: true, maxSockets });
  }

  request(
    method: string,
    path: string,
    options: { body?: unknown; raw?: Buffer; headers?: Record<string, string>; json?: boolean } = {},
  ): Promise<HttpResponse> {
    const payload = options.raw ?? (options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body)));
    const headers: Record<string, string | number> = { ...this.defaultHeaders, ...options.headers };
    if (payload) {
      headers['content-length'] = payload.length;
      if (!options.raw) headers['content-type'] = 'application/json';
    }
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: this.host, port: this.port, method, path, headers, agent: this.agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            let body: unknown;
            if (options.json && chunks.length > 0) {
              try {
                body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
              } catch {
                body = undefined;
              }
            }
            resolve({ status: res.statusCode ?? 0, body });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Throws unless the response has the expected status (the message carries the body for the report). */
export function expectStatus(response: HttpResponse, status: number, what: string): HttpResponse {
  if (response.status !== status) {
    throw new Error(`${what}: HTTP ${response.status} ${JSON.stringify(response.body ?? '').slice(0, 300)}`);
  }
  return response;
}

export interface OpStats {
  op: string;
  count: number;
  errors: number;
  /** Successful operations per second of the phase's wall time. */
  rps: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
  /** CPU time per successful operation of each process serving it (ms), when measured: steadier than
   * throughput on a shared machine, since other programs' load does not inflate it much. */
  cpu_ms_per_op?: Record<string, number>;
}

/** Latencies (ms) per operation name, plus error counts and a sample of error messages. */
export class Recorder {
  private readonly latencies = new Map<string, number[]>();
  private readonly errorCounts = new Map<string, number>();
  readonly errorSamples: string[] = [];
  private elapsedMs = 0;
  /** Per operation, CPU ms used by each serving process while it was measured. */
  private readonly cpuMs = new Map<string, Map<string, number>>();

  /** Times `fn` under `op`; a throw counts as an error of `op` and is rethrown. */
  async time<T>(op: string, fn: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      const result = await fn();
      this.add(op, performance.now() - started);
      return result;
    } catch (error) {
      this.error(op, error);
      throw error;
    }
  }

  add(op: string, ms: number): void {
    let list = this.latencies.get(op);
    if (!list) this.latencies.set(op, (list = []));
    list.push(ms);
  }

  error(op: string, error: unknown): void {
    this.errorCounts.set(op, (this.errorCounts.get(op) ?? 0) + 1);
    if (this.errorSamples.length < 10) this.errorSamples.push(`${op}: ${(error as Error).message ?? String(error)}`);
  }

  addElapsed(ms: number): void {
    this.elapsedMs += ms;
  }

  /** Charges `op` the CPU its serving processes used while it ran. */
  addCpu(op: string, usage: Record<string, number>): void {
    let byProcess = this.cpuMs.get(op);
    if (!byProcess) this.cpuMs.set(op, (byProcess = new Map()));
    for (const [name, ms] of Object.entries(usage)) byProcess.set(name, (byProcess.get(name) ?? 0) + ms);
  }

  stats(op: string): OpStats {
    const list = [...(this.latencies.get(op) ?? [])].sort((a, b) => a - b);
    const at = (q: number) =>
      list.length === 0 ? NaN : list[Math.min(list.length - 1, Math.ceil(q * list.length) - 1)]!;
    return {
      op,
      count: list.length,
      errors: this.errorCounts.get(op) ?? 0,
      rps: this.elapsedMs > 0 ? list.length / (this.elapsedMs / 1000) : NaN,
      p50: at(0.5),
      p95: at(0.95),
      p99: at(0.99),
      max: list.length ? list[list.length - 1]! : NaN,
      mean: list.length ? list.reduce((sum, value) => sum + value, 0) / list.length : NaN,
      ...(this.cpuMs.has(op) && list.length > 0
        ? { cpu_ms_per_op: Object.fromEntries([...this.cpuMs.get(op)!].map(([name, ms]) => [name, ms / list.length])) }
        : {}),
    };
  }

  ops(): string[] {
    return [...new Set([...this.latencies.keys(), ...this.errorCounts.keys()])];
  }
}

export interface LoopOptions {
  concurrency: number;
  /** Stop starting iterations after this long (ms). */
  durationMs?: number;
  /** Or after this many iterations in all. */
  iterations?: number;
}

/**
 * Runs `iteration` in `concurrency` closed loops (each virtual partner starts its next iteration when the last one
 * ended) until the duration or the iteration count is reached. An iteration that throws is counted by the recorder
 * (when it used `time`) and the loop goes on. Returns the wall time and the number of iterations.
 */
export async function closedLoop(
  options: LoopOptions,
  iteration: (index: number) => Promise<void>,
): Promise<{ elapsedMs: number; iterations: number }> {
  const started = performance.now();
  const deadline = options.durationMs === undefined ? Infinity : started + options.durationMs;
  let next = 0;
  const user = async () => {
    for (;;) {
      if (performance.now() >= deadline) return;
      const index = next++;
      if (options.iterations !== undefined && index >= options.iterations) return;
      await iteration(index).catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, user));
  return { elapsedMs: performance.now() - started, iterations: Math.min(next, options.iterations ?? next) };
}

/**
 * Measures several targets side by side: `rounds` rounds, each running every target for `durationMs` after a
 * short warm-up, in turn (A B C A B C ...), so that a slow moment of a shared machine hits them all alike.
 * After each target the stack is let go quiet (waitUntilQuiet on its processes): work it left queued (workflow
 * tasks of the workflows it started, which the worker finishes seconds later) is charged to it, not done in the
 * next target's window. Returns one recorder per target (latencies of all rounds; elapsed time of all rounds).
 */
export async function sideBySide(
  targets: Record<string, (recorder: Recorder) => Promise<void>>,
  options: { concurrency: number; durationMs: number; warmupMs: number; rounds: number },
  /** Cumulative CPU ms of the processes serving each target, to charge them their CPU per operation. */
  cpu: Record<string, () => Record<string, number>> = {},
): Promise<Record<string, Recorder>> {
  const recorders: Record<string, Recorder> = {};
  for (const name of Object.keys(targets)) recorders[name] = new Recorder();
  for (let round = 0; round < options.rounds; round += 1) {
    for (const [name, target] of Object.entries(targets)) {
      const warmup = new Recorder();
      await closedLoop({ concurrency: options.concurrency, durationMs: options.warmupMs }, () => target(warmup));
      if (cpu[name]) await waitUntilQuiet(cpu[name]);
      const recorder = recorders[name]!;
      const cpuBefore = cpu[name]?.();
      const { elapsedMs } = await closedLoop({ concurrency: options.concurrency, durationMs: options.durationMs }, () =>
        target(recorder),
      );
      recorder.addElapsed(elapsedMs);
      if (cpu[name]) await waitUntilQuiet(cpu[name]);
      if (cpuBefore) recorder.addCpu(name, cpuDelta(cpuBefore, cpu[name]!()));
    }
  }
  return recorders;
}

/**
 * Waits (at most `maxMs`) until the processes together use less than a fifth of a core over a quarter second: the
 * work queued by the last load is done.
 */
export async function waitUntilQuiet(cpu: () => Record<string, number>, maxMs = 30_000): Promise<void> {
  const total = () => Object.values(cpu()).reduce((sum, ms) => sum + ms, 0);
  const sampleMs = 250;
  const deadline = performance.now() + maxMs;
  let last = total();
  while (performance.now() < deadline) {
    await pause(sampleMs);
    const now = total();
    if (now - last < sampleMs / 5) return;
    last = now;
  }
}

export function cpuDelta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after)
      .filter(([name]) => before[name] !== undefined)
      .map(([name, ms]) => [name, ms - before[name]!]),
  );
}
