// The route table of the API, one module per resource.
import type { RouteDefinition } from '../http/route';
import { customerRoutes } from './customers';
import { externalAccountRoutes } from './external-accounts';
import { hostedVerificationRoutes } from './hosted-verification';

export const allRoutes: RouteDefinition[] = [...customerRoutes, ...externalAccountRoutes, ...hostedVerificationRoutes];
