// The production topology's Temporal parts without Docker (docs/production.md): the Temporal server on PostgreSQL
// (persistence and visibility), its schemas, the namespace with its search attributes, and the Web UI server. The
// binaries are built once by scripts/temporal-binaries.sh server; the processes run on the stack supervisor
// (scripts/lib/stack.ts startTemporalServer, startTemporalUi). The settings here are docker-compose.yml's, by the
// same variable names: test/production-stack.test.ts fails when the two drift.
import type { Client } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal as temporalProto } from '@temporalio/proto';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { customSearchAttributes } from '../../src/temporal/search-attributes';
import type { TemporalTlsFiles } from '../../src/config';
import { projectRoot } from './paths';
import { freePort } from './ports';
import { TEMPORAL_SERVER_NAME, type TemporalCertificates, type TemporalClientName } from './tls';
import { waitUntil } from './wait';

export interface TemporalServerBinaries {
  server: string;
  sqlTool: string;
  uiServer: string;
  /** The UI server's --root: its config folder holds docker.yaml, the image's template. */
  uiRoot: string;
}

/** The namespace the API and the worker use (TEMPORAL_NAMESPACE). */
export const NAMESPACE = 'default';
/**
 * How long the server keeps a closed workflow's history (the UI shows it, `reset` needs it): a month of disputes can
 * be investigated there. The payments database (transactions, events, ledger) is the record after that.
 */
export const NAMESPACE_RETENTION_DAYS = 30;

/** Settings of the server that docker-compose.yml sets too (its temporal service's environment, same values). */
export const temporalServerSettings = {
  DB: 'postgres12',
  // Fixed for the life of a cluster (history is partitioned by it); docs/production.md says when to pick more.
  NUM_HISTORY_SHARDS: '4',
} as const;

/** The file given to the server as DYNAMIC_CONFIG_FILE_PATH (docker-compose.yml mounts the same file). */
export const dynamicConfigFile = path.join(projectRoot, 'scripts', 'production', 'dynamicconfig.yaml');
/** Creates or updates the server's databases (docker-compose.yml's temporal-schema service runs it too). */
export const schemaScript = path.join(projectRoot, 'scripts', 'production', 'temporal-schema.sh');

/** The server's binaries (built on first use, about 5 minutes); undefined where Go is missing. */
export function temporalServerBinaries(): Promise<TemporalServerBinaries | undefined> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'bash',
      [path.join(projectRoot, 'scripts', 'temporal-binaries.sh'), 'server'],
      { encoding: 'utf8', maxBuffer: 10 * 1024 * 1024 },
      (error, stdout) => {
        if (error) return reject(error);
        const values: Record<string, string> = Object.fromEntries(
          stdout
            .trim()
            .split('\n')
            .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
        );
        const [server, sqlTool, uiServer, uiRoot] = [
          'TEMPORAL_SERVER_PATH',
          'TEMPORAL_SQL_TOOL_PATH',
          'TEMPORAL_UI_SERVER_PATH',
          'TEMPORAL_UI_ROOT',
        ].map((name) => values[name] ?? '');
        resolve(server && sqlTool && uiServer && uiRoot ? { server, sqlTool, uiServer, uiRoot } : undefined);
      },
    );
    child.stderr?.pipe(process.stderr);
  });
}

/** Where the server's databases are: docker-compose.yml's x-temporal-database variables. */
export interface TemporalDatabase {
  host: string;
  port: number;
  user: string;
  password: string;
  /** Default temporal and temporal_visibility; a stack sharing a cluster with another can pick its own. */
  database?: string;
  visibilityDatabase?: string;
}

export function temporalDatabaseEnv(database: TemporalDatabase): Record<string, string> {
  return {
    POSTGRES_SEEDS: database.host,
    DB_PORT: String(database.port),
    POSTGRES_USER: database.user,
    POSTGRES_PWD: database.password,
    DBNAME: database.database ?? 'temporal',
    VISIBILITY_DBNAME: database.visibilityDatabase ?? 'temporal_visibility',
  };
}

/** Runs scripts/production/temporal-schema.sh with the given schema tool (idempotent; before every start). */
export function setUpTemporalSchemas(sqlTool: string, database: TemporalDatabase): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      'sh',
      [schemaScript],
      { env: { ...process.env, ...temporalDatabaseEnv(database), TEMPORAL_SQL_TOOL: sqlTool }, encoding: 'utf8' },
      (error, stdout, stderr) =>
        error ? reject(new Error(`temporal-schema.sh failed: ${stderr || stdout || error.message}`)) : resolve(),
    );
  });
}

/**
 * The server's environment on loopback: docker-compose.yml's settings plus a port for each of its services (a
 * container has its own network and keeps the defaults; here they must not collide with another stack's).
 */
