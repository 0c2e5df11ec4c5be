// All activities, grouped by what they touch; the worker registers this object.
import { createCustomerActivities } from './customers';
import type { ActivityServices } from './services';
import { createWebhookActivities } from './webhooks';

export type { ActivityServices };

export function createActivities(services: ActivityServices) {
  return {
    ...createCustomerActivities(services),
    ...createWebhookActivities(services),
  };
}

export type Activities = ReturnType<typeof createActivities>;
