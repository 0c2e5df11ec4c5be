// `npm run stack -- --production`: what docker-compose.yml starts, without Docker, on the stack supervisor
// (scripts/lib/stack.ts, scripts/lib/production.ts): PostgreSQL (a cluster of its own in .data/production), the
// Temporal server on it with its schemas set up or updated and the namespace and search attributes registered, the
// Temporal Web UI behind the OpenID Provider's sign-in (scripts/lib/oidc.ts), the migrations, and two API and two
// worker processes from `npm run build`, in production mode (APP_ENV=sandbox for the sandbox) against the bank
// simulator and Anvil (outsideWorld). Data is kept across starts; logs are in .data/production/logs/. Ctrl-C stops
// everything; so does a process that exits by itself.
// Options: --no-build (use the dist/ there is). docs/production.md describes the topology and its settings.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { generatePrismaClient, serviceRoleUrl } from './lib/database';
import { projectRoot } from './lib/paths';
import { AppEnvironment, imageEnv, productionReplicas, serviceCommand, startProductionEngine } from './lib/production';
import { httpOk, Stack } from './lib/stack';
import { developmentUsers } from './lib/oidc';
import { NAMESPACE, temporalClientTlsEnv, temporalServerBinaries } from './lib/temporal-server';
import { sandboxBankProfiles } from '../src/providers/deposit-accounts';
import {
  mintSandboxStablecoin,
  sandboxCollectionAddress,
  sandboxOffRampAddress,
} from '../src/providers/evm/sandbox-chain';
import { SeedSigner } from '../src/providers/evm/signer';
import { TREASURY_KEY_REFERENCE } from '../src/providers/wallet-addresses';
import { anvilRpc } from './lib/anvil';

const dataDir = path.join(projectRoot, '.data', 'production');
const firstApiPort = Number(process.env.PORT ?? 3000);
const temporalPort = Number(process.env.TEMPORAL_PORT ?? 7233);
const temporalUiPort = Number(process.env.TEMPORAL_UI_PORT ?? 8233);
const oidcPort = Number(process.env.OIDC_PORT ?? 8234);
const bankSimulatorPort = Number(process.env.BANK_SIMULATOR_PORT ?? 4100);
const startedAt = Date.now();

function log(message: string): void {
  console.error(`[stack] ${message} (${((Date.now() - startedAt) / 1000).toFixed(1)} s)`);
}

