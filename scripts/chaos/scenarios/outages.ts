// Scenario 4, dependency outages under load: PostgreSQL stopped and started (and restarted at once), the Temporal dev
// server killed or stopped and started again on its persisted database, while clients keep creating customers and
// quotes (with Idempotency-Keys), reading them, listing and asking /health/ready. Every answer must come within the
// documented deadline (REQUEST_TIMEOUT_SECONDS, plus a little for the runner) and be either what the operation
// documents or 503 service_unavailable in the error shape with Retry-After: never a hang, never a 500, never a
// dropped connection (the API process stays up). After each outage the system must recover by itself (ready, and a
// create succeeds) within a bound; at the end every key has exactly one resource and every resource its workflow.
import { randomUUID } from 'node:crypto';
import { errorShapeProblem, HttpOutcome, HttpRequest } from '../http';
import {
  checkEveryResourceHasItsWorkflow,
  checkOneResourcePerKey,
  isFinal,
  KeyedRequest,
  retryUntilFinal,
} from '../invariants';
import { individualCustomer, payinQuote } from '../fixtures';
import { randomSource, RunSize, ScenarioReport } from '../report';
import { ABANDONED_CLAIM_SECONDS, ChaosPartner, ChaosSystem, REQUEST_TIMEOUT_SECONDS } from '../system';
import { pause, waitUntil } from '../../lib/wait';

/** What the runner adds to the API's deadline: connection set-up and its own scheduling on a busy machine. */
const DEADLINE_SLACK_MS = 2_000;
const RECOVERY_LIMIT_MS = 90_000;
const CLIENTS = 6;

type Outage = { name: string; begin(system: ChaosSystem): Promise<void>; end(system: ChaosSystem): Promise<void> };

const outages = {
  postgresStopped: {
    name: 'PostgreSQL stopped',
    begin: (system) => system.postgres.stop(),
    end: (system) => system.postgres.start(),
  },
  postgresRestarted: {
    name: 'PostgreSQL restarted',
    begin: async (system) => {
      await system.postgres.stop();
      await system.postgres.start();
    },
    end: async () => undefined,
  },
  temporalKilled: {
    name: 'Temporal killed',
    begin: (system) => system.temporalServer.kill('SIGKILL'),
    end: (system) => system.temporalServer.start(),
  },
  temporalStopped: {
    name: 'Temporal stopped',
    begin: (system) => system.temporalServer.kill('SIGTERM'),
    end: (system) => system.temporalServer.start(),
  },
  /** --engine server: one of the two workers killed; the other carries the load's workflows meanwhile. */
  oneWorkerKilled: {
    name: 'one of two workers killed',
    begin: (system) => system.workers[0]!.kill('SIGKILL'),
    end: (system) => system.workers[0]!.start(),
  },
} satisfies Record<string, Outage>;

class Load {
  readonly keyed: KeyedRequest[] = [];
  readonly statusCounts: Record<string, number> = {};
  private readonly customerIds: string[] = [];
  private running = true;
  requests = 0;
  slowestMs = 0;

  constructor(
    private readonly partner: ChaosPartner,
    private readonly report: ScenarioReport,
    private readonly random: () => number,
    private readonly maxRequests: number,
  ) {}

  stop(): void {
    this.running = false;
  }

  private judge(request: HttpRequest, outcome: HttpOutcome, expected: number): void {
    const what = `${request.method} ${request.path}`;
    const limit = REQUEST_TIMEOUT_SECONDS * 1000 + DEADLINE_SLACK_MS;
    if (outcome.kind === 'network') {
      this.count('network');
      this.report.fail(
        `${what}: no answer (${outcome.code} after ${outcome.ms} ms): the API must answer during outages`,
      );
      return;
    }
    this.count(String(outcome.status));
    this.slowestMs = Math.max(this.slowestMs, outcome.ms);
    this.report.check(
      outcome.ms <= limit,
      () => `${what}: answered after ${outcome.ms} ms, past the deadline (${limit} ms)`,
    );
    if (outcome.status === expected) return;
    if (outcome.status === 503 || (outcome.status === 409 && request.method === 'POST')) {
      const problem = errorShapeProblem(outcome);
      this.report.check(problem === null, () => `${what}: ${outcome.status} ${problem}`);
      return;
    }
    this.report.fail(`${what}: ${outcome.status} ${outcome.text.slice(0, 300)}`);
  }

  private count(key: string): void {
    this.statusCounts[key] = (this.statusCounts[key] ?? 0) + 1;
  }

  async client(): Promise<void> {
    const { api } = this.partner;
    while (this.running && this.requests < this.maxRequests) {
      this.requests += 1;
      const pick = this.random();
      if (pick < 0.5) {
        const [kind, request]: [string, HttpRequest] =
          pick < 0.3
            ? [
                'customer',
                {
                  method: 'POST',
                  path: '/v1/customers',
                  json: individualCustomer({ email: `${randomUUID()}@example.com` }),
                },
              ]
            : ['quote', { method: 'POST', path: '/v1/quote', json: payinQuote() }];
        const keyed: KeyedRequest = { key: randomUUID(), kind, request, answers: [] };
        this.keyed.push(keyed);
        const outcome = await api.send({ ...request, headers: { 'Idempotency-Key': keyed.key } });
        keyed.answers.push(outcome);
        this.judge(request, outcome, 201);
        if (kind === 'customer' && outcome.kind === 'response' && outcome.status === 201)
          this.customerIds.push((outcome.body as { id: string }).id);
      } else {
        const known = this.customerIds[Math.floor(this.random() * this.customerIds.length)];
        const request: HttpRequest =
          pick < 0.7 && known
            ? { method: 'GET', path: `/v1/customers/${known}` }
            : pick < 0.9
              ? { method: 'GET', path: '/v1/customers?limit=5' }
              : { method: 'GET', path: '/health/ready' };
        this.judge(request, await api.send(request), 200);
      }
      await pause(20 + Math.floor(this.random() * 80));
    }
  }
}

