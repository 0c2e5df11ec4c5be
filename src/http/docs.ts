// The API reference page: Redoc, served from node_modules (no CDN, works offline), rendering the
// same OpenAPI document as GET /openapi.json.
import { readFileSync } from 'node:fs';
import type Router from '@koa/router';

const redocBundlePath = require.resolve('redoc/bundles/redoc.standalone.js');

const page = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Payments API reference</title>
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <style>body { margin: 0; }</style>
  </head>
  <body>
    <redoc spec-url="/openapi.json" hide-download-button="false"></redoc>
    <script src="/docs/redoc.standalone.js"></script>
  </body>
</html>`;

/** What Redoc needs and nothing more: its own script, its injected styles, a blob worker, the description. */
export const docsContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

export function mountDocs(router: Router): void {
  let bundle: Buffer | undefined;
  router.get('/docs', (ctx) => {
    ctx.type = 'text/html';
    ctx.set('Content-Security-Policy', docsContentSecurityPolicy);
    ctx.body = page;
  });
  router.get('/docs/redoc.standalone.js', (ctx) => {
    bundle ??= readFileSync(redocBundlePath);
    ctx.type = 'application/javascript';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = bundle;
  });
}
