// The persistence layer's list functions the scale section explains, loaded once the bench has generated the Prisma
// client (scale.ts imports this module dynamically).
export { listCustomers } from '../../src/persistence/customers';
export { listPartnerEvents } from '../../src/persistence/events';
export { listExternalAccounts } from '../../src/persistence/external-accounts';
export { listTransactionRows } from '../../src/persistence/transactions';
export { listVirtualAccounts } from '../../src/persistence/virtual-accounts';
export { listWalletTransfers } from '../../src/persistence/wallet-transfers';
export { listWallets } from '../../src/persistence/wallets';
export { listEventDeliveries } from '../../src/persistence/webhooks';
