// The bank's `pix` webhook (API Pix: POST <registered url>/pix with { pix: [...] }), not a partner operation, so not
// in the OpenAPI description (docs/pix.md "The webhook"). API Pix authenticates the callback with mutual TLS at the
// bank's edge; behind this service's TLS-terminating edge the request is authenticated by the secret path segment
// registered with the bank (PIX_WEBHOOK_SECRET). Each payment goes through the idempotent deposit path keyed by its
// endToEndId: a repeat answers the deposit the first made, a late one is recorded (and returned) like any late credit.
import type Router from '@koa/router';
import { timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import type { ApiServices } from '../app-services';
import { ApiError } from '../http/errors';
import { readJsonBody } from '../http/json-body';
import { depositsFromPixWebhook } from '../providers/pix/collections';
import { receiveDepositByReference } from '../services/transactions/deposits';

export const PIX_WEBHOOK_ROUTE = '/providers/api-pix/webhook/{secret}/pix';

/** Mounted only when PIX_WEBHOOK_SECRET is configured; elsewhere the path does not exist (404). */
export function mountPixWebhook(router: Router, services: ApiServices): void {
  const webhook = services.config.pixApi?.webhook;
  if (!webhook) return;
  router.post('/providers/api-pix/webhook/:secret/pix', async (ctx: Context) => {
    // Not ctx.state.route (that names partner operations): the request log hides the secret from the path itself.
    if (!sameSecret(String(ctx.params.secret ?? ''), webhook.secret)) {
      throw new ApiError('not_found', `No route ${ctx.method} ${PIX_WEBHOOK_ROUTE}.`);
    }
    const body = await readJsonBody(ctx);
    let parsed: ReturnType<typeof depositsFromPixWebhook>;
    try {
      parsed = depositsFromPixWebhook(body);
    } catch (error) {
      throw ApiError.invalidParam('pix', (error as Error).message);
    }
    const log = ctx.state.log as ApiServices['logger'];
    const recorded: Array<{ end_to_end_id: string; deposit_id: string | null; status: string | null }> = [];
    // One after the other: two payments of one webhook for the same transaction must not race for its deposit.
    for (const deposit of parsed.deposits) {
      const answer = await receiveDepositByReference(services, deposit);
      if (!answer) {
        // A payment to our key whose charge names no transaction of ours: kept at the bank for manual handling.
        log.warn({ end_to_end_id: deposit.providerReference }, 'pix webhook: no transaction for this payment');
      }
      recorded.push({
        end_to_end_id: deposit.providerReference,
        deposit_id: answer?.id ?? null,
        status: answer?.status ?? null,
      });
    }
    for (const ignored of parsed.ignored) {
      log.warn({ end_to_end_id: ignored.endToEndId, why: ignored.why }, 'pix webhook: payment ignored');
    }
    log.info({ payments: recorded }, 'pix webhook received');
    ctx.status = 200;
    ctx.body = {
      recorded,
      ignored: parsed.ignored.map((item) => ({ end_to_end_id: item.endToEndId, why: item.why })),
    };
  });
}

function sameSecret(given: string, expected: string): boolean {
  const left = Buffer.from(given);
  const right = Buffer.from(expected);
  return left.length === right.length && timingSafeEqual(left, right);
}
