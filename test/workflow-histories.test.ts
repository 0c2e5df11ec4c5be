// Deploy safety: the recorded histories of every workflow type (test/histories/<type>/<path>.json, refreshed with
// `npm run histories:record`) replay against the current workflow code. A change that would break running
// workflows (a different sequence of activities, timers, or commands) fails here with a non-determinism error;
// docs/workflow-versioning.md says how to make such a change with patched() or a new workflow type.
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import * as workflows from '../workflows';
import { historyFromObject, workflowIdOf } from './support/histories';
import { projectRoot, workflowBundlePath } from './support/paths';

const historiesDir = path.join(projectRoot, 'test', 'histories');

function recordedHistories(): Array<{ type: string; name: string; file: string }> {
  return readdirSync(historiesDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((folder) =>
      readdirSync(path.join(historiesDir, folder.name))
        .filter((file) => file.endsWith('.json'))
        .map((file) => ({
          type: folder.name,
          name: file.replace(/\.json$/, ''),
          file: path.join(historiesDir, folder.name, file),
        })),
    );
}

beforeAll(() => {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed by an earlier test file in this jest worker process.
  }
});

it('has recorded histories of every workflow type the worker runs', () => {
  const recordedTypes = new Set(recordedHistories().map((history) => history.type));
  expect(Object.keys(workflows).filter((type) => !recordedTypes.has(type))).toEqual([]);
});

it('replays every recorded history against the current workflow code', async () => {
  const histories = recordedHistories();
  expect(histories.length).toBeGreaterThan(0);
  const failures: string[] = [];
  const inputs = histories.map((history) => {
    const object = JSON.parse(readFileSync(history.file, 'utf8')) as Record<string, unknown>;
    // Under the id it ran with: workflow code may derive ids from it (the settlement's legs).
    return {
      workflowId: workflowIdOf(object) ?? `${history.type}/${history.name}`,
      history: historyFromObject(object),
    };
  });
  const results = Worker.runReplayHistories(
    { workflowBundle: { codePath: workflowBundlePath }, replayName: 'recorded-histories' },
    inputs,
  );
  // One history at a time, results in the same order.
  let index = 0;
  for await (const result of results) {
    const { type, name } = histories[index] as (typeof histories)[number];
    expect(result.workflowId).toBe(inputs[index]?.workflowId);
    index += 1;
    if (result.error) failures.push(`${type}/${name}: ${result.error.name}: ${result.error.message}`);
  }
  expect(index).toBe(histories.length);
  expect(failures).toEqual([]);
});
