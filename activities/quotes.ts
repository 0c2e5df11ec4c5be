// Activities of the quote-lifetime workflow: persist the status changes the workflow decides.
// Quotes have no webhook event types (SPEC 6), so these record no events: the quotes table is
// where partners (GET /v1/quotes/{id}) and transactions see the status.
import { ApplicationFailure } from '@temporalio/activity';
import { clearQuoteUse, expireActiveQuote, findQuoteUse, recordQuoteUse } from '../src/persistence/quotes';
import type { ActivityServices } from './services';

export function createQuoteActivities({ prisma }: Pick<ActivityServices, 'prisma'>) {
  return {
    /** active -> used by `consumerId`. Idempotent: a retry after a commit finds it used by the same consumer. */
    async markQuoteUsed(quoteId: string, consumerId: string): Promise<void> {
      if (await recordQuoteUse(prisma, quoteId, consumerId, new Date())) return;
      const quote = await findQuoteUse(prisma, quoteId);
      if (quote?.status === 'used' && quote.usedBy === consumerId) return;
      throw ApplicationFailure.nonRetryable(
        `quote ${quoteId} cannot be used: it is ${quote ? quote.status : 'missing'}`,
        'QuoteNotActive',
      );
    },

    /** used by `consumerId` -> active. Idempotent: a retry after a commit finds it active. */
    async markQuoteReleased(quoteId: string, consumerId: string): Promise<void> {
      if (await clearQuoteUse(prisma, quoteId, consumerId)) return;
      const quote = await findQuoteUse(prisma, quoteId);
      if (quote?.status === 'active') return;
      throw ApplicationFailure.nonRetryable(
        `quote ${quoteId} cannot be released by ${consumerId}: it is ${quote ? quote.status : 'missing'}`,
        'QuoteNotReleasable',
      );
    },

    /** active -> expired. Idempotent; a quote whose creation was rolled back has no row and nothing to do. */
    async markQuoteExpired(quoteId: string): Promise<void> {
      await expireActiveQuote(prisma, quoteId);
    },
  };
}
