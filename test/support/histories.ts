// The file format of test/histories: a workflow history as protobufjs's plain object (longs and bytes as strings).
// (The SDK's historyToJSON cannot run here: npm installs two copies of protobufjs 8 under @temporalio, and its
// JSON converter refuses the other copy's types.)
import type { History } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';

const HistoryMessage = temporal.api.history.v1.History;

export function historyToObject(history: History): Record<string, unknown> {
  return HistoryMessage.toObject(HistoryMessage.fromObject(history), { longs: String, enums: String, bytes: String });
}

export function historyFromObject(object: Record<string, unknown>): History {
  return HistoryMessage.fromObject(object);
}
