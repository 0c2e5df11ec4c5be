// The run of `npm run bench` (scripts/bench/index.ts parses the options and prepares the Prisma client first).
import { Client, Connection } from '@temporalio/client';
import os from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { projectRoot } from '../lib/paths';
import { bareShape, MeasuredShape, shapeOf, totals } from './history';
import { BenchOptions, machineLoad } from './options';
import { cpuDelta, HttpClient, OpStats, Recorder } from './load';
import type { WorkflowShape } from './engine/workflows';
import { BenchPartner, createCustomer, createParty, createPartners, Party } from './partners';
import { BenchResult, formatTable, Ratio, writeResults } from './report';
import { formatScale, scalePhase, ScaleResult, SMALL_ROWS } from './scale';
import { ceilingPhase, PhaseOptions, quotePhase, Readable, readPhase, settlementPhase } from './scenarios';
import { pause } from '../lib/wait';
import { BenchStack, memoryOf, MemorySampler } from './stack';

const resultsDir = path.join(projectRoot, 'bench-results');

function log(message: string): void {
  console.error(`[bench] ${new Date().toISOString().slice(11, 19)} ${message}`);
}

/** Runs `task` on every item with at most `limit` at once. */
async function inParallel<T, R>(items: T[], limit: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      for (let index = next++; index < items.length; index = next++) results[index] = await task(items[index]!, index);
    }),
  );
  return results;
}

const statsOf = (recorder: Recorder, ops: string[]): OpStats[] => ops.map((op) => recorder.stats(op));

/**
 * PostgreSQL flushes an idle backend's counters to pg_stat_database only after its idle interval (PGSTAT_IDLE_INTERVAL
 * in pgstat.c), so a count read at once could miss the last deadlocks of a run.
 */
const statsFlushMs = 11_000;

/** The deadlocks PostgreSQL has detected in the bench's database so far (pg_stat_database). */
async function deadlocksSoFar(databaseUrl: string): Promise<number> {
  const client = new PgClient({ connectionString: databaseUrl, application_name: `bench-${process.pid}` });
  await client.connect();
  try {
    const { rows } = await client.query<{ deadlocks: string }>(
      'SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()',
    );
    return Number(rows[0]?.deadlocks ?? 0);
  } finally {
    await client.end();
  }
}

