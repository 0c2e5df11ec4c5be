// Housekeeping of the database, run by the maintenance workflow.
import type { ActivityServices } from './services';

export function createMaintenanceActivities({ prisma }: ActivityServices) {
  return {
    /** Deletes idempotency keys past their 24-hour retention; returns how many. */
    async purgeExpiredIdempotencyKeys(): Promise<number> {
      const { count } = await prisma.idempotencyKey.deleteMany({ where: { expiresAt: { lt: new Date() } } });
      return count;
    },
  };
}
