// The order jest runs the files in: the longest first, so that no long file starts last and holds the run up while
// the other workers idle. jest's own sequencer knows a file's duration only from its cache of earlier runs on this
// machine (a fresh clone, as on CI, has none, and it then orders by file size); this one falls back on the wall
// times `npm run test:profile` measured and wrote to test/support/file-durations.json. Failed files still go first.
const Sequencer = require('@jest/test-sequencer').default;
const { readFileSync } = require('node:fs');
const path = require('node:path');

const durationsFile = path.join(__dirname, 'file-durations.json');

function measuredDurations() {
  try {
    return JSON.parse(readFileSync(durationsFile, 'utf8'));
  } catch {
    return {};
  }
}

class LongestFirstSequencer extends Sequencer {
  sort(tests) {
    const measured = measuredDurations();
    const root = path.join(__dirname, '..', '..');
    const durationOf = (test) => {
      const cached = this.time(test);
      if (cached != null) return cached;
      const seconds = measured[path.relative(root, test.path)];
      return seconds == null ? undefined : seconds * 1000;
    };
    for (const test of tests) test.duration = durationOf(test);
    // Never measured (a new file): unknown, so first, as jest's sequencer does.
    const key = (test) => [this.hasFailed(test) ? 1 : 0, test.duration == null ? 1 : 0, test.duration ?? 0];
    return tests.sort((a, b) => {
      const [failedA, newA, durationA] = key(a);
      const [failedB, newB, durationB] = key(b);
      return failedB - failedA || newB - newA || durationB - durationA;
    });
  }
}

module.exports = LongestFirstSequencer;