/** A SECRETS_ENCRYPTION_KEY kept in .data/production (0600), as `npm run dev` keeps its own. */
function secretsKey(): string {
  const file = path.join(dataDir, 'secrets-encryption.key');
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

/** A hex secret kept in .data/production (0600), made on the first start. */
function keptSecret(name: string, bytes: number): string {
  const file = path.join(dataDir, name);
  if (!existsSync(file)) writeFileSync(file, randomBytes(bytes).toString('hex'), { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

/**
 * Production mode's outside world on this machine (docs/production.md "What production serves"): the bank simulator
 * (ISO 20022 bank and liquidity provider) and Anvil as the ethereum node, with the configuration production demands
 * (its own wallet seed, deposit banks, the chain's contracts and collection address, a network-fee schedule). Solana,
 * SPEI, CVU and screening have no adapter: their flows are refused, which the services' start-up log lists.
 */
async function outsideWorld(stack: Stack, appEnv: string): Promise<Record<string, string>> {
  if (appEnv !== 'production') return {};
  mkdirSync(path.join(dataDir, 'anvil'), { recursive: true });
  await Promise.all([
    stack.startBankSimulator({ port: bankSimulatorPort, stateDir: path.join(dataDir, 'bank-simulator') }),
    stack.startAnvil({ stateFile: path.join(dataDir, 'anvil', 'state.json') }),
  ]);
  const chain = stack.chain!;
  const walletKeySeed = process.env.WALLET_KEY_SEED ?? keptSecret('wallet-key-seed.hex', 32);
  // The liquidity simulator executes quotes but sends no coin on chain: the treasury gets a float of coin and gas on
  // this Anvil once, as the provider's deliveries and an operator's top-ups would keep it (docs/production.md).
  const seed = Buffer.from(walletKeySeed, 'hex');
  const treasury = await new SeedSigner({ hdSeed: seed, walletSeed: seed }).addressOf(TREASURY_KEY_REFERENCE);
  await mintSandboxStablecoin(chain.rpcUrl, 'USDC', treasury, 1_000_000_000_000n);
  await anvilRpc(chain.rpcUrl, 'anvil_setBalance', [treasury, `0x${(10n ** 21n).toString(16)}`]);
  return {
    ...stack.bankEnv(),
    LIQUIDITY_PROVIDER_URL: `${stack.bankSimulatorUrl}/liquidity`,
    NETWORK_FEES: process.env.NETWORK_FEES ?? JSON.stringify({ ethereum: '1.00' }),
    ...stack.chainEnv(2),
    ETHEREUM_USDC_CONTRACT: chain.tokens.USDC,
    ETHEREUM_USDT_CONTRACT: chain.tokens.USDT,
    ETHEREUM_COLLECTION_ADDRESS: sandboxCollectionAddress(),
    ETHEREUM_OFF_RAMP_ADDRESS: process.env.ETHEREUM_OFF_RAMP_ADDRESS ?? sandboxOffRampAddress(),
    WALLET_KEY_SEED: walletKeySeed,
    VIRTUAL_ACCOUNT_BANKS: process.env.VIRTUAL_ACCOUNT_BANKS ?? JSON.stringify(sandboxBankProfiles),
  };
}

async function start(stack: Stack, build: boolean): Promise<void> {
  // The slow first steps overlap: building the Temporal binaries (go install, first time only), the Prisma client
  // and dist (npm run build), PostgreSQL with the migrations.
  const binaries = temporalServerBinaries();
  binaries.catch(() => undefined);
  await generatePrismaClient();
  if (build) {
    log('npm run build');
    const result = spawnSync('npm', ['run', 'build'], { cwd: projectRoot, stdio: ['ignore', 'inherit', 'inherit'] });
    if (result.status !== 0) throw new Error('npm run build failed');
  }
  const engine = await startProductionEngine(stack, {
    dataDir,
    database: 'payments',
    fresh: false,
    temporalPort,
    uiPort: temporalUiPort,
    binaries,
    tls: true,
    signOn: true,
    oidcPort,
    log,
  });
  const tls = engine.tls!;
  const env: AppEnvironment = {
    APP_ENV: process.env.APP_ENV ?? 'production',
    DATABASE_URL: engine.database.url,
    TEMPORAL_ADDRESS: engine.temporalAddress,
    TEMPORAL_NAMESPACE: NAMESPACE,
    TEMPORAL_TASK_QUEUE: process.env.TEMPORAL_TASK_QUEUE ?? 'payments',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL ?? `http://localhost:${firstApiPort}`,
    DOCUMENT_STORAGE_DIR: path.join(dataDir, 'documents'),
    SECRETS_ENCRYPTION_KEY: process.env.SECRETS_ENCRYPTION_KEY || secretsKey(),
    // Each service replaces the certificate with its own below.
    ...temporalClientTlsEnv(tls, 'admin'),
  };
  const childEnv = { ...process.env, ...imageEnv, ...env, ...(await outsideWorld(stack, env.APP_ENV)) };
  const apiPorts = Array.from({ length: productionReplicas.api }, (_, index) => firstApiPort + index);
  await Promise.all([
    ...apiPorts.map((port, index) =>
      stack.start({
        name: `api-${index + 1}`,
        ...serviceCommand('api'),
        env: {
          ...childEnv,
          ...temporalClientTlsEnv(tls, 'api'),
          DATABASE_URL: serviceRoleUrl(engine.database.url, 'api'),
          PORT: String(port),
        },
        ready: () => httpOk(`http://127.0.0.1:${port}/health/ready`, 2000),
      }),
    ),
    ...Array.from({ length: productionReplicas.worker }, (_, index) =>
      stack.start({
        name: `worker-${index + 1}`,
        ...serviceCommand('worker'),
        env: {
          ...childEnv,
          ...temporalClientTlsEnv(tls, 'worker'),
          DATABASE_URL: serviceRoleUrl(engine.database.url, 'worker'),
        },
        ready: stack.pollsTaskQueue(env.TEMPORAL_TASK_QUEUE),
        readyWithinMs: 180_000,
      }),
    ),
  ]);
  console.log(
    [
      '',
      ...apiPorts.map((port, index) => `  API ${index + 1}          http://localhost:${port}`),
      `  Temporal UI    ${engine.signOn!.uiUrl} (sign in as ${developmentUsers.map((user) => user.email).join(', ')};`,
      `                 password in ${path.relative(projectRoot, path.join(engine.signOn!.provider.stateDir, 'user-password'))})`,
      `  OpenID Provider ${engine.signOn!.provider.issuer} (static users, development only)`,
      `  Mode           APP_ENV=${env.APP_ENV}${env.APP_ENV === 'production' ? ` (bank simulator ${stack.bankSimulatorUrl}, Anvil ${stack.chain?.rpcUrl}; refused flows in the API's log)` : ''}`,
      `  Temporal       ${stack.temporalFrontendAddress} for people (a token from the provider), ${engine.temporalAddress} for the services`,
      `                 (namespace ${NAMESPACE}; mutual TLS, certificates in ${path.relative(projectRoot, tls.dir)}/)`,
      `  Database       ${engine.database.url} (the owner, for migrations; the API and the workers connect as payments_api and payments_worker)`,
      `  Logs           ${path.relative(projectRoot, path.join(dataDir, 'logs'))}/`,
      `  Ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s. A partner key: npm run partner:create -- --name Acme`,
      `  (with DATABASE_URL=${engine.database.url}). Ctrl-C stops everything.`,
      '',
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const unknown = args.filter((arg) => !['--production', '--no-build'].includes(arg));
  if (!args.includes('--production') || unknown.length > 0) {
    console.error(
      'usage: npm run stack -- --production [--no-build]   (the development stack is `npm run dev`; docs/production.md)',
    );
    process.exit(2);
  }
  mkdirSync(dataDir, { recursive: true });
  let stopping = false;
  const stack = new Stack({
    logs: path.join(dataDir, 'logs'),
    onUnexpectedExit: (child, code) => {
      if (stopping) return;
      log(`${child.name} exited (${code}); shutting down (its log: ${child.logFile})`);
      void stop(code ?? 1);
    },
  });
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    log('stopping the APIs, the workers, the UI, Temporal and PostgreSQL');
    await stack.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  try {
    await start(stack, !args.includes('--no-build'));
  } catch (error) {
    console.error(error);
    await stop(1);
  }
}

void main();
