// Activities of the quote-lifetime workflow: persist the status changes the workflow decides.
// Quotes have no webhook event types (SPEC 6), so these record no events: the quotes table is
// where partners (GET /v1/quotes/{id}) and transactions see the status.
import { ApplicationFailure } from '@temporalio/activity';
import { sqlPoolOf } from '../src/persistence/database';
import type { ActivityServices } from './services';

export function createQuoteActivities({ prisma }: Pick<ActivityServices, 'prisma'>) {
  return {
    /** active -> used by `consumerId`. Idempotent: a retry after a commit finds it used by the same consumer. */
    async markQuoteUsed(quoteId: string, consumerId: string): Promise<void> {
      // On the pool: every settlement makes this step, and Prisma would compile the update on each call.
      const usedAt = new Date();
      const updated = await sqlPoolOf(prisma).query({
        name: 'mark-quote-used',
        text: `UPDATE quotes SET status = 'used', used_by = $2, used_at = $3, updated_at = $3
          WHERE id = $1 AND status = 'active'`,
        values: [quoteId, consumerId, usedAt],
      });
      if (updated.rowCount === 1) return;
      const quote = await prisma.quote.findUnique({ where: { id: quoteId }, select: { status: true, usedBy: true } });
      if (quote?.status === 'used' && quote.usedBy === consumerId) return;
      throw ApplicationFailure.nonRetryable(
        `quote ${quoteId} cannot be used: it is ${quote ? quote.status : 'missing'}`,
        'QuoteNotActive',
      );
    },

    /** used by `consumerId` -> active. Idempotent: a retry after a commit finds it active. */
    async markQuoteReleased(quoteId: string, consumerId: string): Promise<void> {
      const updated = await prisma.quote.updateMany({
        where: { id: quoteId, status: 'used', usedBy: consumerId },
        data: { status: 'active', usedBy: null, usedAt: null },
      });
      if (updated.count === 1) return;
      const quote = await prisma.quote.findUnique({ where: { id: quoteId }, select: { status: true } });
      if (quote?.status === 'active') return;
      throw ApplicationFailure.nonRetryable(
        `quote ${quoteId} cannot be released by ${consumerId}: it is ${quote ? quote.status : 'missing'}`,
        'QuoteNotReleasable',
      );
    },

    /** active -> expired. Idempotent; a quote whose creation was rolled back has no row and nothing to do. */
    async markQuoteExpired(quoteId: string): Promise<void> {
      await prisma.quote.updateMany({ where: { id: quoteId, status: 'active' }, data: { status: 'expired' } });
    },
  };
}
