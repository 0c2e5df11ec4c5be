// Every workflow the worker runs. Workflow code is deterministic and does no I/O: it calls activities.
export { customerVerificationWorkflow } from './customer-verification';
export { webhookDeliveryWorkflow } from './webhook-delivery';
export { quoteLifetimeWorkflow } from './quote-lifetime';
export { virtualAccountWorkflow } from './virtual-account';
export { maintenanceWorkflow } from './maintenance';
export { settlementWorkflow, depositReturnWorkflow } from './settlement';
export { fiatToStablecoinLegWorkflow, stablecoinToFiatLegWorkflow } from './settlement-legs';
export { walletTransferWorkflow } from './wallet-transfer';
export { reconciliationWorkflow } from './reconciliation';
export { payoutReturnWorkflow } from './payout-return';
export { chainWatcherWorkflow } from './chain-watcher';
export { bankReportsWorkflow } from './bank-reports';
