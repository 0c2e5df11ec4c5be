// Mutual TLS on the production topology's Temporal server (scripts/lib/tls.ts, scripts/lib/temporal-server.ts): the
// frontend refuses a client that brings no certificate (in plaintext or in TLS) and one whose certificate another
// CA signed, and answers one with a certificate of the development CA, as the API, the worker and the UI connect.
// Needs the Temporal server's binaries, as test/production-stack.browser.test.ts (skipped, saying so, without them).
import { Connection } from '@temporalio/client';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startProductionEngine } from '../scripts/lib/production';
import { Stack } from '../scripts/lib/stack';
import { temporalClientTls, type TemporalServerBinaries } from '../scripts/lib/temporal-server';
import { ensureTemporalCertificates, TEMPORAL_SERVER_NAME } from '../scripts/lib/tls';
import { temporalTlsOptions } from '../src/temporal/tls';
import { projectRoot } from './support/paths';

const dataDir = path.join(projectRoot, '.data', 'temporal-tls-test');

function cachedBinaries(): TemporalServerBinaries | undefined {
  const output = execFileSync('bash', [path.join(projectRoot, 'scripts', 'temporal-binaries.sh'), 'server-cached'], {
    encoding: 'utf8',
  });
  const value = (name: string) => new RegExp(`^${name}=(.*)$`, 'm').exec(output)?.[1] ?? '';
  if (!value('TEMPORAL_SERVER_PATH')) return undefined;
  return {
    server: value('TEMPORAL_SERVER_PATH'),
    sqlTool: value('TEMPORAL_SQL_TOOL_PATH'),
    uiServer: value('TEMPORAL_UI_SERVER_PATH'),
    uiRoot: value('TEMPORAL_UI_ROOT'),
  };
}

const binaries = cachedBinaries();
if (!binaries && process.env.CI) throw new Error('CI: the Temporal server binaries are missing');
const describeWithServer = binaries ? describe : describe.skip;
if (!binaries) console.warn('temporal-tls.test.ts skipped: `bash scripts/temporal-binaries.sh server` builds them');

/**
 * What a caller gets from the frontend: 'answered', or the error's message. A refused client waits out the whole
 * bound (the SDK retries the connection until then), so the refusals take a shorter one than the answer.
 */
async function systemInfo(options: Parameters<typeof Connection.connect>[0], boundMs = 5000): Promise<string> {
  try {
    const connection = await Connection.connect({ ...options, connectTimeout: boundMs });
    try {
      await connection.withDeadline(Date.now() + boundMs, () => connection.workflowService.getSystemInfo({}));
      return 'answered';
    } finally {
      await connection.close();
    }
  } catch (error) {
    return (error as Error).message;
  }
}

/** Long enough for a TLS handshake on a loaded machine: the first test's client with a certificate is answered. */
const refusalBoundMs = 1500;

describeWithServer('the Temporal frontend behind mutual TLS', () => {
  let stack: Stack;
  let address: string;
  let certificates: ReturnType<typeof ensureTemporalCertificates>;

  beforeAll(async () => {
    stack = new Stack({ logs: path.join(dataDir, 'logs') });
    const engine = await startProductionEngine(stack, {
      dataDir,
      database: 'payments',
      fresh: true,
      tls: true,
      binaries: Promise.resolve(binaries),
    });
    address = engine.temporalAddress;
    certificates = engine.tls!;
  }, 300_000);

  afterAll(async () => {
    await stack?.stop();
  }, 120_000);

  it('answers a client with a certificate of its CA', async () => {
    expect(await systemInfo({ address, tls: temporalTlsOptions(temporalClientTls(certificates, 'api')) })).toBe(
      'answered',
    );
  });

  it('refuses a client without a certificate, in plaintext or in TLS', async () => {
    const plaintext = await systemInfo({ address }, refusalBoundMs);
    expect(plaintext).not.toBe('answered');
    const noCertificate = await systemInfo(
      {
        address,
        tls: { serverNameOverride: TEMPORAL_SERVER_NAME, serverRootCACertificate: readFileSync(certificates.caCert) },
      },
      refusalBoundMs,
    );
    expect(noCertificate).not.toBe('answered');
    console.log(`refused: plaintext "${plaintext}"; TLS without a certificate "${noCertificate}"`);
  });

  it('refuses a client whose certificate another CA signed', async () => {
    const stranger = ensureTemporalCertificates(path.join(dataDir, 'stranger-ca'));
    const pair = stranger.client.admin;
    const refused = await systemInfo(
      {
        address,
        tls: {
          serverNameOverride: TEMPORAL_SERVER_NAME,
          serverRootCACertificate: readFileSync(certificates.caCert),
          clientCertPair: { crt: readFileSync(pair.cert), key: readFileSync(pair.key) },
        },
      },
      refusalBoundMs,
    );
    expect(refused).not.toBe('answered');
  });
});
