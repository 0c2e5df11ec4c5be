// The one place that connects to Temporal as a client (the API process, scripts).
import {
  Client,
  Connection,
  ScheduleAlreadyRunning,
  ScheduleOverlapPolicy,
  WorkflowNotFoundError,
} from '@temporalio/client';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import type { AppConfig } from '../config';
import { workflowClientInterceptors } from '../observability/temporal';
import { customSearchAttributes } from './search-attributes';
import { temporalTlsOptions } from './tls';
import { workflowIds } from './workflow-ids';

const GRPC_UNIMPLEMENTED = 12;

export interface TemporalClientHandle {
  client: Client;
  connection: Connection;
}

export async function connectTemporalClient(config: AppConfig['temporal']): Promise<TemporalClientHandle> {
  const connection = await Connection.connect({ address: config.address, tls: temporalTlsOptions(config.tls) });
  return { connection, client: observedClient(connection, config.namespace) };
}

/** A client that connects on first use and reconnects by itself: the API must start while Temporal is down. */
export function lazyTemporalClient(config: AppConfig['temporal']): TemporalClientHandle {
  const connection = Connection.lazy({ address: config.address, tls: temporalTlsOptions(config.tls) });
  return { connection, client: observedClient(connection, config.namespace) };
}

/** Every client counts its calls by outcome and, when tracing is on, carries the trace into the workflows. */
function observedClient(connection: Connection, namespace: string): Client {
  return new Client({ connection, namespace, interceptors: { workflow: workflowClientInterceptors() } });
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

/** The hourly housekeeping schedule (docs/operations.md "Operating workflows"). */
export const MAINTENANCE_SCHEDULE_ID = 'maintenance';
/** How often the schedule starts workflows/maintenance.ts. */
const MAINTENANCE_INTERVAL = '1 hour';

/**
 * Creates the maintenance Schedule unless it exists (called by every worker at start-up; an operator's pause or
 * edit is kept). Also ends the sleep-loop workflow that did this job before the schedule existed.
 */
export async function ensureMaintenanceSchedule(client: Client, taskQueue: string): Promise<void> {
  try {
    await client.schedule.create({
      scheduleId: MAINTENANCE_SCHEDULE_ID,
      spec: { intervals: [{ every: MAINTENANCE_INTERVAL }] },
      action: {
        type: 'startWorkflow',
        workflowType: 'maintenanceWorkflow',
        workflowId: workflowIds.maintenance(),
        taskQueue,
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
      state: { note: 'Purges expired idempotency keys and old workflow-start intents. Safe to pause or trigger.' },
    });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
  }
  try {
    const legacy = client.workflow.getHandle(workflowIds.maintenance());
    if ((await legacy.describe()).status.name === 'RUNNING') {
      await legacy.terminate('replaced by the maintenance schedule');
    }
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
}
