// Helpers of the webhook tests: configuring a partner's webhooks, recording events the way every resource does
// (recordEvent), and checking signatures the way docs/webhooks.md tells partners to.
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { newId } from '../../src/domain/ids';
import type { EventType } from '../../src/events';
import { NewEvent, recordEvent } from '../../src/persistence/events';
import { type DatabaseClient, withDatabaseTransaction } from '../../src/persistence/database';
import { workflowIds } from '../../src/temporal/workflow-ids';
import { eventually } from './eventually';
import type { Harness, TestPartner } from './harness';
import type { ReceivedWebhook } from './webhook-receiver';

export interface ConfiguredWebhooks {
  id: string;
  secret: string;
}

export async function configureWebhooks(
  partner: TestPartner,
  url: string,
  subscriptions: EventType[],
  enabled = true,
): Promise<ConfiguredWebhooks> {
  const response = await partner.api.post('/v1/webhook-configs').send({ url, subscriptions, enabled });
  if (response.status !== 201) throw new Error(`config failed: ${response.status} ${JSON.stringify(response.body)}`);
  return { id: response.body.id as string, secret: response.body.secret as string };
}

/**
 * The recipe of docs/webhooks.md: the official Standard Webhooks verifier (the `standardwebhooks` package) with the secret.
 * True when it accepts the request (signature and a timestamp within its 5 minutes).
 */
export function verifiesWithStandardWebhooks(request: ReceivedWebhook, secret: string): boolean {
  try {
    new Webhook(secret).verify(request.rawBody, request.headers as Record<string, string>);
    return true;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return false;
    throw error;
  }
}

/**
 * Resolves when the resource's delivery workflow has delivered (or given up on) everything queued; skips time. First
 * every delivery of the resource's events must be handed to Temporal: the relay may hand one over after the run that
 * had the others has completed (a later run then takes it), and the latest run is the one awaited.
 */
export async function deliveriesSettled(harness: Harness, partner: TestPartner, resourceId: string): Promise<number> {
  const handedOver = () =>
    harness.prisma.webhookDelivery.count({
      where: { partnerId: partner.partnerId, trigger: 'event', dispatchedAt: null, event: { resourceId } },
    });
  if ((await eventually(handedOver, (left) => left === 0)) > 0)
    throw new Error(`the relay did not hand over the deliveries of ${resourceId}`);
  return harness.env.client.workflow.getHandle(workflowIds.webhookDelivery(partner.partnerId, resourceId)).result();
}

const payoutStatuses: Partial<Record<EventType, string>> = {
  'payout.created': 'awaiting_deposit',
  'payout.processing': 'processing',
  'payout.completed': 'completed',
  'payout.failed': 'failed',
};

/** When the last event recorded here was stamped. */
let lastRecordedAt = 0;

/**
 * Records an event of a (stand-in) payout, as the payout workflow will, in its own transaction. Each is stamped at
 * least a millisecond after the one before: lists order by (created_at, id), so events recorded within one
 * millisecond would list in either order, and the tests compare the order they were recorded in.
 */
export async function recordPayoutEvent(
  prisma: DatabaseClient,
  partnerId: string,
  payoutId: string,
  type: EventType = 'payout.created',
): Promise<string> {
  const status = payoutStatuses[type] ?? type.split('.')[1] ?? 'unknown';
  const event: NewEvent = {
    partnerId,
    type,
    resourceId: payoutId,
    resourceStatus: status,
    resource: { id: payoutId, status, amount: '10.00', currency: 'USDC' },
    createdAt: new Date((lastRecordedAt = Math.max(Date.now(), lastRecordedAt + 1))),
  };
  return withDatabaseTransaction(prisma, (tx) => recordEvent(tx, event));
}

export { newId };
