// Observability as an operator wires it (docs/observability.md): the API and the worker as real processes with
// METRICS_PORT and OTEL_EXPORTER_OTLP_ENDPOINT set, a sandbox settlement through the API, then what Prometheus would
// scrape and what an OTLP collector receives; and the alert rules and dashboard in ops/, checked with promtool and
// against a real scrape.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { parse as parseYaml } from 'yaml';
import { freePort } from '../scripts/lib/ports';
import { eventually } from './support/eventually';
import { Harness, startHarness, TestPartner } from './support/harness';
import { projectRoot } from './support/paths';
import { ServiceProcess, startApiProcess, startWorkerProcess } from './support/service-processes';
import { ExportedSpan, OtlpCollector, sampleNames, scrape, Scrape, total } from './support/telemetry';
import {
  createTransaction,
  deposit,
  Parties,
  setUpParties,
  TransactionBody,
  waitForStatus,
} from './support/transactions';
import { WebhookReceiver } from './support/webhook-receiver';
import { configureWebhooks } from './support/webhooks';

let harness: Harness;
let collector: OtlpCollector;
let receiver: WebhookReceiver;
let api: ServiceProcess;
let worker: ServiceProcess;
let parties: Parties;
const metricsUrl = { api: '', worker: '' };
let apiUrl = '';
let settled: TransactionBody;
const artifacts = path.join(projectRoot, 'test-artifacts');

beforeAll(async () => {
  collector = await OtlpCollector.start();
  receiver = await WebhookReceiver.start();
  harness = await startHarness({}, { inProcessWorker: false });
  const [apiMetricsPort, workerMetricsPort, sdkMetricsPort] = [await freePort(), await freePort(), await freePort()];
  // Every new trace kept, and exported within 100 ms instead of the default 5 s.
  const tracing = {
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_BSP_SCHEDULE_DELAY: '100',
    TRACES_SAMPLE_RATIO: '1',
  };
  worker = await startWorkerProcess(harness, {
    env: {
      ...tracing,
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      // Workflows leave the cache and are replayed from history: their spans must keep the ids their children got.
      WORKER_MAX_CACHED_WORKFLOWS: '2',
      METRICS_PORT: String(workerMetricsPort),
      METRICS_HOST: '127.0.0.1',
      TEMPORAL_SDK_METRICS_PORT: String(sdkMetricsPort),
    },
  });
  const started = await startApiProcess(harness, {
    // The test's webhook receiver listens on loopback (a sandbox-only allowance).
    env: {
      ...tracing,
      METRICS_PORT: String(apiMetricsPort),
      METRICS_HOST: '127.0.0.1',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    },
  });
  api = started.service;
  apiUrl = started.url;
  metricsUrl.api = `http://127.0.0.1:${apiMetricsPort}/metrics`;
  metricsUrl.worker = `http://127.0.0.1:${workerMetricsPort}/metrics`;
  const created = await harness.createPartner('Observability');
  // The partner calls the API process, not the harness's in-process app.
  const partner: TestPartner = { ...created, api: request.agent(started.url).set('Authorization', created.apiKey) };
  await configureWebhooks(partner, receiver.url, ['payin.completed']);
  parties = await setUpParties(harness, partner);
  mkdirSync(artifacts, { recursive: true });
});

afterAll(async () => {
  // Every exported span, for reading a failure.
  if (collector)
    writeFileSync(path.join(artifacts, 'observability-spans.json'), JSON.stringify(collector.spans, null, 1));
  await api?.stop();
  await worker?.stop();
  await harness?.teardown();
  await receiver?.close();
  await collector?.close();
});

/** `after - before` of a series sum. */
const moved = (before: Scrape, after: Scrape, name: string, labels: Record<string, string> = {}) =>
  total(after, name, labels) - total(before, name, labels);

