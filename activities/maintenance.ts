// Housekeeping of the database, run by the maintenance workflow.
import type { ActivityServices } from './services';

export function createMaintenanceActivities({ prisma }: ActivityServices) {
  return {
    /** Deletes idempotency keys past their 24-hour retention; returns how many. */
    async purgeExpiredIdempotencyKeys(): Promise<number> {
      const { count } = await prisma.idempotencyKey.deleteMany({ where: { expiresAt: { lt: new Date() } } });
      return count;
    },
    /** Deletes workflow-start intents started more than a week ago (they are only needed until started). */
    async purgeStartedWorkflowIntents(): Promise<number> {
      const { count } = await prisma.workflowStart.deleteMany({
        where: { startedAt: { lt: new Date(Date.now() - 7 * 24 * 3600 * 1000) } },
      });
      return count;
    },
    /**
     * Deletes rate-limit counters whose window ended over an hour ago (the limiter's own timer is off: it ran
     * in every process that serves requests, unowned by any lifecycle).
     */
    async purgeExpiredRateLimits(): Promise<number> {
      return prisma.$executeRaw`DELETE FROM rate_limits WHERE expire < ${Date.now() - 3600_000}`;
    },
  };
}
