// The route table of the API, one module per resource.
import type { RouteDefinition } from '../http/route';
import { balanceTransactionRoutes } from './balance-transactions';
import { customerRoutes } from './customers';
import { eventRoutes } from './events';
import { healthRoutes } from './health';
import { externalAccountRoutes } from './external-accounts';
import { hostedVerificationRoutes } from './hosted-verification';
import { partnerBrandingRoutes } from './partner-branding';
import { quoteRoutes } from './quotes';
import { reportRoutes } from './reports';
import { transactionRoutes } from './transactions';
import { virtualAccountRoutes } from './virtual-accounts';
import { walletRoutes } from './wallets';
import { walletTransferRoutes } from './wallet-transfers';
import { webhookRoutes } from './webhooks';

export const allRoutes: RouteDefinition[] = [
  ...customerRoutes,
  ...externalAccountRoutes,
  ...walletRoutes,
  ...walletTransferRoutes,
  ...virtualAccountRoutes,
  ...quoteRoutes,
  ...transactionRoutes,
  ...webhookRoutes,
  ...eventRoutes,
  ...balanceTransactionRoutes,
  ...reportRoutes,
  ...partnerBrandingRoutes,
  ...hostedVerificationRoutes,
  ...healthRoutes,
];