/**
 * Recovered: ready again, and a create answers 201 (one key for all attempts: one quote per probe). False when not
 * within RECOVERY_LIMIT_MS.
 */
async function recovered(system: ChaosSystem, partner: ChaosPartner): Promise<boolean> {
  const key = randomUUID();
  const body = payinQuote();
  return waitUntil(
    async () => {
      if (!(await system.isReady())) return false;
      const create = await partner.api.send({
        method: 'POST',
        path: '/v1/quote',
        json: body,
        headers: { 'Idempotency-Key': key },
      });
      return create.kind === 'response' && create.status === 201;
    },
    RECOVERY_LIMIT_MS,
    500,
  );
}

export async function outagesScenario(system: ChaosSystem, report: ScenarioReport, size: RunSize): Promise<void> {
  const random = randomSource(size.seed + 4);
  const outageMs = (size.quick ? 6 : 20) * 1000;
  const plan: Outage[] = size.quick
    ? [outages.postgresStopped, outages.temporalKilled]
    : [
        outages.postgresStopped,
        outages.temporalKilled,
        outages.postgresRestarted,
        outages.temporalStopped,
        outages.postgresStopped,
        outages.temporalKilled,
      ];
  if (system.workers.length > 1) plan.push(outages.oneWorkerKilled);
  const partner = await system.createPartner('chaos outages');
  const load = new Load(partner, report, random, size.quick ? 3_000 : 20_000);
  const clients = Promise.all(Array.from({ length: CLIENTS }, () => load.client()));
  const recoverySeconds: string[] = [];
  try {
    await pause(2000);
    for (const outage of plan) {
      await outage.begin(system);
      report.kills += 1;
      await pause(outageMs);
      await outage.end(system);
      report.restarts += 1;
      const since = Date.now();
      const ok = await recovered(system, partner);
      recoverySeconds.push(((Date.now() - since) / 1000).toFixed(1));
      report.check(ok, () => `${outage.name}: not recovered ${RECOVERY_LIMIT_MS / 1000} s after it came back`);
      await pause(2000);
    }
  } finally {
    load.stop();
    await clients;
  }
  report.notes.requests = load.requests;
  report.notes.statuses = Object.entries(load.statusCounts)
    .map(([status, count]) => `${status}:${count}`)
    .join(',');
  report.notes.slowest_ms = load.slowestMs;
  report.notes.recovery_s = recoverySeconds.join(',');
  report.check((load.statusCounts['503'] ?? 0) > 0, () => 'no request answered 503: the outages were not felt');

  // Every create that got no final answer is retried with its key: one resource per key, none half-made.
  const unsettled = load.keyed.filter((keyed) => !keyed.answers.some(isFinal));
  report.notes.retried = unsettled.length;
  const finals = await retryUntilFinal(partner.api, load.keyed, (ABANDONED_CLAIM_SECONDS + 60) * 1000);
  report.cases = load.keyed.length;
  const resourceOfKey = checkOneResourcePerKey(load.keyed, finals, report);
  const named = new Set(resourceOfKey.values());
  const [customers, quotes] = await Promise.all([
    system.prisma.customer.findMany({ where: { partnerId: partner.partnerId }, select: { id: true } }),
    system.prisma.quote.findMany({ where: { partnerId: partner.partnerId }, select: { id: true } }),
  ]);
  // Quotes also come from the recovery probes (not keyed here): count only customers strictly.
  for (const row of customers)
    report.check(named.has(row.id), () => `customer ${row.id} exists but no key answered it (a 503 left it behind)`);
  const customerKeys = load.keyed.filter((keyed) => keyed.kind === 'customer').length;
  report.check(customers.length === customerKeys, () => `${customers.length} customers for ${customerKeys} keys`);
  const quoteKeys = load.keyed.filter((keyed) => keyed.kind === 'quote').length;
  report.check(
    quotes.length === quoteKeys + plan.length,
    () => `${quotes.length} quotes for ${quoteKeys} keys and ${plan.length} recovery probes`,
  );
  report.eventsChecked = await system.prisma.event.count({ where: { partnerId: partner.partnerId } });
  const createdEvents = await system.prisma.event.groupBy({
    by: ['resourceId'],
    where: { partnerId: partner.partnerId, eventType: 'customer.created' },
    _count: { _all: true },
  });
  report.check(
    createdEvents.length === customers.length,
    () => `${createdEvents.length} customer.created events for ${customers.length} customers`,
  );
  for (const group of createdEvents)
    report.check(
      group._count._all === 1,
      () => `customer.created of ${group.resourceId} recorded ${group._count._all} times`,
    );
  await checkEveryResourceHasItsWorkflow(system, partner.partnerId, report);
}
