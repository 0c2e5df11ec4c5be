// docker-compose.yml and `npm run stack -- --production` (scripts/lib/production.ts, scripts/lib/temporal-server.ts)
// describe one topology: this reads the compose file and fails when the two drift (images' versions, environment
// names and settings, commands, replicas). Nothing runs here; test/production-stack.browser.test.ts runs the stack.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import {
  appEnvironmentNames,
  outsideWorldEnvironmentNames,
  imageEnv,
  migrateCommand,
  POSTGRES_MAJOR,
  productionReplicas,
  serviceCommand,
} from '../scripts/lib/production';
import {
  NAMESPACE,
  temporalServerArgs,
  temporalServerAuthEnv,
  temporalUiAuthEnv,
  temporalDatabaseEnv,
  temporalServerEnv,
  temporalServerSettings,
  temporalUiEnv,
  temporalClientTlsEnv,
  temporalServerTlsEnv,
  temporalUiTlsEnv,
} from '../scripts/lib/temporal-server';
import { serviceRoles } from '../scripts/lib/database';
import { oidcProviderEnv } from '../scripts/lib/oidc';
import { simulatorServiceAccounts } from '../simulators/bank/iso20022/accounts';
import { temporalCertificatePaths } from '../scripts/lib/tls';

const root = path.resolve(__dirname, '..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

interface Service {
  image?: string;
  build?: string;
  networks?: Record<string, { aliases?: string[] }>;
  command?: string[];
  environment?: Record<string, string | number>;
  volumes?: string[];
  deploy?: { replicas?: number };
}
const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, Service> };
const service = (name: string): Service => {
  const found = compose.services[name];
  if (!found) throw new Error(`docker-compose.yml has no service ${name}`);
  return found;
};
const names = (environment: object | undefined) => Object.keys(environment ?? {}).sort();
/** A pinned version in scripts/temporal-binaries.sh (what the native stack builds). */
const pinned = (variable: string) => {
  const match = new RegExp(`^${variable}="([^"]+)"`, 'm').exec(read('scripts/temporal-binaries.sh'));
  if (!match) throw new Error(`scripts/temporal-binaries.sh pins no ${variable}`);
  return match[1];
};
const database = { host: 'db', port: 5432, user: 'u', password: 'p' };
/** Where compose mounts the certificates (scripts/production/temporal-certificates.ts makes them). */
const composeCertificates = temporalCertificatePaths('/tls');
const composeTlsVolume = './.data/compose-tls:/tls:ro';

