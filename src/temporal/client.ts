// The one place that connects to Temporal as a client (the API process, scripts).
import { Client, Connection } from '@temporalio/client';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import type { AppConfig } from '../config';
import { customSearchAttributes } from './search-attributes';
import { workflowIds } from './workflow-ids';

const GRPC_UNIMPLEMENTED = 12;

export interface TemporalClientHandle {
  client: Client;
  connection: Connection;
}

export async function connectTemporalClient(config: AppConfig['temporal']): Promise<TemporalClientHandle> {
  const connection = await Connection.connect({ address: config.address });
  return { connection, client: new Client({ connection, namespace: config.namespace }) };
}

/**
 * Registers this service's search attributes in the namespace when they are missing (dev server,
 * docker-compose, test server). Clusters managed elsewhere may refuse; then an operator registers them.
 */
export async function ensureSearchAttributes(
  operatorService: Connection['operatorService'],
  namespace: string,
): Promise<void> {
  const known = new Set<string>();
  try {
    const existing = await operatorService.listSearchAttributes({ namespace });
    for (const name of Object.keys(existing.customAttributes ?? {})) known.add(name);
  } catch (error) {
    // The time-skipping test server cannot list attributes (UNIMPLEMENTED) but accepts additions.
    if ((error as { code?: number }).code !== GRPC_UNIMPLEMENTED) throw error;
  }
  const missing = customSearchAttributes.filter((attribute) => !known.has(attribute.name));
  if (missing.length === 0) return;
  await operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(
      missing.map((attribute) => [attribute.name, encodeSearchAttributeIndexedValueType(attribute.type) as number]),
    ),
  });
}

/** Starts the maintenance workflow unless it already runs (called by every worker at start-up). */
export async function ensureMaintenanceWorkflow(client: Client, taskQueue: string): Promise<void> {
  await client.workflow.start('maintenanceWorkflow', {
    workflowId: workflowIds.maintenance(),
    taskQueue,
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}
