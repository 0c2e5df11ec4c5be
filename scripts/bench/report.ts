// The results of `npm run bench`: a table on stdout, bench-results/latest.json (and runs/<start>.json) and bench-results/latest.svg
// (throughput and latency percentiles; drawn here, no chart library needed for a few bars).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { OpStats } from './load';

export interface Ratio {
  name: string;
  value: number | null;
  /** `>=` or `<=` the target; null when there is no target. */
  target: { op: '>=' | '<='; value: number } | null;
  /** How it was computed, for the reader of the table. */
  formula: string;
  /** Decimal places shown (default 2; a count shows none). */
  digits?: number;
}

export interface BenchResult {
  started_at: string;
  finished_at: string;
  machine: { cpus: number; load_before: number[]; load_after: number[]; node: string };
  options: Record<string, unknown>;
  /** Sections of measured operations, e.g. read: [api_get, floor_prisma, floor_pg]. */
  sections: Record<string, OpStats[]>;
  ratios: Record<string, number | null>;
  targets: Record<string, string>;
  memory_mb: Record<string, { peak: number | null; under_load: number | null }>;
  /** What one settlement makes the engine do (from its history), and the ceiling's copy of it. */
  workflow_shapes?: unknown;
  /** The scale section (scripts/bench/scale.ts): per list read, the small and the large partner, and the plans. */
  scale?: unknown;
  notes: string[];
}

const fixed = (value: number | null | undefined, digits = 1) =>
  value === null || value === undefined || Number.isNaN(value) ? '-' : value.toFixed(digits);

/** CPU per operation of each serving process, e.g. `api 1.9 + worker-1 0.8 + temporal 2.1`. */
function cpuText(stat: OpStats): string {
  if (!stat.cpu_ms_per_op) return '';
  return Object.entries(stat.cpu_ms_per_op)
    .map(([name, ms]) => `${name} ${ms.toFixed(2)}`)
    .join(' + ');
}

export function ratioPasses(ratio: Ratio): boolean | null {
  if (!ratio.target || ratio.value === null || Number.isNaN(ratio.value)) return null;
  return ratio.target.op === '>=' ? ratio.value >= ratio.target.value : ratio.value <= ratio.target.value;
}

export function formatTable(result: BenchResult, ratios: Ratio[]): string {
  const lines: string[] = [];
  const header = [
    'section',
    'operation',
    'count',
    'errors',
    'per s',
    'p50 ms',
    'p95 ms',
    'p99 ms',
    'max ms',
    'cpu ms/op',
  ];
  const rows: string[][] = [];
  for (const [section, stats] of Object.entries(result.sections)) {
    for (const stat of stats) {
      rows.push([
        section,
        stat.op,
        String(stat.count),
        String(stat.errors),
        fixed(stat.rps),
        fixed(stat.p50),
        fixed(stat.p95),
        fixed(stat.p99),
        fixed(stat.max),
        cpuText(stat),
      ]);
    }
  }
  lines.push(...columns([header, ...rows]));
  lines.push('');
  const ratioRows = ratios.map((ratio) => {
    const passes = ratioPasses(ratio);
    return [
      ratio.name,
      fixed(ratio.value, ratio.digits ?? 2),
      ratio.target ? `${ratio.target.op} ${ratio.target.value}` : '',
      passes === null ? '' : passes ? 'met' : 'NOT met',
      ratio.formula,
    ];
  });
  lines.push(...columns([['ratio', 'value', 'target', '', 'how'], ...ratioRows]));
  lines.push('');
  const memoryRows = Object.entries(result.memory_mb).map(([name, memory]) => [
    name,
    fixed(memory.peak, 0),
    fixed(memory.under_load, 0),
  ]);
  lines.push(...columns([['process', 'peak RSS MB', 'max RSS under load MB'], ...memoryRows]));
  for (const note of result.notes) lines.push(`note: ${note}`);
  return lines.join('\n');
}

