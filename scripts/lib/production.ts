// The production topology of docker-compose.yml, run without Docker on the stack supervisor: one PostgreSQL cluster
// (the payments database and the Temporal server's two), the Temporal server on it (scripts/lib/temporal-server.ts),
// its Web UI server, the migrations, then API and worker processes from `npm run build` (dist/). Used by
// `npm run stack -- --production` (scripts/stack.ts), `npm run chaos -- --engine server`, `npm run bench -- --engine
// server` and test/production-stack.browser.test.ts. The names and commands below are docker-compose.yml's:
// test/production-stack.test.ts reads the compose file and fails when the two drift.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { PreparedDatabase } from './database';
import type { LocalPostgres } from './postgres';
import { nodeArgsOf, serviceEnv } from './service-runtime';
import type { Stack, StackProcess } from './stack';
import type { TemporalDatabase, TemporalServerBinaries } from './temporal-server';
import { randomBytes } from 'node:crypto';
import { keptSecret, type OidcProviderSettings } from './oidc';
import { freePort } from './ports';
import { ensureTemporalCertificates, type TemporalCertificates } from './tls';

/** API and worker processes (docker-compose.yml's replicas). */
export const productionReplicas = { api: 2, worker: 2 } as const;

/** PostgreSQL's major version (docker-compose.yml's postgres image). */
export const POSTGRES_MAJOR = 15;

/** The command of the API or worker process, as docker-compose.yml runs it in the image (cwd: the project). */
export function serviceCommand(which: 'api' | 'worker'): { command: string; args: string[] } {
  return {
    command: process.execPath,
    args: [...nodeArgsOf[which], path.join('dist', 'src', which === 'api' ? 'server.js' : 'worker.js')],
  };
}

/** The migrations' command (docker-compose.yml's migrate service; scripts/lib/database.ts migrate runs it). */
export const migrateCommand = ['npx', 'tsx', 'scripts/migrate.ts'];

/** What the Dockerfile sets for every process of the image. */
export const imageEnv = { NODE_ENV: 'production', ...serviceEnv };

/** docker-compose.yml's x-app-environment, by name: the environment of the API, the worker and the migrations. */
export const appEnvironmentNames = [
  'APP_ENV',
  'DATABASE_URL',
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'TEMPORAL_TASK_QUEUE',
  'LOG_LEVEL',
  'PUBLIC_BASE_URL',
  'DOCUMENT_STORAGE_DIR',
  'SECRETS_ENCRYPTION_KEY',
  // Mutual TLS to Temporal: the CA and the server's name shared, each service its own certificate.
  'TEMPORAL_TLS_CLIENT_CERT',
  'TEMPORAL_TLS_CLIENT_KEY',
  'TEMPORAL_TLS_CA_CERT',
  'TEMPORAL_TLS_SERVER_NAME',
] as const;
export type AppEnvironment = Record<(typeof appEnvironmentNames)[number], string>;

/**
 * The outside world's settings docker-compose passes to every service (x-app-environment): the bank, the liquidity
 * provider, API Pix, the chain, the wallet seed, the virtual-account banks and the sanctions lists. `npm run stack --
 * --production` sets them from its simulators (scripts/stack.ts outsideWorld).
 */
export const outsideWorldEnvironmentNames = [
  'ISO20022_BANK_URL',
  'ISO20022_ACCOUNTS',
  'LIQUIDITY_PROVIDER_URL',
  'NETWORK_FEES',
  'PIX_API_URL',
  'PIX_CLIENT_ID',
  'PIX_CLIENT_SECRET',
  'PIX_COLLECTION_KEY',
  'PIX_WEBHOOK_SECRET',
  'ETHEREUM_RPC_URL',
  'ETHEREUM_CHAIN_ID',
  'ETHEREUM_USDC_CONTRACT',
  'ETHEREUM_USDT_CONTRACT',
  'ETHEREUM_COLLECTION_ADDRESS',
  'ETHEREUM_OFF_RAMP_ADDRESS',
  'ETHEREUM_FEE_ADDRESS',
  'ETHEREUM_CONFIRMATIONS',
  'ETHEREUM_TREASURY_ADDRESSES',
  'WALLET_KEY_SEED',
  'VIRTUAL_ACCOUNT_BANKS',
  'SCREENING_LISTS',
] as const;

/** The Temporal server's databases on a private cluster of scripts/lib/postgres.ts (its superuser, no password). */
export function temporalDatabaseOn(cluster: LocalPostgres): TemporalDatabase {
  return { host: '127.0.0.1', port: cluster.port, user: 'postgres', password: '' };
}

/** The major version of the PostgreSQL that runs `cluster` (its data folder's PG_VERSION). */
export function postgresMajorOf(cluster: LocalPostgres): number {
  return Number(readFileSync(path.join(cluster.dataDir, 'PG_VERSION'), 'utf8').trim());
}

