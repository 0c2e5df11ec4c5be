// The jest run's one Temporal dev server (the CLI `npm run dev` uses), for the test files that run in real time
// (harness option `realTime`) and those that need schedules: each such file gets a namespace of its own on it (its
// workflow ids, including fixed ones such as the bank report reader's, its schedules, search attributes and
// open-workflow lists stay its own) and a task queue of its own. The other files keep a time-skipping test server
// each (temporal-servers.ts): skipped time is global to a server. Why: docs/development.md "Test suite time".
//
// global-setup.ts starts the server with the namespaces created at launch (one per harness the test files start on
// it, each with the project's search attributes), and writes one pool entry per namespace; a harness claims one with
// an atomic rename, as it claims a pooled test server. A run with more harnesses than namespaces registers the extra
// ones itself.
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { type ChildHandle, startChild } from '../../scripts/lib/child-process';
import { startOnFreePort } from '../../scripts/lib/ports';
import { customSearchAttributes } from '../../src/temporal/search-attributes';

export interface DevServer {
  address: string;
  pool: string;
  process: ChildHandle;
  stop(): Promise<void>;
}

/** Where the harnesses find the run's dev server and its namespaces (global-setup.ts sets them; workers inherit). */
export function devServerOfRun(): { address: string; pool: string } | undefined {
  const address = process.env.TEST_TEMPORAL_DEV_SERVER;
  const pool = process.env.TEST_TEMPORAL_NAMESPACES;
  return address && pool ? { address, pool } : undefined;
}

const namespaceName = (index: number) => `test-${index}`;

/** Starts the dev server with `namespaces` test namespaces; resolves once it answers for the last of them. */
export async function startDevServer(binary: string, pool: string, namespaces: number): Promise<DevServer> {
  const { address, child } = await startOnFreePort((port) => startDevServerOn(binary, port, namespaces));
  rmSync(pool, { recursive: true, force: true });
  mkdirSync(pool, { recursive: true });
  for (let i = 1; i <= namespaces; i += 1) writeFileSync(path.join(pool, `ready-${namespaceName(i)}`), '');
  return { address, pool, process: child, stop: () => child.stop() };
}

async function startDevServerOn(
  binary: string,
  port: number,
  namespaces: number,
): Promise<{ address: string; child: ChildHandle }> {
  const address = `127.0.0.1:${port}`;
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--headless'];
  args.push('--log-level', 'error', '--namespace', 'default');
  for (let i = 1; i <= namespaces; i += 1) args.push('--namespace', namespaceName(i));
  for (const attribute of customSearchAttributes) args.push('--search-attribute', `${attribute.name}=Keyword`);
  // As the SDK starts a dev server (createLocal): workflow updates on, no version check against the internet.
  args.push('--dynamic-config-value', 'frontend.enableServerVersionCheck=false');
  args.push('--dynamic-config-value', 'frontend.enableUpdateWorkflowExecution=true');
  args.push('--dynamic-config-value', 'frontend.enableUpdateWorkflowExecutionAsyncAccepted=true');
  const last = namespaces > 0 ? namespaceName(namespaces) : 'default';
  const child = await startChild({
    name: 'the Temporal dev server',
    command: binary,
    args,
    // Ready once it answers for the last namespace it creates.
    answers: async () => {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.withDeadline(Date.now() + 2000, () =>
          connection.workflowService.describeNamespace({ namespace: last }),
        );
        return true;
      } finally {
        await connection.close();
      }
    },
    readyWithinMs: 60_000,
    unref: true,
  });
  return { address, child };
}

/** A namespace of this harness's own on the run's dev server, with the project's search attributes. */
export async function claimNamespace(server: { address: string; pool: string }): Promise<string> {
  let names: string[] = [];
  try {
    names = readdirSync(server.pool).filter((name) => name.startsWith('ready-'));
  } catch {
    // No pool: register one below.
  }
  for (const name of names) {
    try {
      renameSync(path.join(server.pool, name), path.join(server.pool, `claimed-${process.pid}-${name.slice(6)}`));
      return name.slice('ready-'.length);
    } catch {
      // Claimed by another harness meanwhile.
    }
  }
  return registerNamespace(server.address);
}

/** More harnesses than namespaces made at launch (a watch run): one registered now, usable once the server says so. */
async function registerNamespace(address: string): Promise<string> {
  const namespace = `test-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const connection = await Connection.connect({ address });
  try {
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return namespace;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  } finally {
    await connection.close();
  }
}

/**
 * A dev server environment for a file that needs what only a real server has (schedules): a namespace of its own on
 * the run's dev server, or a dev server of its own when the run has none (jest started without `npm test`).
 */
export async function devServerEnvironment(): Promise<TestWorkflowEnvironment> {
  const server = devServerOfRun();
  if (server) {
    return TestWorkflowEnvironment.createFromExistingServer({
      address: server.address,
      namespace: await claimNamespace(server),
    });
  }
  const cli = process.env.TEMPORAL_CLI_PATH;
  return TestWorkflowEnvironment.createLocal(
    cli ? { server: { executable: { type: 'existing-path', path: cli } } } : {},
  );
}