export async function runBench(options: BenchOptions): Promise<void> {
  const startedAt = new Date();
  const loadBefore = machineLoad();
  log(`load average ${loadBefore.join(' ')} on ${os.cpus().length} cores; ${options.quick ? 'quick run' : 'full run'}`);
  const stack = new BenchStack({
    kind: options.dist ? 'dist' : 'tsx',
    profile: options.profile,
    telemetry: options.telemetry,
    engine: options.engine,
  });
  const sections: BenchResult['sections'] = {};
  const notes: string[] = [];
  const ratios: Ratio[] = [];
  let temporalConnection: Connection | undefined;
  let partners: BenchPartner[] = [];
  const pids = () => ({
    api: options.attach ? envPid('BENCH_API_PID') : stack.pidOf('api'),
    'worker-1': options.attach ? envPid('BENCH_WORKER_PID') : stack.pidOf('worker-1'),
    'worker-2': stack.pidOf('worker-2'),
    temporal: stack.pidOf('temporal'),
  });
  const sampler = new MemorySampler(pids);
  const peaks: Record<string, number> = {};
  const recordPeaks = () => {
    for (const [name, pid] of Object.entries(pids())) {
      const memory = pid === undefined ? null : memoryOf(pid);
      if (memory) peaks[name] = Math.max(peaks[name] ?? 0, memory.peakMb);
    }
  };
  let shapes: BenchResult['workflow_shapes'];

  try {
    if (options.attach) {
      const databaseUrl = process.env.DATABASE_URL;
      if (!databaseUrl) throw new Error("--attach needs DATABASE_URL (the running stack's; npm run dev prints it)");
      stack.attach(
        databaseUrl,
        process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
        process.env.BENCH_API_URL ?? 'http://127.0.0.1:3000',
      );
      log(`attached to the API at ${stack.apiUrl}`);
      await stack.startEngineWorker();
    } else {
      log(
        `starting PostgreSQL (payments_bench) and the ${options.engine === 'server' ? 'Temporal server on it' : 'Temporal dev server'}`,
      );
      await Promise.all([stack.startDatabase(), stack.startTemporal(), stack.startAnvil(), stack.startBankSimulator()]);
    }
    const connection = await Connection.connect({ address: stack.temporalAddress });
    temporalConnection = connection;
    const temporal = new Client({ connection, namespace: 'default' });
    if (!options.attach) {
      log(`starting the API, the worker and the engine worker (${options.dist ? 'dist' : 'tsx'})`);
      await Promise.all([stack.startApi(), stack.startWorker(1), stack.startEngineWorker()]);
    }
    partners = await createPartners(stack.database.url, stack.apiUrl, options.partners);
    const openapi = await new HttpClient(stack.apiUrl).request('GET', '/openapi.json', { json: true });
    const hasSettlement = Boolean(openapi.body?.paths?.['/v1/fiat-to-fiat']);
    const runs = (section: string) => options.only.has(section);
    sampler.start();

    const phase: PhaseOptions = {
      concurrency: options.concurrency,
      durationMs: options.durationMs,
      warmupMs: options.warmupMs,
      rounds: options.rounds,
    };
    let readables: Readable[] = [];
    let readPath = '';
    let settlementRps: number | null = null;
    let parties: Party[] = [];
    /** pg_stat_database's count before the first settlement; null when no settlement section runs. */
    let deadlocksBefore: number | null = null;
    /** A settlement run, charged the CPU of the API, the given workers and Temporal. */
    const settle = async (
      workers: string[],
      settlements: number,
      recorder?: Recorder,
      rails: 'sandbox' | 'iso20022' = 'sandbox',
    ) => {
      const serving = () => stack.cpu(['api', ...workers, 'temporal', 'postgres', 'anvil']);
      const before = serving();
      const run = await settlementPhase(
        parties,
        { settlements, concurrency: options.concurrency, pollMs: options.pollMs, timeoutMs: 120_000, rails },
        recorder,
      );
      run.recorder.addCpu('settlement', cpuDelta(before, serving()));
      return run;
    };

    const classic = runs('read') || runs('quote') || runs('settlement');
    if (!classic) {
      // --only scale: nothing to prepare for the other sections.
    } else if (hasSettlement && (runs('settlement') || runs('read'))) {
      // The read phase reads completed transactions, so it needs a settlement run too.
      log(`preparing ${options.concurrency} approved customers with wallets and spei accounts`);
      parties = await inParallel(
        Array.from({ length: options.concurrency }, (_, index) => index),
        4,
        (index) => createParty(partners[index % partners.length]!, index),
      );
      // Settlements and their engine ceiling in turns (S C S C ...), so a slow moment of the machine hits both.
      const rounds = runs('settlement') ? options.rounds : 1;
      const perRound = Math.ceil(options.settlements / rounds);
      if (runs('settlement')) deadlocksBefore = await deadlocksSoFar(stack.database.url);
      const settlementRecorder = new Recorder();
      const ceiling = new Recorder();
      const completed: Array<{ id: string; quoteId: string; party: Party }> = [];
      let bare: { quote: WorkflowShape; settlement: WorkflowShape } | undefined;
      for (let round = 0; round < rounds; round += 1) {
        const count = Math.min(perRound, options.settlements - round * perRound);
        log(
          `fiat to fiat end to end, round ${round + 1}/${rounds}: ${count} settlements at concurrency ${options.concurrency}`,
        );
        const run = await settle(['worker-1'], count, settlementRecorder);
        completed.push(...run.completed);
        if (!bare) {
          const sample = run.completed[0];
          if (!sample) throw new Error('no settlement completed; see .data/bench/logs');
          const settlementShape = await shapeOf(temporal, `transaction-${sample.id}`);
          const quoteShape = await shapeOf(temporal, `quote-${sample.quoteId}`);
          shapes = describeShapes(quoteShape, settlementShape);
          bare = { quote: bareShape(quoteShape), settlement: bareShape(settlementShape) };
        }
        if (!runs('settlement')) break;
        log(`engine ceiling, round ${round + 1}/${rounds}: ${count} no-op copies (${JSON.stringify(bare.settlement)})`);
        const ceilingCpu = () => stack.cpu(['engine-worker', 'temporal', 'postgres']);
        const ceilingCpuBefore = ceilingCpu();
        await ceilingPhase(temporal, bare, { settlements: count, concurrency: options.concurrency }, ceiling);
        ceiling.addCpu('ceiling', cpuDelta(ceilingCpuBefore, ceilingCpu()));
      }
      sections.settlement = statsOf(settlementRecorder, ['quote', 'create', 'deposit', 'get', 'settlement']);
      if (settlementRecorder.errorSamples.length)
        notes.push(`settlement errors: ${settlementRecorder.errorSamples.join(' | ')}`);
      settlementRps = settlementRecorder.stats('settlement').rps;
      if (runs('settlement') && stack.bankSimulatorUrl) {
        // Beside the sandbox rails: EUR (SEPA) -> USD (wire) through the bank simulator's ISO 20022 channel (its
        // settle delay, ISO20022_SETTLE_MS, and the bank-reports reader's poll are in every settlement's time).
        const isoCount = Math.max(1, Math.ceil(options.settlements / 3));
        log(`fiat to fiat through ISO 20022 (EUR SEPA -> USD wire): ${isoCount} settlements`);
        const iso = new Recorder();
        await settle(['worker-1'], isoCount, iso, 'iso20022');
        sections.settlement_iso20022 = statsOf(iso, ['quote', 'create', 'deposit', 'get', 'settlement']);
        if (iso.errorSamples.length) notes.push(`ISO 20022 settlement errors: ${iso.errorSamples.join(' | ')}`);
      }
      if (runs('settlement')) {
        sections.ceiling = statsOf(ceiling, ['ceiling']);
        if (ceiling.errorSamples.length) notes.push(`ceiling errors: ${ceiling.errorSamples.join(' | ')}`);
        ratios.push({
          name: 'settlement_ratio',
          value: settlementRps / ceiling.stats('ceiling').rps,
          target: { op: '>=', value: 0.7 },
          formula: 'settlements/s / engine ceiling workflows/s',
        });
      }
      readables = completed.map(({ id, party }) => ({ id, partner: party.partner }));
      readPath = '/v1/transactions/';
    } else {
      if (!hasSettlement)
        notes.push(
          'fiat to fiat is not on this branch: GET measured on customers; no settlement, ceiling or 2-worker runs',
        );
      log('creating customers to read');
      const customers = await inParallel(
        Array.from({ length: 64 }, (_, index) => index),
        8,
        async (index) => {
          const partner = partners[index % partners.length]!;
          return { id: await createCustomer(partner, index), partner };
        },
      );
      readables = customers;
      readPath = '/v1/customers/';
    }

    const table = readPath.includes('transactions') || !classic ? 'transactions' : 'customers';
    await stack.startFloor(table);
    if (runs('read')) {
      log(
        `GET ${readPath}{id} against the bare floor on ${table}: ${phase.rounds} rounds of ${phase.durationMs / 1000} s`,
      );
      const reads = await readPhase(stack.floorUrl, readPath, readables, phase, {
        api_get: () => stack.cpu(['api']),
        floor_prisma: () => stack.cpu(['floor']),
        floor_pg: () => stack.cpu(['floor']),
      });
      sections.read = [
        reads.api_get!.stats('api_get'),
        reads.floor_prisma!.stats('floor_prisma'),
        reads.floor_pg!.stats('floor_pg'),
      ];
      const apiGet = reads.api_get!.stats('api_get');
      const floorPrisma = reads.floor_prisma!.stats('floor_prisma');
      ratios.push(
        {
          name: 'get_p99_ratio',
          value: apiGet.p99 / floorPrisma.p99,
          target: { op: '<=', value: 1.5 },
          formula: `GET ${readPath}{id} p99 / Prisma floor p99`,
        },
        {
          name: 'get_rps_ratio',
          value: apiGet.rps / floorPrisma.rps,
          target: { op: '>=', value: 0.6 },
          formula: `GET ${readPath}{id} per s / Prisma floor per s`,
        },
      );
    }

    if (runs('quote')) {
      log(
        `POST /v1/quote/fiat-to-fiat against a no-op workflow start: ${phase.rounds} rounds of ${phase.durationMs / 1000} s`,
      );
      const quotes = await quotePhase(stack.floorUrl, partners, phase, {
        quote: () => stack.cpu(['api', 'worker-1', 'temporal']),
        noop_start: () => stack.cpu(['floor', 'engine-worker', 'temporal']),
      });
      const quote = quotes.quote!.stats('quote');
      const noop = quotes.noop_start!.stats('noop_start');
      sections.quote = [quote, noop];
      ratios.push({
        name: 'quote_ratio',
        value: quote.rps / noop.rps,
        target: { op: '>=', value: 0.7 },
        formula: 'quotes/s / no-op workflow starts/s',
      });
    }

    if (hasSettlement && !options.attach && runs('settlement')) {
      log('starting a second worker');
      await stack.startWorker(2);
      log(`fiat to fiat with 2 workers: ${options.settlements} settlements at concurrency ${options.concurrency}`);
      const run = await settle(['worker-1', 'worker-2'], options.settlements);
      sections['settlement (2 workers)'] = statsOf(run.recorder, ['settlement']);
      ratios.push({
        name: 'worker_scaling',
        value: run.recorder.stats('settlement').rps / settlementRps!,
        target: null,
        formula: 'settlements/s with 2 worker processes / with 1',
      });
    }

    let scale: ScaleResult | undefined;
    if (runs('scale')) {
      if (table !== 'transactions') throw new Error('the scale section needs fiat to fiat on this branch');
      log(`scale: a partner with ${SMALL_ROWS} rows against one with ${options.scaleRows}`);
      const scalePartners = await createPartners(stack.database.url, stack.apiUrl, 2);
      partners.push(...scalePartners);
      scale = await scalePhase(stack, scalePartners, {
        rows: options.scaleRows,
        concurrency: options.scaleConcurrency,
        // Short turns, many of them: the two partners see the same moments of a shared machine.
        durationMs: options.quick ? 1_500 : 2_000,
        warmupMs: 300,
        rounds: options.quick ? 4 : 6,
      });
      sections.list = scale.list;
      ratios.push(...scale.ratios);
      notes.push(...scale.notes.map((note) => `scale: ${note}`));
    }

    if (deadlocksBefore !== null) {
      // From the first settlement to the end of the last: the read and quote sections between post nothing.
      log('waiting for PostgreSQL to flush its counters, then counting deadlocks');
      await pause(statsFlushMs);
      ratios.push({
        name: 'deadlocks',
        value: (await deadlocksSoFar(stack.database.url)) - deadlocksBefore,
        target: { op: '<=', value: 0 },
        formula: 'PostgreSQL deadlocks (pg_stat_database) during the settlement runs, 1 and 2 workers',
        digits: 0,
      });
    }

    recordPeaks();
    const underLoad = sampler.stop();
    const memory: BenchResult['memory_mb'] = {};
    for (const name of Object.keys(pids())) {
      if (peaks[name] === undefined && underLoad[name] === undefined) continue;
      memory[name] = { peak: peaks[name] ?? null, under_load: underLoad[name] ?? null };
    }
    const workerPeak = memory['worker-1']?.peak ?? null;
    ratios.push({
      name: 'worker_peak_rss_mb',
      value: workerPeak,
      target: { op: '<=', value: 300 },
      formula: 'peak resident memory (VmHWM) of the worker process, MB',
    });
    if (options.attach && !process.env.BENCH_WORKER_PID)
      notes.push('attached: set BENCH_API_PID and BENCH_WORKER_PID to measure memory');

    const result: BenchResult = {
      started_at: startedAt.toISOString(),
      finished_at: new Date().toISOString(),
      machine: { cpus: os.cpus().length, load_before: loadBefore, load_after: machineLoad(), node: process.version },
      options: { ...options },
      sections,
      ratios: Object.fromEntries(ratios.map((ratio) => [ratio.name, ratio.value])),
      targets: Object.fromEntries(
        ratios
          .filter((ratio) => ratio.target)
          .map((ratio) => [ratio.name, `${ratio.target!.op} ${ratio.target!.value}`]),
      ),
      memory_mb: memory,
      workflow_shapes: shapes,
      ...(scale && { scale }),
      notes,
    };
    const telemetryMb = await stack.exportedTelemetryMb();
    if (telemetryMb !== null) {
      notes.push(`telemetry on: metrics served, every span exported (${telemetryMb.toFixed(1)} MB of OTLP JSON)`);
      log(notes.at(-1)!);
    }
    const files = writeResults(resultsDir, result, ratios);
    if (scale) {
      for (const plan of scale.plans) console.error(`\n[bench] plan of ${plan.read}:\n${plan.statements.join('\n\n')}`);
      console.log(`${formatScale(scale)}\n`);
    }
    console.log(formatTable(result, ratios));
    log(`wrote ${path.relative(projectRoot, files.json)} and ${path.relative(projectRoot, files.svg)}`);
  } finally {
    sampler.stop();
    for (const partner of partners) partner.api.close();
    await temporalConnection?.close();
    await stack.stop();
  }
}

function envPid(name: string): number | undefined {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : undefined;
}

function describeShapes(quote: MeasuredShape, settlement: MeasuredShape) {
  return {
    quote: { ...totals(quote), shape: bareShape(quote) },
    settlement: { ...totals(settlement), shape: bareShape(settlement) },
  };
}
