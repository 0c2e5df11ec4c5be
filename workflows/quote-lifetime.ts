// One workflow per quote (id: quote-<quoteId>), started when the quote is created. It owns the
// quote's status after creation:
//   active -> used     on the consumeQuote update, accepted once and only before the lifetime ends
//   active -> expired  when the 5-minute timer fires first
//   used -> active     on the releaseQuote update from the consumer that used it, within the lifetime
//                      (the transaction that used it could not be written: the quote is usable again)
// The lifetime is measured on the workflow's clock from its start (which is the quote's creation),
// so the timer and the update validators agree on what "expired" means. The workflow completes
// when the lifetime ends (or at once once expiry is persisted); after that the quotes table answers
// for the quote.
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  defineQuery,
  defineUpdate,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { boundedActivityOptions } from './retry-policies';
import { PartnerIdAttribute, ResourceIdAttribute, ResourceStatusAttribute } from '../src/temporal/search-attributes';

/** SPEC 2.6 / 8: a quote is valid for 5 minutes from creation. */
export const QUOTE_LIFETIME_MS = 5 * 60 * 1000;

export type QuoteLifetimeStatus = 'active' | 'used' | 'expired';

export interface QuoteLifetimeInput {
  quoteId: string;
  partnerId: string;
  type: 'payin' | 'payout' | 'fiat_to_fiat';
  /**
   * The start carried the search attributes (the write path's intent does): the workflow does not upsert them again
   * (each upsert is a history event and a visibility write). Absent in starts written before this field.
   */
  searchAttributesAtStart?: boolean;
}

export interface ConsumeQuoteRequest {
  /** The resource that uses the quote; the same consumer repeating the call is answered again. */
  consumerId: string;
  expectedType: QuoteLifetimeInput['type'];
}

/** Error types the update rejects with; the API maps each to its error code. */
export const quoteRefusals = {
  expired: 'QuoteExpired',
  alreadyUsed: 'QuoteAlreadyUsed',
  typeMismatch: 'QuoteTypeMismatch',
  notUsedBy: 'QuoteNotUsedBy',
} as const;

export const consumeQuoteUpdate = defineUpdate<void, [ConsumeQuoteRequest]>('consumeQuote');
/** Gives a used quote back (only its consumer may, only within its lifetime): it is active again. */
export const releaseQuoteUpdate = defineUpdate<void, [{ consumerId: string }]>('releaseQuote');
export const quoteStateQuery = defineQuery<{ status: QuoteLifetimeStatus; usedBy: string | null; remainingMs: number }>(
  'quoteState',
);

const activities = proxyActivities<Activities>(boundedActivityOptions);
const quickActivities = proxyActivities<Activities>({
  ...boundedActivityOptions,
  startToCloseTimeout: '10 seconds',
  // A release answers an API request that is waiting: a few quick tries, then the caller is told.
  retry: { ...boundedActivityOptions.retry, initialInterval: '200 milliseconds', maximumAttempts: 5 },
});

export async function quoteLifetimeWorkflow(input: QuoteLifetimeInput): Promise<QuoteLifetimeStatus> {
  // Workflow time (time-skipped in tests). A start delayed by the write-path relay cannot extend a quote's life:
  // consumeQuote also refuses, by the wall clock, a quote past its stored expires_at.
  const expiresAt = workflowInfo().startTime.getTime() + QUOTE_LIFETIME_MS;
  let status: QuoteLifetimeStatus = 'active';
  let usedBy: string | null = null;
  let persisted = false;
  let releasing = false;
  const remainingMs = () => Math.max(0, expiresAt - Date.now());

  const publishStatus = () =>
    upsertSearchAttributes([
      { key: PartnerIdAttribute, value: input.partnerId },
      { key: ResourceIdAttribute, value: input.quoteId },
      { key: ResourceStatusAttribute, value: status },
    ]);
  if (!input.searchAttributesAtStart) publishStatus();

  setHandler(quoteStateQuery, () => ({ status, usedBy, remainingMs: status === 'active' ? remainingMs() : 0 }));

  setHandler(
    consumeQuoteUpdate,
    async (request) => {
      if (status === 'used') {
        // The same consumer again (the validator let nothing else through): answer once persisted.
        await condition(() => persisted || status !== 'used');
        if (status !== 'used') throw ApplicationFailure.nonRetryable('The quote could not be used.', 'QuoteNotUsed');
        return;
      }
      // Claimed before the first await, so a concurrent update or the timer sees it at once.
      status = 'used';
      usedBy = request.consumerId;
      try {
        await activities.markQuoteUsed(input.quoteId, request.consumerId);
      } catch (error) {
        // Not persisted (e.g. the quote's row is gone): the quote stays active until it expires.
        status = 'active';
        usedBy = null;
        throw error;
      }
      persisted = true;
      publishStatus();
    },
    {
      validator: (request) => {
        if (request?.expectedType !== input.type) {
          throw ApplicationFailure.nonRetryable(
            `The quote is a ${input.type} quote, not a ${String(request?.expectedType)} quote.`,
            quoteRefusals.typeMismatch,
          );
        }
        if (status === 'used') {
          if (usedBy === request.consumerId) return;
          throw ApplicationFailure.nonRetryable('The quote was already used.', quoteRefusals.alreadyUsed);
        }
        if (status === 'expired' || remainingMs() <= 0) {
          throw ApplicationFailure.nonRetryable('The quote expired.', quoteRefusals.expired);
        }
      },
    },
  );

  setHandler(
    releaseQuoteUpdate,
    async ({ consumerId }) => {
      releasing = true;
      try {
        await quickActivities.markQuoteReleased(input.quoteId, consumerId);
      } finally {
        releasing = false;
      }
      status = 'active';
      usedBy = null;
      persisted = false;
      publishStatus();
    },
    {
      validator: (request) => {
        if (status !== 'used' || !persisted || releasing || usedBy !== request?.consumerId) {
          throw ApplicationFailure.nonRetryable(
            `The quote is not used by ${String(request?.consumerId)}.`,
            quoteRefusals.notUsedBy,
          );
        }
      },
    },
  );

  for (;;) {
    // Timed from the start, not from this task, so a late first task does not extend the quote.
    const changed = await condition(() => status !== 'active', Math.max(1, remainingMs()));
    if (!changed) {
      status = 'expired';
      await activities.markQuoteExpired(input.quoteId);
      persisted = true;
      publishStatus();
      break;
    }
    // Used once the update persists it, or active again if persisting failed.
    await condition(() => persisted || status === 'active');
    if (status === 'active') continue;
    // Runs recorded before releaseQuote existed completed here, once used.
    if (!patched('quote-release-window')) break;
    // Used: the consumer may still give it back until the lifetime ends.
    const released = await condition(() => status !== 'used', Math.max(1, remainingMs()));
    if (released) continue;
    await condition(() => !releasing);
    if (status === 'used') break;
  }
  // Let the update that used the quote reply before the workflow completes.
  await condition(allHandlersFinished);
  return status;
}
