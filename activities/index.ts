// All activities, grouped by what they touch; the worker registers this object.
import { createCustomerActivities } from './customers';
import { createMaintenanceActivities } from './maintenance';
import { createQuoteActivities } from './quotes';
import type { ActivityServices } from './services';
import { createTransactionActivities } from './transactions';
import { createWebhookActivities } from './webhooks';
import { createVirtualAccountActivities } from './virtual-accounts';

export type { ActivityServices };

export function createActivities(services: ActivityServices) {
  return {
    ...createCustomerActivities(services),
    ...createWebhookActivities(services),
    ...createQuoteActivities(services),
    ...createVirtualAccountActivities(services),
    ...createMaintenanceActivities(services),
    ...createTransactionActivities(services),
  };
}

export type Activities = ReturnType<typeof createActivities>;
