// The route table of the API, one module per resource.
import type { RouteDefinition } from '../http/route';
import { customerRoutes } from './customers';
import { externalAccountRoutes } from './external-accounts';

export const allRoutes: RouteDefinition[] = [...customerRoutes, ...externalAccountRoutes];
