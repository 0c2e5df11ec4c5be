// Housekeeping of the database, run by the maintenance workflow.
import { deleteEventsCreatedBefore } from '../src/persistence/events';
import { deleteExpiredIdempotencyKeys } from '../src/persistence/idempotency-keys';
import { deleteRateLimitsExpiredBefore } from '../src/persistence/rate-limits';
import { deleteWorkflowStartsStartedBefore } from '../src/persistence/workflow-starts';
import type { ActivityServices } from './services';

export function createMaintenanceActivities({ prisma, config }: ActivityServices) {
  return {
    /** Deletes events (with their webhook deliveries and attempts) past their retention (EVENT_RETENTION_DAYS). */
    async purgeExpiredEvents(): Promise<number> {
      return deleteEventsCreatedBefore(prisma, new Date(Date.now() - config.eventRetentionDays * 24 * 3600 * 1000));
    },
    /** Deletes idempotency keys past their 24-hour retention; returns how many. */
    async purgeExpiredIdempotencyKeys(): Promise<number> {
      return deleteExpiredIdempotencyKeys(prisma, new Date());
    },
    /** Deletes workflow-start intents started more than a week ago (they are only needed until started). */
    async purgeStartedWorkflowIntents(): Promise<number> {
      return deleteWorkflowStartsStartedBefore(prisma, new Date(Date.now() - 7 * 24 * 3600 * 1000));
    },
    /**
     * Deletes rate-limit counters whose window ended over an hour ago (the limiter's own timer is off: it ran
     * in every process that serves requests, unowned by any lifecycle).
     */
    async purgeExpiredRateLimits(): Promise<number> {
      return deleteRateLimitsExpiredBefore(prisma, Date.now() - 3600_000);
    },
  };
}
