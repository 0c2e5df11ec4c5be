// The route table of the API, one module per resource.
import type { RouteDefinition } from '../http/route';
import { customerRoutes } from './customers';
import { hostedVerificationRoutes } from './hosted-verification';
import { virtualAccountRoutes } from './virtual-accounts';
import { walletRoutes } from './wallets';

export const allRoutes: RouteDefinition[] = [
  ...customerRoutes,
  ...hostedVerificationRoutes,
  ...walletRoutes,
  ...virtualAccountRoutes,
];
