// `npm run dev`: everything on one machine, on the stack supervisor (scripts/lib/stack.ts). PostgreSQL
// (DATABASE_URL or the private cluster in .data/postgres), the Temporal dev server with its SQLite database in
// .data/temporal (its log in .data/temporal/server.log) and the Web UI, then the API and the worker as child
// processes printing to this terminal. Prints the URLs and a sandbox partner API key, which is kept in
// .data/dev-partner.json and reused on the next start. Ctrl-C stops everything; so does a child that exits.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { CreatedPartner } from '../src/services/partners';
import { generatePrismaClient, prepareDatabase } from './lib/database';
import { projectRoot } from './lib/paths';
import { nodeArgsOf, serviceEnv } from './lib/service-runtime';
import { tsEntry } from './lib/entry-points';
import { bankSimulatorServiceEnv, httpOk, ProcessSpec, Stack } from './lib/stack';
import { temporalBinary } from './lib/temporal';
import { SIMULATOR_ACCOUNTS_SETTING } from '../simulators/bank/iso20022/accounts';

const dataDir = path.join(projectRoot, '.data');
const apiPort = Number(process.env.PORT ?? 3000);
const temporalPort = Number(process.env.TEMPORAL_PORT ?? 7233);
const temporalUiPort = Number(process.env.TEMPORAL_UI_PORT ?? 8233);
/** The sandbox chain's node (Anvil), on the port EVM tools expect by default. */
const anvilPort = Number(process.env.ANVIL_PORT ?? 8545);
const bankSimulatorPort = Number(process.env.BANK_SIMULATOR_PORT ?? 4100);
/** Prometheus endpoints: the API's, the worker's (with the Temporal SDK's on the next port, loopback only). */
const metricsPorts = {
  api: Number(process.env.METRICS_PORT ?? 9464),
  worker: Number(process.env.METRICS_PORT ?? 9464) + 1,
};

const startedAt = Date.now();

function log(message: string): void {
  console.error(`[dev] ${message} (${((Date.now() - startedAt) / 1000).toFixed(1)} s)`);
}

async function devPartner(databaseUrl: string): Promise<CreatedPartner> {
  const file = path.join(dataDir, 'dev-partner.json');
  // Imported only now: @prisma/client binds to the generated client when first loaded, and on a fresh clone
  // that client exists only after generatePrismaClient() in main (a static import would load the stub).
  const { createPrismaClient, closeDatabaseClient } = await import('../src/persistence/database');
  const { createPartner } = await import('../src/services/partners');
  const { hashApiKey } = await import('../src/domain/api-keys');
  const { isApiKeyActive } = await import('../src/persistence/api-keys');
  const prisma = createPrismaClient(databaseUrl, { role: 'dev', poolSize: 1 });
  try {
    if (existsSync(file)) {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as CreatedPartner;
      if (await isApiKeyActive(prisma, hashApiKey(saved.api_key))) return saved;
    }
    const created = await createPartner(prisma, 'Local sandbox partner', 'sandbox');
    writeFileSync(file, JSON.stringify(created), { mode: 0o600 });
    return created;
  } finally {
    await closeDatabaseClient(prisma);
  }
}

