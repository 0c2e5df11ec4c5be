// The file format of test/histories: a workflow history as protobufjs's plain object (longs and bytes as strings),
// with the id the workflow ran under as `workflowId` beside `events` (a workflow that derives ids from its own, as
// the settlement does for its legs, replays only under that id; files without it replay under their name).
// (The SDK's historyToJSON cannot run here: npm installs two copies of protobufjs 8 under @temporalio, and its
// JSON converter refuses the other copy's types.)
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';

const HistoryMessage = temporal.api.history.v1.History;

export function historyToObject(history: History, workflowId?: string): Record<string, unknown> {
  const object = HistoryMessage.toObject(HistoryMessage.fromObject(history), {
    longs: String,
    enums: String,
    bytes: String,
  });
  return workflowId === undefined ? object : { workflowId, ...object };
}

/** The id a recorded history ran under, when its file says. */
export function workflowIdOf(object: Record<string, unknown>): string | undefined {
  return typeof object.workflowId === 'string' ? object.workflowId : undefined;
}

export function historyFromObject(object: Record<string, unknown>): History {
  return HistoryMessage.fromObject(object);
}

/**
 * With RECORD_HISTORIES set, keeps a run's history (finished or still running) as test/histories/<type>/<name>.json
 * for test/workflow-histories.test.ts: for the workflows a test file drives that record.histories.ts does not.
 */
export async function keepHistoryIfAsked(client: Client, workflowId: string, name: string): Promise<void> {
  if (!process.env.RECORD_HISTORIES) return;
  const handle = client.workflow.getHandle(workflowId);
  const [description, history] = await Promise.all([handle.describe(), handle.fetchHistory()]);
  const folder = path.join(__dirname, '..', 'histories', description.type);
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    path.join(folder, `${name}.json`),
    `${JSON.stringify(historyToObject(history, workflowId), null, 1)}\n`,
  );
}
