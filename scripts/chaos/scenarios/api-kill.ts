// Scenario 2, API killed: bursts of creates (customers, quotes, external accounts), each with its own
// Idempotency-Key, with the API SIGKILLed in the middle of each burst and restarted; then every request is retried
// with its key until it has a final answer. Each key must yield exactly one resource: one 201 body per key (replays
// included), the database holding exactly the resources the keys named and no other, each with its one creation
// event, and every customer and quote with its workflow.
import { randomUUID } from 'node:crypto';
import { HttpRequest } from '../http';
import {
  checkEveryResourceHasItsWorkflow,
  checkOneResourcePerKey,
  isFinal,
  KeyedRequest,
  retryUntilFinal,
} from '../invariants';
import { createCustomer, individualCustomer, payinQuote, pixAccount } from '../fixtures';
import { randomSource, RunSize, ScenarioReport } from '../report';
import { ABANDONED_CLAIM_SECONDS, ChaosSystem } from '../system';
import { pause } from '../../lib/wait';

const CONCURRENCY = 12;

export async function apiKillScenario(system: ChaosSystem, report: ScenarioReport, size: RunSize): Promise<void> {
  const rounds = size.quick ? 2 : 6;
  const perRound = size.quick ? 40 : 120;
  const random = randomSource(size.seed + 2);
  const partner = await system.createPartner('chaos api-kill');
  const owner = await createCustomer(partner.api); // external accounts need a customer
  const all: KeyedRequest[] = [];

  for (let round = 0; round < rounds; round += 1) {
    const burst: KeyedRequest[] = Array.from({ length: perRound }, (_, index) => {
      const pick = random();
      const [kind, request]: [string, HttpRequest] =
        pick < 0.4
          ? [
              'customer',
              {
                method: 'POST',
                path: '/v1/customers',
                json: individualCustomer({ email: `k${round}-${index}@example.com` }),
              },
            ]
          : pick < 0.75
            ? [
                'quote',
                { method: 'POST', path: '/v1/quote', json: payinQuote(`${100 + Math.floor(random() * 9000)}.00`) },
              ]
            : ['external_account', { method: 'POST', path: '/v1/external-accounts', json: pixAccount(owner) }];
      return { key: randomUUID(), kind, request, answers: [] };
    });
    all.push(...burst);
    // Kill after a random number of answers (somewhere in the first two thirds of the burst), plus a little jitter.
    const killAfter = 1 + Math.floor(random() * (perRound * 0.66));
    let answered = 0;
    let killed: Promise<void> | null = null;
    let next = 0;
    const sender = async () => {
      while (next < burst.length) {
        const keyed = burst[next++] as KeyedRequest;
        const outcome = await partner.api.send({
          ...keyed.request,
          headers: { 'Idempotency-Key': keyed.key },
          timeoutMs: 30_000,
        });
        keyed.answers.push(outcome);
        if (outcome.kind === 'response') answered += 1;
        if (answered >= killAfter && !killed) {
          killed = pause(Math.floor(random() * 30))
            .then(() => system.killAndCheckLocks(system.api))
            .then((leftover) => {
              if (leftover) report.fail(leftover);
            });
          report.kills += 1;
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, sender));
    await killed;
    const lost = burst.filter((keyed) => !keyed.answers.some(isFinal)).length;
    report.notes[`round${round + 1}_unanswered`] = lost;
    await system.api.start();
    report.restarts += 1;
  }

  // Requests cut mid-way hold their key until the claim is abandoned (IDEMPOTENCY_ABANDONED_CLAIM_SECONDS): the
  // retries answer 409 meanwhile, then the retry that takes the claim over does the work once.
  const finals = await retryUntilFinal(partner.api, all, (ABANDONED_CLAIM_SECONDS + 90) * 1000);
  report.cases = all.length;
  const resourceOfKey = checkOneResourcePerKey(all, finals, report);
  for (const keyed of all) {
    const replays = keyed.answers.filter((answer) => answer.kind === 'response' && answer.status === 201);
    // Every 201 after the first of a key must say it is a replay.
    replays
      .slice(1)
      .forEach((answer) =>
        report.check(
          answer.kind === 'response' && answer.headers['idempotent-replayed'] === 'true',
          () => `key ${keyed.key}: a second 201 without Idempotent-Replayed: true`,
        ),
      );
  }

  // The database holds exactly the resources the keys named.
  const named = new Set(resourceOfKey.values());
  const [customers, quotes, externalAccounts] = await Promise.all([
    system.prisma.customer.findMany({
      where: { partnerId: partner.partnerId, id: { not: owner } },
      select: { id: true },
    }),
    system.prisma.quote.findMany({ where: { partnerId: partner.partnerId }, select: { id: true } }),
    system.prisma.externalAccount.findMany({ where: { partnerId: partner.partnerId }, select: { id: true } }),
  ]);
  for (const [kind, rows] of [
    ['customer', customers],
    ['quote', quotes],
    ['external account', externalAccounts],
  ] as const) {
    const expected = all.filter((keyed) => keyed.kind === kind.replace(' ', '_')).length;
    report.check(rows.length === expected, () => `${rows.length} ${kind} rows for ${expected} keys`);
    for (const row of rows) report.check(named.has(row.id), () => `${kind} ${row.id} exists but no key answered it`);
  }

  // One creation event per resource (external accounts: created and approved), none duplicated.
  const events = await system.prisma.event.groupBy({
    by: ['resourceId', 'eventType'],
    where: {
      partnerId: partner.partnerId,
      eventType: { in: ['customer.created', 'external_account.created', 'external_account.approved'] },
    },
    _count: { _all: true },
  });
  for (const group of events) {
    report.eventsChecked += group._count._all;
    report.check(
      group._count._all === 1,
      () => `${group.eventType} of ${group.resourceId} recorded ${group._count._all} times`,
    );
  }
  const createdEvents = new Set(
    events.filter((group) => group.eventType.endsWith('.created')).map((group) => group.resourceId),
  );
  for (const row of [...customers, ...externalAccounts])
    report.check(createdEvents.has(row.id), () => `resource ${row.id} has no creation event`);

  await checkEveryResourceHasItsWorkflow(system, partner.partnerId, report);
}
