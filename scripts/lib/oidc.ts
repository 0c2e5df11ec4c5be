// The production stack's OpenID Provider (docs/operations.md "Operator sign-on"): `oidc-provider` (an OpenID
// Certified implementation) with static users, for development and tests only. The Temporal UI server signs operators
// in through it (authorization code flow); the Temporal server checks the ID token the UI forwards (signature from
// this provider's JWKS) and maps its `permissions` claim, Temporal's `namespace:role` form, with its default claim
// mapper and authorizer. A company points both at its own identity provider instead (same settings, other URL).
// The provider itself is scripts/lib/oidc-server.ts (only its process loads `oidc-provider`, an ES module).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** What a person may do in the Temporal UI (and with the Temporal API through it). */
export type OperatorRole = 'viewer' | 'operator' | 'admin';

/**
 * Each role's Temporal permissions (the server's default claim mapper reads `namespace:role`). A viewer reads
 * workflows and histories; an operator may also write (the operator's updates: retry, refund); an admin has every
 * namespace and cluster API. The roles reach the server in the ID token, so a change applies at the next sign-in.
 * Terminate, reset and delete need admin: Temporal's default authorizer would grant them to writers, the server of
 * ops/temporal-server does not (docs/operations.md).
 */
export const rolePermissions: Record<OperatorRole, string[]> = {
  // The cluster scope is named after the system namespace (`temporal-system`, not `system`, in the server's claim
  // mapper). Its read role: the UI lists namespaces and reads the cluster's information, cluster-scoped reads.
  viewer: ['default:read', 'temporal-system:read'],
  operator: ['default:write', 'temporal-system:read'],
  admin: ['default:admin', 'temporal-system:admin'],
};

export interface StaticUser {
  sub: string;
  email: string;
  name: string;
  roles: OperatorRole[];
}

/** The development and test users: one per role. Their password is the provider's OIDC_USER_PASSWORD. */
export const developmentUsers: StaticUser[] = [
  { sub: 'vera-viewer', email: 'vera.viewer@example.com', name: 'Vera Viewer', roles: ['viewer'] },
  { sub: 'oscar-operator', email: 'oscar.operator@example.com', name: 'Oscar Operator', roles: ['operator'] },
  { sub: 'ada-admin', email: 'ada.admin@example.com', name: 'Ada Admin', roles: ['admin'] },
];

export function userByRole(role: OperatorRole): StaticUser {
  return developmentUsers.find((user) => user.roles.includes(role))!;
}

export interface OidcProviderSettings {
  /** The issuer URL, which is also where it serves (e.g. http://127.0.0.1:8234). */
  issuer: string;
  port: number;
  /** Its signing key and cookie keys, kept across restarts (a key change would void every session and token). */
  stateDir: string;
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  /** The static users' password. */
  userPassword: string;
}

/** The provider process's environment (scripts/production/oidc-provider.ts). */
export function oidcProviderEnv(settings: OidcProviderSettings): Record<string, string> {
  return {
    OIDC_ISSUER: settings.issuer,
    OIDC_PORT: String(settings.port),
    OIDC_STATE_DIR: settings.stateDir,
    OIDC_CLIENT_ID: settings.clientId,
    OIDC_CLIENT_SECRET: settings.clientSecret,
    OIDC_REDIRECT_URIS: settings.redirectUris.join(','),
    OIDC_USER_PASSWORD: settings.userPassword,
  };
}

export function oidcSettingsFromEnv(env: NodeJS.ProcessEnv): OidcProviderSettings {
  const required = (name: string): string => {
    const value = env[name];
    if (!value) throw new Error(`${name} is required (docs/configuration.md, the OpenID Provider)`);
    return value;
  };
  return {
    issuer: required('OIDC_ISSUER'),
    port: Number(required('OIDC_PORT')),
    stateDir: required('OIDC_STATE_DIR'),
    clientId: required('OIDC_CLIENT_ID'),
    clientSecret: required('OIDC_CLIENT_SECRET'),
    redirectUris: required('OIDC_REDIRECT_URIS').split(','),
    userPassword: required('OIDC_USER_PASSWORD'),
  };
}

/** A secret kept in `stateDir` (0600), made on first use. */
export function keptSecret(stateDir: string, name: string, make: () => string): string {
  mkdirSync(stateDir, { recursive: true });
  const file = path.join(stateDir, name);
  if (!existsSync(file)) writeFileSync(file, make(), { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}
