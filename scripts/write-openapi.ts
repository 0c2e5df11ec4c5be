// Writes the OpenAPI description (the one GET /openapi.json serves) to a file:
// `npm run openapi:write [-- <path>]`, default dist/openapi.json. APP_ENV selects the environment's operations.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { routesOf } from '../src/http/app';
import { buildOpenApiDocument } from '../src/http/openapi';
import { allRoutes } from '../src/routes';
import { projectRoot } from './lib/paths';

const appEnv = process.env.APP_ENV === 'production' ? 'production' : 'sandbox';
const publicBaseUrl = process.env.PUBLIC_BASE_URL ?? 'http://localhost:3000';
const target = path.resolve(process.argv[2] ?? path.join(projectRoot, 'dist', 'openapi.json'));
const document = buildOpenApiDocument(routesOf(allRoutes, appEnv), { appEnv, publicBaseUrl });
mkdirSync(path.dirname(target), { recursive: true });
writeFileSync(target, `${JSON.stringify(document, null, 2)}\n`);
console.error(`OpenAPI (${appEnv}) written to ${path.relative(process.cwd(), target)}`);