function columns(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  return rows.map((row) =>
    row
      .map((cell, column) =>
        column < 2 || column === row.length - 1 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!),
      )
      .join('  ')
      .trimEnd(),
  );
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Two panels: operations per second, and p50/p95/p99 latency, one bar group per operation. */
export function chartSvg(result: BenchResult, ratios: Ratio[]): string {
  const stats = Object.entries(result.sections).flatMap(([section, list]) =>
    list.filter((stat) => stat.count > 0).map((stat) => ({ label: `${section}: ${stat.op}`, stat })),
  );
  const width = 1000;
  const rowHeight = 22;
  const labelWidth = 260;
  const plotWidth = width - labelWidth - 120;
  const panelHeight = stats.length * rowHeight + 40;
  const latencyRow = 3 * 9 + 8;
  const latencyHeight = stats.length * latencyRow + 40;
  const ratioHeight = ratios.length * 18 + 40;
  const height = 50 + panelHeight + latencyHeight + ratioHeight + 20;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="22" font-size="16" font-weight="bold">npm run bench, ${escape(result.started_at)} ` +
      `(${result.machine.cpus} cores, load ${result.machine.load_before.map((load) => load.toFixed(1)).join(' ')})</text>`,
  );
  let y = 50;
  const maxRps = Math.max(...stats.map(({ stat }) => (Number.isFinite(stat.rps) ? stat.rps : 0)), 1);
  parts.push(`<text x="10" y="${y + 12}" font-weight="bold">Throughput (operations per second)</text>`);
  y += 24;
  for (const { label, stat } of stats) {
    const barWidth = (plotWidth * (Number.isFinite(stat.rps) ? stat.rps : 0)) / maxRps;
    parts.push(
      `<text x="${labelWidth - 6}" y="${y + 13}" text-anchor="end">${escape(label)}</text>`,
      `<rect x="${labelWidth}" y="${y + 2}" width="${barWidth.toFixed(1)}" height="${rowHeight - 6}" fill="#4477aa"/>`,
      `<text x="${labelWidth + barWidth + 4}" y="${y + 13}">${fixed(stat.rps)}</text>`,
    );
    y += rowHeight;
  }
  y += 16;
  const maxLatency = Math.max(...stats.map(({ stat }) => (Number.isFinite(stat.p99) ? stat.p99 : 0)), 1);
  const colours: [keyof OpStats, string][] = [
    ['p50', '#66ccee'],
    ['p95', '#ccbb44'],
    ['p99', '#ee6677'],
  ];
  parts.push(`<text x="10" y="${y + 12}" font-weight="bold">Latency, ms (p50 / p95 / p99, linear scale)</text>`);
  y += 24;
  for (const { label, stat } of stats) {
    parts.push(`<text x="${labelWidth - 6}" y="${y + 17}" text-anchor="end">${escape(label)}</text>`);
    colours.forEach(([key, colour], index) => {
      const value = stat[key] as number;
      const barWidth = (plotWidth * (Number.isFinite(value) ? value : 0)) / maxLatency;
      const top = y + index * 9;
      parts.push(
        `<rect x="${labelWidth}" y="${top}" width="${barWidth.toFixed(1)}" height="8" fill="${colour}"/>`,
        `<text x="${labelWidth + barWidth + 4}" y="${top + 8}" font-size="9">${key} ${fixed(value)}</text>`,
      );
    });
    y += latencyRow;
  }
  y += 16;
  parts.push(`<text x="10" y="${y + 12}" font-weight="bold">Ratios</text>`);
  y += 24;
  for (const ratio of ratios) {
    const passes = ratioPasses(ratio);
    const colour = passes === null ? 'black' : passes ? '#228833' : '#cc3311';
    const target = ratio.target ? ` (target ${ratio.target.op} ${ratio.target.value})` : '';
    parts.push(
      `<text x="20" y="${y + 12}" fill="${colour}">${escape(`${ratio.name} = ${fixed(ratio.value, ratio.digits ?? 2)}${target}`)}</text>`,
    );
    y += 18;
  }
  parts.push('</svg>');
  return parts.join('\n');
}

export function writeResults(directory: string, result: BenchResult, ratios: Ratio[]): { json: string; svg: string } {
  mkdirSync(directory, { recursive: true });
  const json = path.join(directory, 'latest.json');
  const svg = path.join(directory, 'latest.svg');
  writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
  // Every run kept as well: runs compared side by side, and the error samples of a run an hour ago.
  mkdirSync(path.join(directory, 'runs'), { recursive: true });
  writeFileSync(
    path.join(directory, 'runs', `${result.started_at.replace(/[:.]/g, '-')}.json`),
    `${JSON.stringify(result, null, 2)}\n`,
  );
  writeFileSync(svg, chartSvg(result, ratios));
  return { json, svg };
}
