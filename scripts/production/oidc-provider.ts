// The OpenID Provider process of the production stack (scripts/lib/oidc.ts): development and tests only, static
// users. Its settings are the OIDC_* variables of docs/configuration.md; the stack supervisor starts it
// (scripts/lib/stack.ts startOidcProvider) before the Temporal server, which fetches its JWKS.
import { developmentUsers, oidcSettingsFromEnv } from '../lib/oidc';
import { createOidcServer } from '../lib/oidc-server';
import { flushCompileCache } from 'node:module';

async function main(): Promise<void> {
  const settings = oidcSettingsFromEnv(process.env);
  const { server } = createOidcServer(settings);
  server.listen(settings.port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  // Node's compile cache, when NODE_COMPILE_CACHE turns it on (the test and chaos runs), written now: Node
  // writes it at exit, which a killed process never reaches, so every restart would compile its code again.
  flushCompileCache();
  console.log(
    `OpenID Provider ${settings.issuer} (static users: ${developmentUsers.map((user) => `${user.email} ${user.roles.join('+')}`).join(', ')})`,
  );
  const stop = () => server.close(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
