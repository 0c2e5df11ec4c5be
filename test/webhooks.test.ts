import { createHmac } from 'node:crypto';
import { Harness, startHarness, TestPartner } from './support/harness';
import { WebhookReceiver } from './support/webhook-receiver';
import { createCustomer } from './support/fixtures';
import { workflowIds } from '../src/temporal/workflow-ids';

let harness: Harness;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  harness = await startHarness({ SANDBOX_VERIFICATION_DELAY_SECONDS: String(6 * 3600) });
});
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await harness?.teardown();
});

async function receiver(): Promise<WebhookReceiver> {
  const started = await WebhookReceiver.start();
  receivers.push(started);
  return started;
}

it('smoke', async () => {
  const partner = await harness.createPartner();
  const rx = await receiver();
  const created = await partner.api.post('/v1/webhook-configs').send({ url: rx.url, subscriptions: ['customer.created'], enabled: true });
  expect(created.status).toBe(201);
  const customer = await createCustomer(partner.api);
  const [request] = await rx.waitForCount(1);
  console.log(request!.headers, request!.rawBody.slice(0, 300));
  await harness.env.client.workflow.getHandle(workflowIds.webhookDelivery(partner.partnerId, customer.id)).result();
  console.log(await harness.prisma.webhookDelivery.findMany({ where: { partnerId: partner.partnerId }, include: { attempts: true } }));
  const sig = request!.headers['webhook-signature'] as string;
  const t = sig.split(',')[0]!.slice(2);
  expect(sig.split(',')[1]).toBe('v1=' + createHmac('sha256', created.body.secret).update(`${t}.${request!.rawBody}`).digest('hex'));
});
