// The OpenID Provider process of the production stack (scripts/lib/oidc.ts): development and tests only, static
// users. Its settings are the OIDC_* variables of docs/configuration.md; the stack supervisor starts it
// (scripts/lib/stack.ts startOidcProvider) before the Temporal server, which fetches its JWKS.
import { developmentUsers, oidcSettingsFromEnv } from '../lib/oidc';
import { createOidcServer } from '../lib/oidc-server';

async function main(): Promise<void> {
  const settings = oidcSettingsFromEnv(process.env);
  const { server } = createOidcServer(settings);
  server.listen(settings.port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
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
