// Starts the chain watcher of each configured chain (workflows/chain-watcher.ts), from every worker at boot: one
// workflow per chain (its id names the chain), so a second start finds the running one and changes nothing.
import type { Client } from '@temporalio/client';
import type { AppConfig } from '../config';
import type { Blockchain } from '../domain/rails';
import { workflowIds } from './workflow-ids';

/** The chains with a configured node. */
export function watchedChainNames(config: AppConfig): Blockchain[] {
  return config.ethereum ? ['ethereum'] : [];
}

export async function ensureChainWatchers(client: Client, config: AppConfig, taskQueue: string): Promise<string[]> {
  const started: string[] = [];
  for (const chain of watchedChainNames(config)) {
    await client.workflow.start('chainWatcherWorkflow', {
      workflowId: workflowIds.chainWatcher(chain),
      taskQueue,
      args: [{ chain, pollSeconds: config.ethereum!.watch.pollSeconds }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    started.push(workflowIds.chainWatcher(chain));
  }
  return started;
}
