// The engine-ceiling worker of `npm run bench`: the same worker settings as the service's (createWorker), its own
// task queue, and workflows that do nothing but what the engine charges for. A separate process, like the real
// worker. Environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, BENCH_TASK_QUEUE.
import { NativeConnection, Runtime, DefaultLogger } from '@temporalio/worker';
import path from 'node:path';
import { DEFAULT_MAX_CACHED_WORKFLOWS } from '../../../src/config';
import { createWorker } from '../../../src/temporal/worker';

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233' });
  const worker = await createWorker({
    connection,
    namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
    taskQueue: process.env.BENCH_TASK_QUEUE ?? 'bench-engine',
    activities: { noop: async () => undefined },
    workflowsPath: require.resolve(path.join(__dirname, 'workflows')),
    maxCachedWorkflows: Number(process.env.WORKER_MAX_CACHED_WORKFLOWS ?? DEFAULT_MAX_CACHED_WORKFLOWS),
  });
  process.on('SIGTERM', () => worker.shutdown());
  process.on('SIGINT', () => worker.shutdown());
  console.error('engine worker running');
  await worker.run();
  await connection.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
