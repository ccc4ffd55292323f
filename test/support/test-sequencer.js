/**
 * Jest's order (suites that failed last time first, then the slowest first by the durations jest
 * cached), with one change for suites it has no duration of: end-to-end ones before the Redis
 * ones before unit ones, each by file size. A fresh clone, as CI runs, has no durations; by size
 * alone a short end-to-end file that waits a minute on a real clock would start among the last,
 * its worker still busy long after the other one ran out of suites.
 */
import TestSequencer from '@jest/test-sequencer';

/** Where a suite without a cached duration goes; a project not named here goes first. */
const PROJECT_RANK = { e2e: 0, integration: 1, unit: 2 };

export default class Sequencer extends TestSequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const rank = (test) => {
      if (this.hasFailed(test)) return -1;
      if (test.duration != null) return 3;
      return PROJECT_RANK[test.context.config.displayName?.name] ?? 0;
    };
    // Array.prototype.sort is stable: within a rank, jest's order stays
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
