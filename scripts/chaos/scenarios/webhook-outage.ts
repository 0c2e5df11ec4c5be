// Scenario 3, webhook outage: the partner's receiver refuses everything (503, 500, dropped connections, answers too
// slow) for a long outage, shortened by configuration (WEBHOOK_RETRY_* make the 30 s .. 1 h backoff 1 s .. 4 s, so
// minutes here stand for hours), while customers go through verification and register accounts; then it recovers.
// Every event must be delivered at least once, none lost, each correctly signed and naming its event, and the events
// of one resource must arrive in the order they happened: no attempt of an event before every earlier event of the
// same resource was accepted.
import { randomUUID } from 'node:crypto';
import { eventTypes } from '../../../src/events';
import { Answer, WebhookReceiver } from '../../../test/support/webhook-receiver';
import { verifiesWithStandardWebhooks } from '../../../test/support/webhooks';
import {
  createCustomer,
  call,
  idOf,
  individualCustomer,
  individualDocuments,
  pixAccount,
  reviewWithOutcome,
  uploadDocuments,
  waitForCustomerStatus,
} from '../fixtures';
import type { HttpClient } from '../http';
import { randomSource, RunSize, ScenarioReport } from '../report';
import { ChaosSystem, WEBHOOK_RETRY } from '../system';
import { pause, waitUntil } from '../../lib/wait';

const STORIES_AT_ONCE = 3;

/** One customer's life: created, an account registered, reviewed (sometimes twice). 4 to 7 events. */
async function customerStory(api: HttpClient, random: () => number): Promise<void> {
  const id = await createCustomer(api, individualCustomer({ email: `${randomUUID()}@example.com` }));
  await call(api, { method: 'POST', path: '/v1/external-accounts', json: pixAccount(id) }, 201, 'account');
  await uploadDocuments(api, id, individualDocuments);
  const pick = random();
  const outcome = pick < 0.5 ? 'approved' : pick < 0.8 ? 'partially_rejected' : 'rejected';
  await reviewWithOutcome(api, id, outcome);
  if (outcome === 'partially_rejected') {
    await waitForCustomerStatus(api, id, 'partially_rejected');
    await uploadDocuments(api, id, ['PROOF_OF_ADDRESS']);
    await reviewWithOutcome(api, id, 'approved');
  }
  await waitForCustomerStatus(api, id, outcome === 'rejected' ? 'rejected' : 'approved');
}

export async function webhookOutageScenario(system: ChaosSystem, report: ScenarioReport, size: RunSize): Promise<void> {
  const outageMs = (size.quick ? 20 : 150) * 1000;
  const maxStories = size.quick ? 6 : 40;
  const random = randomSource(size.seed + 3);
  const answers: Answer[] = [];
  let outage = false;
  const receiver = await WebhookReceiver.start(async (_request, index) => {
    let answer: Answer = 200;
    if (outage) {
      const pick = random();
      // Slow answers outlast WEBHOOK_TIMEOUT_SECONDS (2 s here): the attempt fails at the sender.
      if (pick < 0.1) await pause(2500);
      answer = pick < 0.5 ? 503 : pick < 0.75 ? 500 : 'drop';
    }
    answers[index] = answer;
    return answer;
  });
  try {
    const partner = await system.createPartner('chaos webhook-outage');
    const config = await call(
      partner.api,
      {
        method: 'POST',
        path: '/v1/webhook-configs',
        json: { url: receiver.url, subscriptions: [...eventTypes], enabled: true },
      },
      201,
      'webhook config',
    );
    const secret = (config.body as { secret: string }).secret;
    const configId = idOf(config);

    // The outage: stories run (several at a time) until it is over, at most maxStories of them.
    outage = true;
    const outageEnds = Date.now() + outageMs;
    let stories = 0;
    const storyLoop = async () => {
      while (Date.now() < outageEnds && stories < maxStories) {
        stories += 1;
        await customerStory(partner.api, random);
      }
    };
    await Promise.all(Array.from({ length: STORIES_AT_ONCE }, storyLoop));
    const remaining = outageEnds - Date.now();
    if (remaining > 0) await pause(remaining);
    const refusedDuringOutage = answers.filter((answer) => answer !== 200).length;
    outage = false;

    // Recovery: every event of the partner reaches the receiver (bounded: a few backoff periods after the outage).
    const events = await system.prisma.event.findMany({
      where: { partnerId: partner.partnerId },
      orderBy: { sequence: 'asc' },
    });
    const accepted = () =>
      new Set(
        receiver.requests
          .filter((_request, index) => answers[index] === 200)
          .map((request) => String(request.headers['webhook-id'])),
      );
    const recoveryLimitMs = 60_000 + WEBHOOK_RETRY.maximumIntervalSeconds * 1000 * 3;
    await waitUntil(async () => events.every((event) => accepted().has(event.id)), recoveryLimitMs, 250);

    report.cases = stories;
    report.eventsChecked = events.length;
    report.notes.attempts = receiver.requests.length;
    report.notes.refused = refusedDuringOutage;
    report.check(refusedDuringOutage > 0, () => 'the receiver refused nothing: the outage did not happen');
    const delivered = accepted();
    for (const event of events)
      report.check(delivered.has(event.id), () => `event ${event.eventType} ${event.id} never delivered (lost)`);

    const byId = new Map(events.map((event) => [event.id, event]));
    receiver.requests.forEach((request, index) => {
      const eventId = String(request.headers['webhook-id']);
      const event = byId.get(eventId);
      if (!report.check(event !== undefined, () => `request #${index} carries an unknown Webhook-Id ${eventId}`))
        return;
      report.check(
        request.body.event_type === event?.eventType && request.body.event_resource_id === event?.resourceId,
        () => `request #${index} body does not describe event ${eventId}`,
      );
      report.check(
        verifiesWithStandardWebhooks(request, secret),
        () => `request #${index} (event ${eventId}) has a bad signature`,
      );
    });

    // Order per resource: no attempt of an event before every earlier event of its resource was accepted.
    const eventsOfResource = new Map<string, string[]>();
    for (const event of events)
      eventsOfResource.set(event.resourceId, [...(eventsOfResource.get(event.resourceId) ?? []), event.id]);
    const acceptedAt = new Map<string, number>();
    receiver.requests.forEach((request, index) => {
      const eventId = String(request.headers['webhook-id']);
      const event = byId.get(eventId);
      if (!event) return;
      const sequence = eventsOfResource.get(event.resourceId) as string[];
      for (const earlier of sequence.slice(0, sequence.indexOf(eventId))) {
        report.check(
          (acceptedAt.get(earlier) ?? Infinity) < index,
          () =>
            `order: ${event.eventType} ${eventId} attempted (#${index}) before earlier event ${earlier} of resource ${event.resourceId} was accepted`,
        );
      }
      if (answers[index] === 200 && !acceptedAt.has(eventId)) acceptedAt.set(eventId, index);
    });

    // The service's own record agrees: every delivery succeeded, none failed or is still pending.
    const deliveries = await system.prisma.webhookDelivery.groupBy({
      by: ['status'],
      where: { partnerId: partner.partnerId, configId },
      _count: { _all: true },
    });
    for (const group of deliveries)
      report.check(group.status === 'succeeded', () => `${group._count._all} deliveries ended ${group.status}`);
  } finally {
    await receiver.close();
  }
}
