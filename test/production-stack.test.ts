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
  temporalDatabaseEnv,
  temporalServerEnv,
  temporalServerSettings,
  temporalUiEnv,
  temporalClientTlsEnv,
  temporalServerTlsEnv,
  temporalUiTlsEnv,
} from '../scripts/lib/temporal-server';
import { serviceRoles } from '../scripts/lib/database';
import { simulatorServiceAccounts } from '../simulators/bank/iso20022/accounts';
import { temporalCertificatePaths } from '../scripts/lib/tls';

const root = path.resolve(__dirname, '..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

interface Service {
  image?: string;
  build?: string;
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
    expect(service('temporal').image).toBe(`temporalio/server:${server}`);
    expect(service('temporal-schema').image).toBe(`temporalio/admin-tools:${server}`);
    expect(service('temporal-ui').image).toBe(`temporalio/ui:${pinned('TEMPORAL_UI_VERSION')}`);
  });

  it('configure the Temporal server by the same variables and settings', async () => {
    const temporal = service('temporal');
    const native = { ...(await temporalServerEnv(database, 7233)), ...temporalServerTlsEnv(composeCertificates) };
    // Natively every service of the server needs a port of its own on loopback; a container keeps the defaults.
    const loopbackOnly = Object.keys(native).filter((name) => name.endsWith('_PORT') && name !== 'DB_PORT');
    expect(names(temporal.environment)).toEqual(
      names(native).filter((name) => !loopbackOnly.includes(name) && name !== 'BIND_ON_IP'),
    );
    for (const [name, value] of Object.entries({
      ...temporalServerSettings,
      ...temporalServerTlsEnv(composeCertificates),
    }))
      expect(String(temporal.environment?.[name])).toBe(value);
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
    const ui = { ...temporalUiEnv('temporal:7233', 8080), ...temporalUiTlsEnv(composeCertificates) };
    expect(names(service('temporal-ui').environment)).toEqual(names(ui));
    for (const [name, value] of Object.entries(temporalUiTlsEnv(composeCertificates)))
      expect(String(service('temporal-ui').environment?.[name])).toBe(value);
    expect(service('temporal-ui').environment?.TEMPORAL_DEFAULT_NAMESPACE).toBe(NAMESPACE);
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
