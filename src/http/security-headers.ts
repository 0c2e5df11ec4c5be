// Response headers of every answer (helmet, through koa-helmet), strict by default:
//   Content-Security-Policy: default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'
//   X-Frame-Options: DENY, X-Content-Type-Options: nosniff, Referrer-Policy: no-referrer,
//   Strict-Transport-Security, Cross-Origin-Opener-Policy / -Resource-Policy: same-origin, and the rest of helmet's set,
//   Cache-Control: no-store (responses carry customer data; the API reference's script bundle overrides it).
// The two HTML surfaces widen the policy only as far as they need: the hosted verification page
// (src/routes/hosted-verification.ts: its own CSS/JS files and images, forms to itself) and /docs (src/http/docs.ts).
import type { Middleware } from 'koa';
import helmet from 'koa-helmet';

export function securityHeaders(): Middleware {
  const headers = helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        formAction: ["'none'"],
      },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
  });
  return async (ctx, next) => {
    ctx.set('Cache-Control', 'no-store');
    await headers(ctx, next);
  };
}
