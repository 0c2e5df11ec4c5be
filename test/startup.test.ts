// Production fails closed: the real entry points refuse to start without an explicit APP_ENV; in production they
// start and refuse, per flow, what has no real integration (src/providers/readiness.ts), which the start-up log names.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { nodeArgsOf, serviceEnv } from '../scripts/lib/service-runtime';
import { freePort } from '../scripts/lib/ports';
import { tsEntry } from '../scripts/lib/entry-points';

const root = path.resolve(__dirname, '..');

/** The entry point as the other process tests start it: the run's bundle of it (or `--import tsx` without one). */
function spawnArgs(entry: 'src/server.ts' | 'src/worker.ts'): [string, string[]] {
  const { command, args } = tsEntry(entry);
  return [command, args];
}

function start(entry: 'src/server.ts' | 'src/worker.ts', env: Record<string, string>) {
  const result = spawnSync(...spawnArgs(entry), {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: 'postgresql://127.0.0.1:1/none', ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: result.status, stderr: result.stderr };
}

const productionSecrets = {
  APP_ENV: 'production',
  WALLET_KEY_SEED: 'ab'.repeat(32),
  SECRETS_ENCRYPTION_KEY: 'cd'.repeat(32),
  VIRTUAL_ACCOUNT_BANKS: JSON.stringify({
    usd: {
      bank_name: 'Bank',
      bank_address: { street_line_1: '1 Main St', city: 'New York', state: 'NY', postal_code: '10001', country: 'USA' },
      ach_routing_number: '123456780',
      wire_routing_number: '321076548',
      bic: 'ABCDUS33XXX',
      account_number_prefix: '84',
    },
    eur: {
      bank_name: 'Bank Europe',
      bank_address: { street_line_1: '1 Hauptstr', city: 'Berlin', state: 'BE', postal_code: '10115', country: 'DEU' },
      bic: 'ABCDDEBBXXX',
      iban_country: 'DE',
      bban_prefix: '87654321',
    },
  }),
};

it.each(['src/server.ts', 'src/worker.ts'] as const)('%s refuses to start without APP_ENV', (entry) => {
  const { status, stderr } = start(entry, {});
  expect(status).toBe(1);
  expect(stderr).toContain('APP_ENV is required');
});

it('the API starts in production without a screening vendor, exchange or rails, naming the flows it refuses', async () => {
  const port = await freePort();
  const api = spawn(...spawnArgs('src/server.ts'), {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: process.env.DATABASE_URL ?? '',
      ...productionSecrets,
      PORT: String(port),
      LOG_LEVEL: 'info',
      TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  api.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  try {
    for (let attempt = 0; attempt < 150 && !output.includes('production readiness'); attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const line = JSON.parse(output.split('\n').find((text) => text.includes('production readiness'))!) as {
      refused: string[];
    };
    expect(line.refused).toEqual(
      expect.arrayContaining([
        'deposit:sepa: no bank or rail collects sepa deposits',
        'payout:wire: no bank or rail pays out on wire',
        'chain:solana: solana is a simulation only',
        'exchange: no liquidity provider is configured',
        expect.stringContaining('screening: no sanctions list is configured'),
      ]),
    );
    let live: Response | undefined;
    for (let attempt = 0; attempt < 100 && live?.status !== 200; attempt += 1) {
      live = await fetch(`http://127.0.0.1:${port}/health/live`).catch(() => undefined);
      if (live?.status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(live?.status).toBe(200);
  } finally {
    api.kill('SIGTERM');
  }
});

it('the API starts while Temporal is down: live answers 200, ready 503 naming temporal', async () => {
  const port = await freePort();
  const deadTemporal = await freePort(); // nothing listens there
  const api = spawn(...spawnArgs('src/server.ts'), {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: process.env.DATABASE_URL ?? '',
      APP_ENV: 'sandbox',
      PORT: String(port),
      LOG_LEVEL: 'silent',
      TEMPORAL_ADDRESS: `127.0.0.1:${deadTemporal}`,
    },
    stdio: 'ignore',
  });
  try {
    const base = `http://127.0.0.1:${port}`;
    let live: Response | undefined;
    for (let attempt = 0; attempt < 100 && live?.status !== 200; attempt += 1) {
      live = await fetch(`${base}/health/live`).catch(() => undefined);
      if (live?.status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(live?.status).toBe(200);
    // The first checks may find the database slow to answer on a loaded machine (each check is bounded by 2 s):
    // ask again, as an orchestrator would, until the database has answered.
    let ready: Response;
    let body: { error: { code: string; message: string } };
    for (let attempt = 0; ; attempt += 1) {
      ready = await fetch(`${base}/health/ready`);
      body = (await ready.json()) as typeof body;
      if (!body.error?.message.includes('database') || attempt >= 30) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(ready.status).toBe(503);
    expect(Number(ready.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(body.error.code).toBe('service_unavailable');
    expect(body.error.message).toContain('temporal unavailable');
    expect(body.error.message).not.toContain('database');
  } finally {
    api.kill('SIGTERM');
  }
});

describe('how the processes run in production', () => {
  // One setting, written in four places that cannot import each other: they must agree.
  it('starts the API and the worker with the runtime settings of scripts/lib/service-runtime.ts everywhere', () => {
    const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    const env = Object.entries(serviceEnv).map(([name, value]) => `${name}=${value}`);
    for (const [script, service, entry] of [
      ['start:api', 'api', 'dist/src/server.js'],
      ['start:worker', 'worker', 'dist/src/worker.js'],
    ] as const) {
      expect(scripts[script]).toBe(`${env.join(' ')} node ${nodeArgsOf[service].join(' ')} ${entry}`);
    }
    const command = (service: keyof typeof nodeArgsOf, entry: string) =>
      JSON.stringify(['node', ...nodeArgsOf[service], entry]).replace(/,/g, ', ');
    expect(read('Dockerfile')).toContain(`CMD ${command('api', 'dist/src/server.js')}`);
    for (const name of Object.keys(serviceEnv))
      expect(read('Dockerfile')).toContain(`ENV ${name}=${serviceEnv[name as keyof typeof serviceEnv]}`);
    const compose = read('docker-compose.yml');
    expect(compose).toContain(`command: ${command('api', 'dist/src/server.js')}`);
    expect(compose).toContain(`command: ${command('worker', 'dist/src/worker.js')}`);
  });
});