export async function temporalServerEnv(
  database: TemporalDatabase,
  frontendPort: number,
  internalFrontendPort?: number,
): Promise<Record<string, string>> {
  const ports: Record<string, string> = { FRONTEND_GRPC_PORT: String(frontendPort) };
  if (internalFrontendPort !== undefined) {
    ports.INTERNAL_FRONTEND_GRPC_PORT = String(internalFrontendPort);
    ports.INTERNAL_FRONTEND_MEMBERSHIP_PORT = String(await freePort());
    ports.INTERNAL_FRONTEND_HTTP_PORT = String(await freePort());
  }
  for (const name of [
    'FRONTEND_HTTP_PORT',
    'FRONTEND_MEMBERSHIP_PORT',
    'HISTORY_GRPC_PORT',
    'HISTORY_MEMBERSHIP_PORT',
    'MATCHING_GRPC_PORT',
    'MATCHING_MEMBERSHIP_PORT',
    'WORKER_GRPC_PORT',
    'WORKER_MEMBERSHIP_PORT',
  ])
    ports[name] = String(await freePort());
  return {
    ...temporalServerSettings,
    ...temporalDatabaseEnv(database),
    DYNAMIC_CONFIG_FILE_PATH: dynamicConfigFile,
    BIND_ON_IP: '127.0.0.1',
    ...ports,
  };
}

/**
 * Mutual TLS on the server (the variables of its config template): the frontend and the services between
 * themselves serve the server's certificate and take only clients whose certificate the CA signed; the services
 * present the same certificate to each other and to the frontend.
 */
export function temporalServerTlsEnv(certificates: TemporalCertificates): Record<string, string> {
  return {
    TEMPORAL_TLS_REQUIRE_CLIENT_AUTH: 'true',
    TEMPORAL_TLS_SERVER_CA_CERT: certificates.caCert,
    TEMPORAL_TLS_SERVER_CERT: certificates.serverCert,
    TEMPORAL_TLS_SERVER_KEY: certificates.serverKey,
    TEMPORAL_TLS_FRONTEND_CERT: certificates.serverCert,
    TEMPORAL_TLS_FRONTEND_KEY: certificates.serverKey,
    // The template lists two client CAs (one for a rotation's overlap: docs/operations.md); both are ours here.
    TEMPORAL_TLS_CLIENT1_CA_CERT: certificates.caCert,
    TEMPORAL_TLS_CLIENT2_CA_CERT: certificates.caCert,
    TEMPORAL_TLS_INTERNODE_SERVER_NAME: TEMPORAL_SERVER_NAME,
    TEMPORAL_TLS_FRONTEND_SERVER_NAME: TEMPORAL_SERVER_NAME,
  };
}

/**
 * Operators' single sign-on on the server (docs/operations.md "Operator sign-on"): the public frontend takes a call
 * only with a bearer token its default JWT claim mapper accepts (signed by a key of `jwksUrl`; roles from the
 * `permissions` claim, `namespace:role`) and its authorizer allows (the default one, plus terminate, reset and delete
 * for admins only: ops/temporal-server, which also stamps the token's email as the caller's identity). The API, the
 * workers and the server's own system workers connect to the internal frontend instead, which serves mutual TLS with
 * the internode certificates and takes no token: a service is identified by its client certificate, a person by their token.
 */
export function temporalServerAuthEnv(jwksUrl: string): Record<string, string> {
  return {
    TEMPORAL_AUTH_AUTHORIZER: 'default',
    TEMPORAL_AUTH_CLAIM_MAPPER: 'default',
    TEMPORAL_JWT_KEY_SOURCE1: jwksUrl,
    TEMPORAL_JWT_PERMISSIONS_CLAIM: 'permissions',
    USE_INTERNAL_FRONTEND: 'true',
  };
}

/** The server's command line: with single sign-on it serves the internal frontend as well (not a default service). */
export function temporalServerArgs(signOn: boolean): string[] {
  if (!signOn) return ['start'];
  const services = ['frontend', 'internal-frontend', 'history', 'matching', 'worker'];
  return ['start', ...services.flatMap((service) => ['--service', service])];
}

/** Where the UI server signs people in (its template's TEMPORAL_AUTH_* names): an OpenID Provider's client. */
export interface TemporalUiSignOn {
  /** The provider's issuer URL (its /.well-known/openid-configuration is read at start). */
  providerUrl: string;
  clientId: string;
  clientSecret: string;
  /** The UI's own URL as the browser reaches it: the callback and the allowed origin derive from it. */
  uiUrl: string;
}

