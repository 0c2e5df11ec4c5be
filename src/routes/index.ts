// The route table of the API, one module per resource.
import type { RouteDefinition } from '../http/route';
import { customerRoutes } from './customers';
import { quoteRoutes } from './quotes';

export const allRoutes: RouteDefinition[] = [...customerRoutes, ...quoteRoutes];
