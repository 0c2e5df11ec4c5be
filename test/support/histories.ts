// The file format of test/histories: a workflow history as protobufjs's plain object (longs and bytes as strings),
// with the id the workflow ran under as `workflowId` beside `events` (a workflow that derives ids from its own, as
// the settlement does for its legs, replays only under that id; files without it replay under their name).
// (The SDK's historyToJSON cannot run here: npm installs two copies of protobufjs 8 under @temporalio, and its
// JSON converter refuses the other copy's types.)
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
