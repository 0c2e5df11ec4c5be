// Workflows of the engine's own ceiling (`npm run bench`): they do nothing but what the engine charges for, so
// the gap between them and ours is our code. Run by scripts/bench/engine/worker.ts with this service's worker
// settings (src/temporal/worker.ts).
import {
  condition,
  defineSignal,
  defineUpdate,
  executeChild,
  proxyActivities,
  setHandler,
  sleep,
} from '@temporalio/workflow';

/** What one workflow does, counted from the history of a real one (see scripts/bench/history.ts). */
export interface WorkflowShape {
  /** Activities this workflow schedules itself (run one after another, as ours do). */
  activities: number;
  /** Timers it starts; the first one runs while it waits for the signals and updates (a deadline). */
  timers: number;
  /** Signals and updates it waits for (sent by the bench driver right after the start, like a deposit). */
  signals: number;
  updates: number;
  /** Child workflows, run one after another. */
  children: WorkflowShape[];
}

const { noop } = proxyActivities<{ noop(): Promise<void> }>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 3 },
});

export const pokeSignal = defineSignal('poke');
export const pokeUpdate = defineUpdate<void>('poke');

/** The floor of a workflow-starting create: a workflow that completes in its first task. */
export async function noopWorkflow(): Promise<void> {}

/** A workflow of the given shape and nothing else. */
export async function shapedWorkflow(shape: WorkflowShape): Promise<void> {
  let received = 0;
  setHandler(pokeSignal, () => void (received += 1));
  setHandler(pokeUpdate, () => void (received += 1));
  let timers = shape.timers;
  const expected = shape.signals + shape.updates;
  if (expected > 0) {
    if (timers > 0) {
      timers -= 1;
      // A deadline like the deposit window: started, then cancelled when everything arrived.
      await condition(() => received >= expected, '1 day');
    } else {
      await condition(() => received >= expected);
    }
  }
  for (; timers > 0; timers -= 1) await sleep(1);
  for (let index = 0; index < shape.activities; index += 1) await noop();
  for (const child of shape.children) await executeChild(shapedWorkflow, { args: [child] });
}
