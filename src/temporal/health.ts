// Is the workflow engine reachable? Asked by GET /health/ready and before a write whose workflow must start
// (so that a create during an engine outage answers 503 and leaves nothing behind). A success is trusted for
// a moment so that a busy API does not ask on every request.
import type { Client } from '@temporalio/client';

const TRUST_SUCCESS_MS = 1_000;
const lastSuccess = new WeakMap<Client, number>();

/** True when the engine answered a cheap call within `timeoutMs` (or, unless `fresh`, did a moment ago). */
export async function temporalIsReachable(
  client: Client,
  timeoutMs: number,
  options: { fresh?: boolean } = {},
): Promise<boolean> {
  const last = lastSuccess.get(client);
  if (!options.fresh && last !== undefined && Date.now() - last < TRUST_SUCCESS_MS) return true;
  try {
    await client.connection.withDeadline(Date.now() + timeoutMs, () => client.workflowService.getSystemInfo({}));
    lastSuccess.set(client, Date.now());
    return true;
  } catch {
    lastSuccess.delete(client);
    return false;
  }
}