export interface ProductionEngine {
  database: PreparedDatabase;
  temporal: StackProcess;
  temporalAddress: string;
  ui: StackProcess | undefined;
  /** The certificates of mutual TLS to Temporal, when `tls` was asked for. */
  tls: TemporalCertificates | undefined;
  /** Operators' single sign-on, when `signOn` was asked for: the OpenID Provider's settings (its users' password). */
  signOn: { provider: OidcProviderSettings; uiUrl: string | undefined } | undefined;
}

/** The Temporal UI's OIDC client at the development provider (docs/configuration.md). */
export const TEMPORAL_UI_CLIENT_ID = 'temporal-ui';

/** The development OpenID Provider's settings, its secrets kept in `<dataDir>/oidc` (0600). */
export function developmentOidcSettings(
  dataDir: string,
  port: number,
  uiUrl: string | undefined,
): OidcProviderSettings {
  const stateDir = path.join(dataDir, 'oidc');
  const secret = (name: string) => keptSecret(stateDir, name, () => randomBytes(18).toString('base64url'));
  return {
    issuer: `http://127.0.0.1:${port}`,
    port,
    stateDir,
    clientId: TEMPORAL_UI_CLIENT_ID,
    clientSecret: secret('client-secret'),
    redirectUris: uiUrl ? [`${uiUrl}/auth/sso/callback`] : [],
    userPassword: secret('user-password'),
  };
}

/**
 * PostgreSQL (its own cluster under `dataDir`), the payments database migrated, the Temporal server on the same
 * cluster and, when `uiPort` is given, the Web UI. `fresh`: every database recreated empty (chaos, bench, tests).
 */
export async function startProductionEngine(
  stack: Stack,
  options: {
    dataDir: string;
    database: string;
    fresh: boolean;
    temporalPort?: number;
    uiPort?: number;
    binaries?: Promise<TemporalServerBinaries | undefined>;
    /** Mutual TLS to Temporal with the development CA's certificates kept in `<dataDir>/tls` (scripts/lib/tls.ts). */
    tls?: boolean;
    /**
     * Operators' single sign-on (needs `tls`): the development OpenID Provider (scripts/lib/oidc.ts), the server's
     * claim mapper and authorizer on its public frontend, the UI signing in through the provider. `temporalAddress`
     * is then the internal frontend, the services' (mutual TLS, no token).
     */
    signOn?: boolean;
    /** The OpenID Provider's port (default a free one). */
    oidcPort?: number;
    log?: (message: string) => void;
  },
): Promise<ProductionEngine> {
  const database = await stack.startDatabase({
    localDatabase: options.database,
    recreate: options.fresh,
    ownClusterIn: options.dataDir,
  });
  const cluster = database.localCluster as LocalPostgres;
  const major = postgresMajorOf(cluster);
  if (major !== POSTGRES_MAJOR)
    options.log?.(`PostgreSQL ${major} here; docker-compose.yml runs ${POSTGRES_MAJOR} (Debian: postgresql-15)`);
  options.log?.(`PostgreSQL ${major} on port ${cluster.port}, database ${options.database} migrated`);
  const tls = options.tls ? ensureTemporalCertificates(path.join(options.dataDir, 'tls')) : undefined;
  const uiUrl = options.uiPort === undefined ? undefined : `http://127.0.0.1:${options.uiPort}`;
  let provider: OidcProviderSettings | undefined;
  if (options.signOn) {
    // First: the server fetches the provider's JWKS when it starts.
    provider = developmentOidcSettings(options.dataDir, options.oidcPort ?? (await freePort()), uiUrl);
    await stack.startOidcProvider(provider);
    options.log?.(`OpenID Provider ${provider.issuer} (static users, development only)`);
  }
  const temporal = await stack.startTemporalServer({
    tls,
    signOn: provider ? { jwksUrl: `${provider.issuer}/jwks` } : undefined,
    database: temporalDatabaseOn(cluster),
    fresh: options.fresh,
    port: options.temporalPort,
    binaries: options.binaries,
    readyWithinMs: 180_000,
  });
  const temporalAddress = stack.temporal!.address;
  options.log?.(
    `Temporal server on ${temporalAddress} (PostgreSQL persistence and visibility${tls ? `; mutual TLS, certificates in ${tls.dir}` : ''})`,
  );
  const ui =
    options.uiPort === undefined
      ? undefined
      : await stack.startTemporalUi({
          port: options.uiPort,
          signOn:
            provider && uiUrl
              ? {
                  providerUrl: provider.issuer,
                  clientId: provider.clientId,
                  clientSecret: provider.clientSecret,
                  uiUrl,
                }
              : undefined,
        });
  if (ui) options.log?.(`Temporal UI on ${uiUrl}${provider ? ' (sign-in through the OpenID Provider)' : ''}`);
  return { database, temporal, temporalAddress, ui, tls, signOn: provider ? { provider, uiUrl } : undefined };
}
