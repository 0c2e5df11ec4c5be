// Workflow ids are derived from the resource they drive, so the API, operators and tests can find
// the workflow of a resource without a lookup (and starting one twice is impossible).
export const workflowIds = {
  customerVerification: (customerId: string) => `customer-verification-${customerId}`,
  webhookDelivery: (partnerId: string, resourceId: string) => `webhook-delivery-${partnerId}-${resourceId}`,
  webhookRedelivery: (deliveryId: string) => `webhook-redelivery-${deliveryId}`,
  quote: (quoteId: string) => `quote-${quoteId}`,
  virtualAccount: (virtualAccountId: string) => `virtual-account-${virtualAccountId}`,
  /** The one maintenance workflow of a namespace and task queue. */
  maintenance: () => 'maintenance',
};