describe('metrics', () => {
  it('after a sandbox settlement, the scrapes of both processes show its requests, workflow calls, status, ledger and webhook', async () => {
    const before = { api: (await scrape(metricsUrl.api)).series, worker: (await scrape(metricsUrl.worker)).series };

    const transaction = await createTransaction(parties);
    await deposit(parties, transaction);
    await waitForStatus(harness, transaction.id, 'completed');
    await receiver.waitFor((requests) => requests.some((each) => each.body.event_type === 'payin.completed'));
    settled = transaction;

    const apiAfter = await scrape(metricsUrl.api);
    // PostgreSQL's statistics (ledger postings) reach the view within seconds of the commits (at most ~10 s idle).
    // The settlement posts at least 3 (fees and clearing, the conversion, the payout).
    const workerAfter = await eventually(
      () => scrape(metricsUrl.worker),
      (scraped) =>
        total(scraped.series, 'payments_ledger_postings_total') >=
        total(before.worker, 'payments_ledger_postings_total') + 3,
    );
    writeFileSync(path.join(artifacts, 'observability-scrape-api.txt'), apiAfter.text);
    writeFileSync(path.join(artifacts, 'observability-scrape-worker.txt'), workerAfter.text);
    const after = { api: apiAfter.series, worker: workerAfter.series };

    // API: requests by route template (never an id), method and status class, and the workflow calls.
    const created = {
      http_route: '/v1/fiat-to-fiat',
      http_request_method: 'POST',
      http_response_status_class: '2xx',
    };
    expect(moved(before.api, after.api, 'http_server_request_duration_seconds_count', created)).toBe(1);
    expect(
      moved(before.api, after.api, 'http_server_request_duration_seconds_count', {
        http_route: '/v1/sandbox/transactions/{id}/deposit',
        http_request_method: 'POST',
      }),
    ).toBe(1);
    expect(apiAfter.text).not.toContain(transaction.id);
    expect(
      moved(before.api, after.api, 'payments_temporal_client_calls_total', { operation: 'start', outcome: 'ok' }),
    ).toBeGreaterThanOrEqual(1);
    expect(total(after.api, 'db_client_connection_count', { db_client_connection_pool_name: 'api' })).toBeGreaterThan(
      0,
    );

    // Worker: the settlement finished, its deposit-to-completed time, the ledger, the webhook, the SDK's own metrics.
    const fiatToFiat = { transaction_type: 'fiat_to_fiat' };
    expect(
      moved(before.worker, after.worker, 'payments_settlements_finished_total', { ...fiatToFiat, status: 'completed' }),
    ).toBe(1);
    expect(
      moved(before.worker, after.worker, 'payments_settlement_deposit_to_completed_seconds_count', fiatToFiat),
    ).toBe(1);
    expect(
      moved(before.worker, after.worker, 'payments_settlement_deposit_to_completed_seconds_sum', fiatToFiat),
    ).toBeGreaterThan(0);
    expect(moved(before.worker, after.worker, 'payments_ledger_postings_total')).toBeGreaterThanOrEqual(3);
    expect(
      moved(before.worker, after.worker, 'payments_webhook_delivery_attempts_total', { outcome: 'succeeded' }),
    ).toBeGreaterThanOrEqual(1);
    expect(moved(before.worker, after.worker, 'temporal_activity_execution_latency_seconds_count')).toBeGreaterThan(0);
    for (const gauge of [
      'payments_transactions_in_error',
      'payments_webhook_undelivered_oldest_age_seconds',
      'payments_workflow_start_backlog',
    ]) {
      expect(after.worker.has(gauge)).toBe(true);
    }
  });
});

