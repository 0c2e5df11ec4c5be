// A test that is about to exceed jest's timeout prints what its Temporal was doing: the open workflows, each with
// its pending workflow task, pending activities (attempt, last failure) and its last history events. A hang on CI
// (seen once: a test waiting 120 s with nothing in jest's output to say on what) then explains itself.
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';

/** Before jest's own timeout (jest.config.js testTimeout, 120 s), so the report prints before the failure. */
const REPORT_AFTER_MS = Number(process.env.TEST_HANG_REPORT_SECONDS ?? 100) * 1000;
const HISTORY_TAIL = 12;

const environments = new Set<TestWorkflowEnvironment>();

export function watchForHangs(env: TestWorkflowEnvironment): () => void {
  environments.add(env);
  return () => environments.delete(env);
}

async function describeOpenWorkflows(env: TestWorkflowEnvironment): Promise<string[]> {
  const namespace = env.namespace ?? 'default';
  const service = env.connection.workflowService;
  const open = await service.listOpenWorkflowExecutions({ namespace, maximumPageSize: 50 });
  const lines: string[] = [`open workflows: ${open.executions.length}`];
  for (const execution of open.executions) {
    const workflowId = execution.execution?.workflowId ?? '?';
    const handle = env.client.workflow.getHandle(workflowId);
    const described = await handle.describe();
    const { pendingActivities, pendingWorkflowTask } = described.raw;
    lines.push(`- ${workflowId} (${described.type})`);
    if (pendingWorkflowTask) lines.push(`  pending workflow task: ${JSON.stringify(pendingWorkflowTask)}`);
    for (const activity of pendingActivities ?? []) {
      lines.push(
        `  pending activity ${activity.activityType?.name}: state ${activity.state} attempt ${activity.attempt}` +
          ` last failure: ${activity.lastFailure?.message ?? 'none'}`,
      );
    }
    const history = await handle.fetchHistory();
    for (const event of (history.events ?? []).slice(-HISTORY_TAIL)) {
      const type = temporal.api.enums.v1.EventType[event.eventType ?? 0] ?? String(event.eventType);
      lines.push(`  #${event.eventId} ${type.replace('EVENT_TYPE_', '')}`);
    }
  }
  return lines;
}

async function report(testName: string): Promise<void> {
  const lines = [`[hang report] "${testName}" still running after ${REPORT_AFTER_MS / 1000} s`];
  for (const env of environments) {
    try {
      lines.push(...(await describeOpenWorkflows(env)));
    } catch (error) {
      lines.push(`could not describe the workflows: ${(error as Error).message}`);
    }
  }
  console.error(lines.join('\n'));
}

let timer: NodeJS.Timeout | undefined;

// Registered at import: every test file that uses the harness gets the watchdog.
if (typeof beforeEach === 'function') {
  beforeEach(() => {
    const testName = expect.getState().currentTestName ?? '(unknown test)';
    timer = setTimeout(() => void report(testName), REPORT_AFTER_MS);
    timer.unref();
  });
  afterEach(() => clearTimeout(timer));
}
