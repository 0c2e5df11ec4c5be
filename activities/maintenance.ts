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
  };
}