describe('traces', () => {
  const named = (spans: ExportedSpan[], pattern: RegExp) => spans.filter((span) => pattern.test(span.name));

  it('follow the partner request through the Temporal start, the workflow, its activities and their SQL', async () => {
    expect(settled).toBeDefined();
    const server = await eventually(
      async () => named(collector.spans, /^POST \/v1\/fiat-to-fiat$/),
      (spans) => spans.length > 0,
    );
    expect(server).toHaveLength(1);
    const traceId = (server[0] as ExportedSpan).traceId;
    const chainOf = (span: ExportedSpan) => collector.ancestors(span).map((each) => each.name);
    // The workflow runs long after the request answered: wait for a settlement activity's SQL to be exported.
    const sql = await eventually(
      async () =>
        collector
          .trace(traceId)
          .filter((span) => span.service === 'payments-worker' && span.attributes['db.system'] === 'postgresql')
          .filter((span) => chainOf(span).includes('RunWorkflow:settlementWorkflow')),
      (spans) => spans.length > 0,
    );
    const chain = chainOf(sql[0] as ExportedSpan);
    const order = [
      /^RunActivity:/,
      /^StartActivity:/,
      /^RunWorkflow:settlementWorkflow$/,
      /^StartWorkflow:settlementWorkflow$/,
      /^POST \/v1\/fiat-to-fiat$/,
    ].map((pattern) => chain.findIndex((name) => pattern.test(name)));
    expect(order.every((index) => index >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order); // nearest first: activity ... HTTP request
    // The API's own SQL (the write before the start) is in the same trace, under the request.
    expect(
      collector
        .trace(traceId)
        .some((span) => span.service === 'payments-api' && span.attributes['db.system'] === 'postgresql'),
    ).toBe(true);
    writeFileSync(path.join(artifacts, 'observability-trace.txt'), collector.printTree(traceId));
  });

  it('follow the sandbox deposit into the running workflow (a Temporal update or signal)', async () => {
    const server = await eventually(
      async () => named(collector.spans, /^POST \/v1\/sandbox\/transactions\/\{id\}\/deposit$/),
      (spans) => spans.length > 0,
    );
    const trace = await eventually(
      async () => collector.trace((server[0] as ExportedSpan).traceId),
      (spans) => spans.some((span) => span.service === 'payments-worker'),
    );
    const client = named(trace, /^(StartWorkflowUpdate|SignalWorkflow|StartWorkflow):/).filter(
      (span) => span.service === 'payments-api',
    );
    expect(client.length).toBeGreaterThan(0);
    expect(
      named(trace, /^(HandleUpdate|HandleSignal|RunWorkflow|RunActivity):/).some(
        (span) => span.service === 'payments-worker',
      ),
    ).toBe(true);
    writeFileSync(
      path.join(artifacts, 'observability-trace-deposit.txt'),
      collector.printTree((server[0] as ExportedSpan).traceId),
    );
  });

  it('carry the webhook POST to the partner in the trace of the request that caused the event, linked to its delivery activity', async () => {
    const delivered = receiver.requests.find((each) => each.body.event_type === 'payin.completed');
    const traceparent = String(delivered?.headers.traceparent ?? '');
    const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(traceparent);
    expect(match).not.toBeNull();
    const [, traceId, spanId] = match as unknown as [string, string, string];
    const post = await eventually(
      async () => collector.spans.find((span) => span.traceId === traceId && span.spanId === spanId),
      (span) => span !== undefined,
    );
    expect(post).toMatchObject({ service: 'payments-worker', kind: 3 });
    const chain = collector.ancestors(post as ExportedSpan);
    // The POST, under the delivery's span, under the activity that recorded the event, ... under the partner's request.
    expect(chain[0]).toMatchObject({ name: 'WebhookDelivery:payin.completed', service: 'payments-worker' });
    const recordedBy = chain.findIndex((span) => /^RunActivity:/.test(span.name));
    const request = chain.findIndex((span) => span.service === 'payments-api' && /^POST \/v1\//.test(span.name));
    expect(recordedBy).toBeGreaterThan(0);
    expect(request).toBeGreaterThan(recordedBy);
    expect(chain.at(-1)).toBe(chain[request]); // the request is the trace's root
    // The delivery's span links to the activity that made the attempt (a trace of its own: the delivery workflow).
    const [link] = (chain[0] as ExportedSpan).links ?? [];
    expect(link).toBeDefined();
    const attempt = collector.spans.find((span) => span.spanId === link?.spanId);
    expect(attempt?.name).toBe('RunActivity:attemptWebhookDelivery');
    writeFileSync(path.join(artifacts, 'observability-trace-webhook.txt'), collector.printTree(traceId));
  });

  it("leave a request its partner marked unsampled without a span anywhere: its own, its workflows', their activities'", async () => {
    const traceId = randomBytes(16).toString('hex');
    const unsampled: Parties = {
      ...parties,
      partner: {
        ...parties.partner,
        api: request
          .agent(apiUrl)
          .set('Authorization', parties.partner.apiKey)
          .set('traceparent', `00-${traceId}-${randomBytes(8).toString('hex')}-00`),
      },
    };
    const transaction = await createTransaction(unsampled);
    await deposit(unsampled, transaction);
    await waitForStatus(harness, transaction.id, 'completed');
    await new Promise((resolve) => setTimeout(resolve, 1000)); // spans leave in batches every 100 ms
    expect(collector.trace(traceId)).toEqual([]);
    // Its workflows and their activities stayed out of traces too (not in a trace of their own). Webhook delivery
    // workflows are the outbox relay's, each attempt in a trace of its own linked from the causing trace's span.
    const workflowIdOf = (span: ExportedSpan) => String(span.attributes.temporalWorkflowId ?? '');
    expect(
      collector.spans
        .filter((span) => workflowIdOf(span).includes(transaction.id) && !workflowIdOf(span).startsWith('webhook-'))
        .map((span) => span.name),
    ).toEqual([]);
  });

  it('give every activity its parent, even in workflows replayed from history (a worker caching 2 workflows)', async () => {
    expect(settled).toBeDefined();
    // An activity's start span ends when its result is back; give the last ones time to be exported.
    const orphans = await eventually(
      async () => {
        const ids = new Set(collector.spans.map((span) => span.spanId));
        return collector.spans
          .filter((span) => /^RunActivity:/.test(span.name) && span.parentSpanId && !ids.has(span.parentSpanId))
          .map((span) => span.name);
      },
      (names) => names.length === 0,
    );
    expect(orphans).toEqual([]);
    expect(collector.spans.filter((span) => /^RunActivity:/.test(span.name)).length).toBeGreaterThan(5);
  });
});

describe('alert rules and dashboard (ops/)', () => {
  const rulesFile = path.join(projectRoot, 'ops', 'prometheus', 'payments-rules.yml');
  const dashboardFile = path.join(projectRoot, 'ops', 'grafana', 'payments-dashboard.json');

  it('the rules pass promtool check rules', () => {
    const promtool = execFileSync('bash', [path.join(projectRoot, 'scripts', 'promtool.sh')], {
      encoding: 'utf8',
    }).trim();
    const output = execFileSync(promtool, ['check', 'rules', rulesFile], { encoding: 'utf8' });
    expect(output).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('the dashboard is a Grafana dashboard with a Prometheus query on every panel', () => {
    const dashboard = JSON.parse(readFileSync(dashboardFile, 'utf8')) as GrafanaDashboard;
    expect(dashboard).toMatchObject({
      title: expect.any(String),
      uid: expect.any(String),
      schemaVersion: expect.any(Number),
    });
    const panels = dashboard.panels.filter((panel) => panel.type !== 'row');
    expect(panels.length).toBeGreaterThan(10);
    expect(new Set(dashboard.panels.map((panel) => panel.id)).size).toBe(dashboard.panels.length);
    for (const panel of panels) {
      expect({ panel: panel.title, gridPos: panel.gridPos }).toMatchObject({
        gridPos: { h: expect.any(Number), w: expect.any(Number), x: expect.any(Number), y: expect.any(Number) },
      });
      expect({ panel: panel.title, targets: panel.targets.length }).toMatchObject({ targets: expect.any(Number) });
      expect(panel.targets.every((target) => typeof target.expr === 'string' && target.expr.length > 0)).toBe(true);
      expect(panel.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
    }
  });

  it('every metric the rules and the dashboard name is in a real scrape of the API or the worker', async () => {
    expect(settled).toBeDefined(); // counters that only appear once moved have moved
    const names = new Set([
      ...sampleNames((await scrape(metricsUrl.api)).series),
      ...sampleNames((await scrape(metricsUrl.worker)).series),
    ]);
    const dashboard = JSON.parse(readFileSync(dashboardFile, 'utf8')) as GrafanaDashboard;
    const expressions = [
      ...dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr)),
      ...(parseYaml(readFileSync(rulesFile, 'utf8')) as RulesFile).groups.flatMap((group) =>
        group.rules.map((rule) => rule.expr),
      ),
    ];
    expect(expressions.length).toBeGreaterThan(10);
    const named = new Set(expressions.flatMap(metricNamesIn));
    expect(named.size).toBeGreaterThan(10);
    expect([...named].filter((name) => !names.has(name))).toEqual([]);
  });
});

interface RulesFile {
  groups: Array<{ name: string; rules: Array<{ alert?: string; record?: string; expr: string }> }>;
}

interface GrafanaDashboard {
  title: string;
  uid: string;
  schemaVersion: number;
  panels: Array<{
    id: number;
    type: string;
    title: string;
    gridPos: Record<string, number>;
    datasource?: unknown;
    targets: Array<{ expr: string }>;
  }>;
}

const promqlKeywords = new Set(['group_left', 'group_right']);

/** The metric names in a PromQL expression: identifiers (ours all have an underscore) that are not functions. */
function metricNamesIn(expression: string): string[] {
  const bare = expression
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // strings
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '') // label lists
    .replace(/\[[^\]]*\]/g, '') // ranges and subqueries
    .replace(/\$\{?\w+\}?/g, ''); // Grafana variables
  return [...bare.matchAll(/\b[a-zA-Z_:][a-zA-Z0-9_:]*\b(?!\s*\()/g)]
    .map((match) => match[0])
    .filter((word) => word.includes('_') && !promqlKeywords.has(word));
}
