// Workflow ids are derived from the resource they drive, so the API, operators and tests can find
// the workflow of a resource without a lookup (and starting one twice is impossible).
export const workflowIds = {
  customerVerification: (customerId: string) => `customer-verification-${customerId}`,
  webhookDelivery: (partnerId: string, resourceId: string) => `webhook-delivery-${partnerId}-${resourceId}`,
  webhookRedelivery: (deliveryId: string) => `webhook-redelivery-${deliveryId}`,
  quote: (quoteId: string) => `quote-${quoteId}`,
  virtualAccount: (virtualAccountId: string) => `virtual-account-${virtualAccountId}`,
  /** The settlement of a transaction. */
  transaction: (transactionId: string) => `transaction-${transactionId}`,
  /** Its legs: child workflows whose ids the settlement workflow derives from its own. */
  transactionLeg: (transactionId: string, leg: 'fiat-to-stablecoin' | 'stablecoin-to-fiat') =>
    `transaction-${transactionId}-${leg}`,
  /** Sends back a deposit its transaction could not take (late, or for a transaction already funded). */
  depositReturn: (depositId: string) => `deposit-return-${depositId}`,
  /** A completed payout the receiving bank returned: waits for an operator's repay or refund (one per transaction). */
  payoutReturn: (transactionId: string) => `payout-return-${transactionId}`,
  /** A wallet transfer: sent on chain, then completed or failed. */
  walletTransfer: (transferId: string) => `wallet-transfer-${transferId}`,
  /** The one maintenance workflow of a namespace and task queue. */
  maintenance: () => 'maintenance',
  /** The chain watcher of one chain (workflows/chain-watcher.ts). */
  chainWatcher: (chain: string) => `chain-watcher-${chain}`,
  /** The reader of a bank's reports (workflows/bank-reports.ts). */
  bankReports: (bank: string) => `bank-reports-${bank}`,
};