describe('docker-compose.yml and npm run stack -- --production', () => {
  it('run the same versions', () => {
    const server = pinned('TEMPORAL_SERVER_VERSION');
    expect(service('postgres').image).toBe(`postgres:${POSTGRES_MAJOR}`);
    // The server is the release's, built with the operator rules of ops/temporal-server on the release's image.
    expect(service('temporal').build).toBe('ops/temporal-server');
    const serverImage = read('ops/temporal-server/Dockerfile');
    expect(serverImage).toContain(`FROM temporalio/server:${server}\n`);
    expect(serverImage).toContain(`FROM golang:${pinned('TEMPORAL_SERVER_GO_TOOLCHAIN')!.replace(/^go/, '')} AS build`);
    expect(read('ops/temporal-server/go.mod')).toContain(`go.temporal.io/server v${server}\n`);
    expect(service('temporal-schema').image).toBe(`temporalio/admin-tools:${server}`);
    expect(service('temporal-ui').image).toBe(`temporalio/ui:${pinned('TEMPORAL_UI_VERSION')}`);
  });

  it('configure the Temporal server by the same variables and settings', async () => {
    const temporal = service('temporal');
    const jwksUrl = String(temporal.environment?.TEMPORAL_JWT_KEY_SOURCE1);
    const native = {
      ...(await temporalServerEnv(database, 7233, 7236)),
      ...temporalServerTlsEnv(composeCertificates),
      ...temporalServerAuthEnv(jwksUrl),
    };
    // Natively every service of the server needs a port of its own on loopback; a container keeps the defaults.
    const loopbackOnly = Object.keys(native).filter((name) => name.endsWith('_PORT') && name !== 'DB_PORT');
    expect(names(temporal.environment)).toEqual(
      names(native).filter((name) => !loopbackOnly.includes(name) && name !== 'BIND_ON_IP'),
    );
    for (const [name, value] of Object.entries({
      ...temporalServerSettings,
      ...temporalServerTlsEnv(composeCertificates),
      ...temporalServerAuthEnv(jwksUrl),
    }))
      expect(String(temporal.environment?.[name])).toBe(value);
    // With sign-on the internal frontend serves the services: the same services on the command line.
    expect(temporal.command).toEqual(temporalServerArgs(true));
    expect(temporal.volumes).toContain(composeTlsVolume);
    // The same dynamic config file, mounted where the variable points.
    expect(temporal.volumes).toContain(
      `./${path.relative(root, native.DYNAMIC_CONFIG_FILE_PATH!)}:${temporal.environment?.DYNAMIC_CONFIG_FILE_PATH}:ro`,
    );
  });

  it('set up the schemas with the same script, and the namespace with the same program', () => {
    const schema = service('temporal-schema');
    expect(schema.command).toEqual(['sh', '/scripts/temporal-schema.sh']);
    expect(schema.volumes).toContain('./scripts/production/temporal-schema.sh:/scripts/temporal-schema.sh:ro');
    expect(names(schema.environment)).toEqual(names(temporalDatabaseEnv(database)));
    const namespace = service('temporal-namespace');
    expect(namespace.command).toEqual(['npx', 'tsx', 'scripts/production/temporal-namespace.ts']);
    expect(namespace.environment?.TEMPORAL_NAMESPACE).toBe(NAMESPACE);
  });

  it('point the UI at the server by the same variables, with its client certificate', () => {
    const environment = service('temporal-ui').environment ?? {};
    const signOn = {
      providerUrl: String(environment.TEMPORAL_AUTH_PROVIDER_URL),
      clientId: String(environment.TEMPORAL_AUTH_CLIENT_ID),
      clientSecret: String(environment.TEMPORAL_AUTH_CLIENT_SECRET),
      uiUrl: 'http://localhost:8233',
    };
    const ui = {
      ...temporalUiEnv('temporal:7233', 8080),
      ...temporalUiTlsEnv(composeCertificates),
      ...temporalUiAuthEnv(signOn),
    };
    expect(names(environment)).toEqual(names(ui));
    for (const [name, value] of Object.entries(temporalUiAuthEnv(signOn)))
      expect(String(environment[name])).toBe(value);
    for (const [name, value] of Object.entries(temporalUiTlsEnv(composeCertificates)))
      expect(String(service('temporal-ui').environment?.[name])).toBe(value);
    expect(service('temporal-ui').environment?.TEMPORAL_DEFAULT_NAMESPACE).toBe(NAMESPACE);
  });

  it('sign operators in through the same OpenID Provider, reached by one URL from the browser and the containers', () => {
    const oidc = service('oidc');
    expect(oidc.command).toEqual(['npx', 'tsx', 'scripts/production/oidc-provider.ts']);
    const environment = oidc.environment ?? {};
    expect(names(environment)).toEqual(
      names(
        oidcProviderEnv({
          issuer: '',
          port: 0,
          stateDir: '',
          clientId: '',
          clientSecret: '',
          redirectUris: [],
          userPassword: '',
        }),
      ),
    );
    const issuer = String(environment.OIDC_ISSUER);
    const ui = service('temporal-ui').environment ?? {};
    expect(ui.TEMPORAL_AUTH_PROVIDER_URL).toBe(issuer);
    expect(ui.TEMPORAL_AUTH_CLIENT_ID).toBe(environment.OIDC_CLIENT_ID);
    expect(ui.TEMPORAL_AUTH_CLIENT_SECRET).toBe(environment.OIDC_CLIENT_SECRET);
    expect(String(environment.OIDC_REDIRECT_URIS).split(',')).toContain(ui.TEMPORAL_AUTH_CALLBACK_URL);
    expect(service('temporal').environment?.TEMPORAL_JWT_KEY_SOURCE1).toBe(`${issuer}/jwks`);
    // The issuer's host is the service's name on the compose network, and loopback for a browser (*.localhost).
    const host = new URL(issuer).hostname;
    expect(host.endsWith('.localhost')).toBe(true);
    expect(oidc.networks?.default?.aliases).toContain(host);
    expect(String(environment.OIDC_PORT)).toBe(new URL(issuer).port);
  });

  it('connect the services to the internal frontend, which asks for no token', () => {
    for (const name of ['migrate', 'api', 'worker', 'temporal-namespace'])
      expect(service(name).environment?.TEMPORAL_ADDRESS).toBe('temporal:7236');
  });

  it('run the migrations, the APIs and the workers with the same commands, environment and replicas', () => {
    const node = (which: 'api' | 'worker') => ['node', ...serviceCommand(which).args];
    expect(service('migrate').command).toEqual(migrateCommand);
    expect(service('api').command).toEqual(node('api'));
    expect(service('worker').command).toEqual(node('worker'));
    expect(service('api').deploy?.replicas).toBe(productionReplicas.api);
    expect(service('worker').deploy?.replicas).toBe(productionReplicas.worker);
    const app = [...appEnvironmentNames, ...outsideWorldEnvironmentNames].sort();
    expect(names(service('migrate').environment)).toEqual(app);
    expect(names(service('worker').environment)).toEqual(app);
    expect(names(service('api').environment)).toEqual([...app, 'PORT'].sort());
    expect(service('api').environment?.TEMPORAL_NAMESPACE).toBe(NAMESPACE);
    for (const [name, value] of Object.entries(imageEnv)) expect(read('Dockerfile')).toContain(`ENV ${name}=${value}`);
    // Each with its own client certificate and database role.
    for (const which of ['api', 'worker'] as const) {
      const environment = service(which).environment ?? {};
      for (const [name, value] of Object.entries(temporalClientTlsEnv(composeCertificates, which)))
        expect(String(environment[name])).toBe(value);
      expect(new URL(String(environment.DATABASE_URL)).username).toBe(serviceRoles[which]);
      expect(read('scripts/production/database-roles.sql')).toContain(`CREATE ROLE ${serviceRoles[which]} LOGIN`);
      expect(service(which).volumes).toContain(composeTlsVolume);
    }
  });

  it('pass this wave’s outside-world settings, each one the service reads, and start the bank simulator', () => {
    const settings = read('src/config.ts');
    for (const name of outsideWorldEnvironmentNames)
      expect({ name, known: settings.includes(`    ${name}:`) }).toEqual({ name, known: true });
    const worker = service('worker').environment ?? {};
    // Interpolated by compose: the operator's value, else the simulator service's.
    expect(worker.ISO20022_BANK_URL).toBe('${ISO20022_BANK_URL:-http://bank-simulator:4100/iso20022}');
    expect(JSON.parse(String(worker.ISO20022_ACCOUNTS))).toEqual(simulatorServiceAccounts);
    expect(service('bank-simulator').command).toEqual(['npx', 'tsx', 'simulators/bank/main.ts']);
    expect(service('bank-simulator').environment?.BANK_SIMULATOR_PORT).toBe(4100);
  });
});