export function temporalUiAuthEnv(signOn: TemporalUiSignOn): Record<string, string> {
  return {
    TEMPORAL_AUTH_ENABLED: 'true',
    TEMPORAL_AUTH_TYPE: 'oidc',
    TEMPORAL_AUTH_LABEL: 'Company sign-on',
    TEMPORAL_AUTH_PROVIDER_URL: signOn.providerUrl,
    TEMPORAL_AUTH_CLIENT_ID: signOn.clientId,
    TEMPORAL_AUTH_CLIENT_SECRET: signOn.clientSecret,
    TEMPORAL_AUTH_CALLBACK_URL: `${signOn.uiUrl}/auth/sso/callback`,
    TEMPORAL_AUTH_SCOPES: 'openid,profile,email,groups',
    // The server's claim mapper reads the roles from the ID token (a JWT whatever the provider's access tokens are).
    TEMPORAL_AUTH_USE_ID_TOKEN_AS_BEARER: 'true',
    TEMPORAL_AUTH_REDIRECT_TO_PROVIDER: 'true',
    TEMPORAL_CORS_ORIGINS: signOn.uiUrl,
  };
}

/** A client's files (src/config.ts TEMPORAL_TLS_*): `name`'s certificate, the CA, the server's name. */
export function temporalClientTls(certificates: TemporalCertificates, name: TemporalClientName): TemporalTlsFiles {
  const pair = certificates.client[name];
  return {
    certFile: pair.cert,
    keyFile: pair.key,
    caCertFile: certificates.caCert,
    serverName: TEMPORAL_SERVER_NAME,
  };
}

/** The same as the API's and the worker's environment (TEMPORAL_TLS_*, docs/configuration.md). */
export function temporalClientTlsEnv(
  certificates: TemporalCertificates,
  name: TemporalClientName,
): Record<
  'TEMPORAL_TLS_CLIENT_CERT' | 'TEMPORAL_TLS_CLIENT_KEY' | 'TEMPORAL_TLS_CA_CERT' | 'TEMPORAL_TLS_SERVER_NAME',
  string
> {
  const files = temporalClientTls(certificates, name);
  return {
    TEMPORAL_TLS_CLIENT_CERT: files.certFile,
    TEMPORAL_TLS_CLIENT_KEY: files.keyFile,
    TEMPORAL_TLS_CA_CERT: files.caCertFile!,
    TEMPORAL_TLS_SERVER_NAME: files.serverName!,
  };
}

/** The Web UI server's environment (the variables of its image's config template, config/docker.yaml). */
export function temporalUiEnv(temporalAddress: string, port: number): Record<string, string> {
  return { TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_UI_PORT: String(port), TEMPORAL_DEFAULT_NAMESPACE: NAMESPACE };
}

/** The UI server's client certificate (its template's TEMPORAL_TLS_* names, which differ from ours). */
export function temporalUiTlsEnv(certificates: TemporalCertificates): Record<string, string> {
  return {
    TEMPORAL_TLS_CA: certificates.caCert,
    TEMPORAL_TLS_CERT: certificates.client.ui.cert,
    TEMPORAL_TLS_KEY: certificates.client.ui.key,
    TEMPORAL_TLS_ENABLE_HOST_VERIFICATION: 'true',
    TEMPORAL_TLS_SERVER_NAME: TEMPORAL_SERVER_NAME,
  };
}

/**
 * Registers the namespace (with NAMESPACE_RETENTION_DAYS) and the project's search attributes when missing, then
 * waits until a visibility query by one of them answers (the frontend learns of a new namespace a few seconds
 * after it is stored). Idempotent; docker-compose.yml's temporal-namespace service runs it through
 * scripts/production/temporal-namespace.ts.
 */
export async function ensureNamespace(client: Client, namespace = NAMESPACE, limitMs = 120_000): Promise<void> {
  const service = client.workflowService;
  const notFound = (error: unknown) => (error as { code?: number }).code === 5; // gRPC NOT_FOUND
  const registered = await waitUntil(
    async () => {
      try {
        await service.describeNamespace({ namespace });
        return true;
      } catch (error) {
        if (!notFound(error)) return false;
      }
      await service.registerNamespace({
        namespace,
        workflowExecutionRetentionPeriod: msToTs(`${NAMESPACE_RETENTION_DAYS} days`),
      });
      return true;
    },
    limitMs,
    500,
  );
  if (!registered) throw new Error(`namespace ${namespace} could not be registered within ${limitMs / 1000} s`);
  const keyword = temporalProto.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
  const added = await waitUntil(
    async () => {
      const { customAttributes } = await client.connection.operatorService.listSearchAttributes({ namespace });
      const missing = customSearchAttributes.filter((key) => !customAttributes?.[key.name]);
      if (missing.length === 0) return true;
      await client.connection.operatorService.addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(missing.map((key) => [key.name, keyword])),
      });
      return false;
    },
    limitMs,
    1000,
  );
  if (!added) throw new Error(`the search attributes of ${namespace} could not be added within ${limitMs / 1000} s`);
  const queryable = await waitUntil(
    async () => {
      await service.countWorkflowExecutions({ namespace, query: `${customSearchAttributes[0]!.name} = 'probe'` });
      return true;
    },
    limitMs,
    500,
  );
  if (!queryable)
    throw new Error(`namespace ${namespace} did not answer a visibility query within ${limitMs / 1000} s`);
}