/** A random SECRETS_ENCRYPTION_KEY kept in .data/secrets-encryption.key (0600) and reused on the next start. */
function devSecretsKey(): string {
  const file = path.join(dataDir, 'secrets-encryption.key');
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

async function main(): Promise<void> {
  mkdirSync(path.join(dataDir, 'temporal'), { recursive: true });
  let stopping = false;
  const stack = new Stack({
    logs: 'terminal',
    onUnexpectedExit: (child, code) => {
      if (stopping) return;
      log(`${child.name} exited (${code}); shutting down`);
      void stop(code ?? 1);
    },
  });
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    log('stopping API, worker, Anvil, Temporal and PostgreSQL');
    await stack.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  try {
    await start(stack);
  } catch (error) {
    console.error(error);
    await stop(1);
  }
}

async function start(stack: Stack): Promise<void> {
  // A first run's slow steps overlap: fetching the Temporal CLI (network), generating the Prisma client and
  // creating and migrating the database (each a child process).
  const cliPath = temporalBinary('cli');
  const generated = generatePrismaClient();
  // The chain's node beside the database: its state (blocks, balances) is kept in .data/anvil with the database's.
  mkdirSync(path.join(dataDir, 'anvil'), { recursive: true });
  const chain = stack.startAnvil({
    port: anvilPort,
    blockTimeSeconds: 1,
    stateFile: path.join(dataDir, 'anvil', 'state.json'),
  });
  chain.catch(() => undefined);
  const database = await stack.startDatabase({ localDatabase: 'payments' });
  await generated;
  log(`PostgreSQL ready (${database.localCluster ? 'private cluster in .data/postgres' : 'DATABASE_URL'})`);
  await chain;
  log(`Anvil ready on ${stack.chain!.rpcUrl} (USDC ${stack.chain!.tokens.USDC}, USDT ${stack.chain!.tokens.USDT})`);

  // The bank simulator (simulators/bank): EUR and USD payouts go to its ISO 20022 channel.
  await stack.startBankSimulator({ port: bankSimulatorPort, stateDir: path.join(dataDir, 'bank-simulator') });
  const appEnv = process.env.APP_ENV ?? 'sandbox';
  const childEnv = {
    ...process.env,
    ...serviceEnv,
    APP_ENV: appEnv,
    PORT: String(apiPort),
    DATABASE_URL: database.url,
    TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}`,
    TEMPORAL_NAMESPACE: 'default',
    DOCUMENT_STORAGE_DIR: process.env.DOCUMENT_STORAGE_DIR ?? path.join(dataDir, 'documents'),
    // Local receivers (http://localhost:...) can get the sandbox's webhooks.
    WEBHOOK_ALLOW_PRIVATE_URLS: process.env.WEBHOOK_ALLOW_PRIVATE_URLS ?? String(appEnv === 'sandbox'),
    // Secrets at rest are encrypted with a key of this machine's own, generated once and kept in .data/.
    SECRETS_ENCRYPTION_KEY: process.env.SECRETS_ENCRYPTION_KEY || devSecretsKey(),
    // Readable lines on this terminal; production keeps JSON.
    LOG_FORMAT: process.env.LOG_FORMAT ?? 'pretty',
    METRICS_HOST: process.env.METRICS_HOST ?? '127.0.0.1',
    // The real EVM adapter on the local node (a block a second: two confirmations take about two seconds).
    ...(process.env.ETHEREUM_RPC_URL || process.env.EVM_CHAINS ? {} : stack.chainEnv(2)),
    ISO20022_BANK_URL: process.env.ISO20022_BANK_URL ?? `http://127.0.0.1:${bankSimulatorPort}/iso20022`,
    ISO20022_ACCOUNTS: process.env.ISO20022_ACCOUNTS ?? SIMULATOR_ACCOUNTS_SETTING,
    // Pix collections, returns and payouts through its API Pix, and the exchange at its liquidity provider.
    ...(process.env.PIX_API_URL || process.env.LIQUIDITY_PROVIDER_URL
      ? {}
      : bankSimulatorServiceEnv(`http://127.0.0.1:${bankSimulatorPort}`, `http://127.0.0.1:${apiPort}`)),
  };
  const service = (name: keyof typeof nodeArgsOf, entry: string, ready: ProcessSpec['ready']): ProcessSpec => ({
    name,
    ...tsEntry(entry, [...nodeArgsOf[name]]),
    env: { ...childEnv, METRICS_PORT: String(metricsPorts[name]) },
    ready,
  });

  // The API needs only the database (it connects to Temporal on first use), so it starts while Temporal does.
  const api = stack.start(service('api', 'src/server.ts', () => httpOk(`http://127.0.0.1:${apiPort}/health/live`)));
  // Awaited below; until then its failure must not count as unhandled.
  api.catch(() => undefined);
  const cli = await cliPath;
  log(`starting Temporal dev server (${cli ? path.relative(projectRoot, cli) : 'no CLI'})`);
  await stack.startTemporal({
    cli: Promise.resolve(cli),
    dbFile: path.join(dataDir, 'temporal', 'temporal.db'),
    port: temporalPort,
    uiPort: temporalUiPort,
    logFile: path.join(dataDir, 'temporal', 'server.log'),
  });
  log('Temporal dev server ready');
  const partner = await devPartner(database.url);
  const taskQueue = process.env.TEMPORAL_TASK_QUEUE ?? 'payments';
  await Promise.all([api, stack.start(service('worker', 'src/worker.ts', stack.pollsTaskQueue(taskQueue)))]);

  console.log(
    [
      '',
      `  API            http://localhost:${apiPort}   (OpenAPI: http://localhost:${apiPort}/openapi.json)`,
      `  Temporal UI    http://localhost:${temporalUiPort}`,
      `  Temporal       127.0.0.1:${temporalPort} (namespace default)`,
      `  Metrics        http://127.0.0.1:${metricsPorts.api}/metrics (API), http://127.0.0.1:${metricsPorts.worker}/metrics (worker)`,
      `  Database       ${database.url}`,
      `  Chain          ${stack.chain!.rpcUrl} (Anvil, chain id ${stack.chain!.chainId}; USDC ${stack.chain!.tokens.USDC})`,
      '  Access         development only: Temporal in plaintext, the UI without login, one database role (the',
      '                 production stack has mutual TLS to Temporal, sign-on with roles and service roles:',
      '                 docs/operations.md "Operator access")',
      `  Bank simulator http://127.0.0.1:${bankSimulatorPort}/health   (ISO 20022: /iso20022, API Pix: /pix, liquidity: /liquidity)`,
      `  Sandbox key    ${partner.api_key}   (partner ${partner.partner_id})`,
      '',
      `  try: curl -H "Authorization: ${partner.api_key}" http://localhost:${apiPort}/v1/customers`,
      '  Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
}

void main();
