// What an operator's monitoring sees, for the observability test: a Prometheus scrape parsed into series, and an
// OTLP/HTTP trace collector (JSON) keeping the spans the processes export, printable as trees.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scrape: `name{label="value",...}` (labels sorted) -> value. */
export type Scrape = Map<string, number>;

export async function scrape(url: string): Promise<{ text: string; series: Scrape }> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`scrape of ${url} answered ${response.status}`);
  const text = await response.text();
  const series: Scrape = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const [, name, labels = '', value] = match as unknown as [string, string, string | undefined, string];
    series.set(seriesKey(name as string, parseLabels(labels)), Number(value));
  }
  return { text, series };
}

function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const match of text.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
    labels[match[1] as string] = match[2] as string;
  }
  return labels;
}

export function seriesKey(name: string, labels: Record<string, string> = {}): string {
  const sorted = Object.keys(labels)
    .sort()
    .map((key) => `${key}="${labels[key]}"`);
  return sorted.length ? `${name}{${sorted.join(',')}}` : name;
}

/** The sum of every series of `name` whose labels include `labels` (0 when none). */
export function total(series: Scrape, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const [key, value] of series) {
    const [seriesName, rest = ''] = key.split(/\{(.*)\}$/, 2) as [string, string?];
    if (seriesName !== name) continue;
    const have = parseLabels(rest);
    if (Object.entries(labels).every(([label, wanted]) => have[label] === wanted)) sum += value;
  }
  return sum;
}

/** Names of the samples of a scrape (histograms as their _bucket, _sum and _count). */
export function sampleNames(series: Scrape): Set<string> {
  return new Set([...series.keys()].map((key) => key.replace(/\{.*$/, '')));
}

export interface ExportedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  startTimeUnixNano: string;
  /** Spans this one follows from without being their child. */
  links?: Array<{ traceId: string; spanId: string }>;
}

interface OtlpJsonValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpJsonAttribute {
  key: string;
  value: OtlpJsonValue;
}
interface OtlpJsonBody {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpJsonAttribute[] };
    scopeSpans?: Array<{
      spans?: Array<Omit<ExportedSpan, 'service' | 'attributes'> & { attributes?: OtlpJsonAttribute[] }>;
    }>;
  }>;
}

function attributesOf(list: OtlpJsonAttribute[] = []): Record<string, unknown> {
  return Object.fromEntries(
    list.map(({ key, value }) => [key, value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue]),
  );
}

/** A trace collector speaking OTLP/HTTP with JSON bodies (what @opentelemetry/exporter-trace-otlp-http sends). */
export class OtlpCollector {
  readonly spans: ExportedSpan[] = [];

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<OtlpCollector> {
    let collector: OtlpCollector | undefined;
    const server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (request.url === '/v1/traces') collector?.receive(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        response.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    collector = new OtlpCollector(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return collector;
  }

  private receive(body: OtlpJsonBody): void {
    for (const resourceSpans of body.resourceSpans ?? []) {
      const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '');
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          this.spans.push({
            ...span,
            parentSpanId: span.parentSpanId ?? '',
            service,
            attributes: attributesOf(span.attributes),
          });
        }
      }
    }
  }

  trace(traceId: string): ExportedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  /** The chain of ancestors of a span, nearest first (as far as they were exported). */
  ancestors(span: ExportedSpan): ExportedSpan[] {
    const byId = new Map(this.trace(span.traceId).map((each) => [each.spanId, each]));
    const chain: ExportedSpan[] = [];
    for (let parent = byId.get(span.parentSpanId); parent; parent = byId.get(parent.parentSpanId)) chain.push(parent);
    return chain;
  }

  /** A trace as an indented tree: `service  name`, children in start order. */
  printTree(traceId: string): string {
    const spans = this.trace(traceId).sort((a, b) =>
      BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1,
    );
    const ids = new Set(spans.map((span) => span.spanId));
    const lines: string[] = [];
    const print = (parentId: string, depth: number) => {
      for (const span of spans.filter((each) =>
        depth === 0 ? !ids.has(each.parentSpanId) : each.parentSpanId === parentId,
      )) {
        lines.push(`${'  '.repeat(depth)}${span.name}  [${span.service}]`);
        print(span.spanId, depth + 1);
      }
    };
    print('', 0);
    return lines.join('\n');
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
