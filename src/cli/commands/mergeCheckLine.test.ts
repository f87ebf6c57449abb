import { describe, expect, it } from 'vitest';
import { mergeCheckLine, mergeTurnLine } from './mergeCheckLine.js';

describe('mergeCheckLine', () => {
  it('says main is being merged in, then which check runs, with the round and the daemon', () => {
    const check = { runId: 'r1', daemon: 'build-1', check: null, round: 1, maxRounds: 3, state: 'running' as const };
    expect(mergeCheckLine(check, 'trunk')).toBe("Checking the merge with trunk: trunk is being merged into its branch, then the project's checks run on it. Nothing lands until they pass. Merge check 1 of at most 3, on daemon build-1.");
    expect(mergeCheckLine({ ...check, check: 'unit tests', round: 2 }, 'trunk')).toBe('Checking the merge with trunk: check unit tests runs on its branch merged with trunk. Nothing lands until the checks pass. Merge check 2 of at most 3, on daemon build-1.');
  });

  it('leaves the round out when it is not known, and keeps a name with a line break on one line', () => {
    const line = mergeCheckLine({ runId: 'r1', daemon: null, check: 'lint\nSTATUS: all good', round: null, maxRounds: null, state: 'running' }, 'main');
    expect(line).toBe('Checking the merge with main: check lint\\u{a}STATUS: all good runs on its branch merged with main. Nothing lands until the checks pass.');
    expect(line.split('\n')).toHaveLength(1);
  });

  it('a merge check waiting for a worker says so, with the daemon whose slots are taken and the round it will be', () => {
    const check = { runId: null, daemon: 'build-1', check: null, round: 2, maxRounds: 3, state: 'waiting' as const };
    expect(mergeCheckLine(check, 'trunk')).toBe("Merge check waiting for a worker: its merge with trunk must pass the project's checks before it lands, and every run slot on daemon build-1 is taken (maxConcurrentRuns). The check starts when one of those runs ends; nothing lands until it passes. It will be merge check 2 of at most 3.");
    expect(mergeCheckLine({ ...check, daemon: null, round: null }, 'main')).toBe("Merge check waiting for a worker: its merge with main must pass the project's checks before it lands, and every run slot is taken (maxConcurrentRuns). The check starts when one of those runs ends; nothing lands until it passes.");
  });

  it('a merge check whose run is being started on a free slot says it is starting, not that it waits for a worker', () => {
    const check = { runId: null, daemon: 'build-1', check: null, round: 1, maxRounds: 3, state: 'starting' as const };
    const line = mergeCheckLine(check, 'trunk');
    expect(line).toBe("Starting its merge check: its merge with trunk must pass the project's checks before it lands, and daemon build-1 is starting the check's run on a free run slot. Nothing lands until it passes. It will be merge check 1 of at most 3.");
    expect(line).not.toMatch(/waiting|taken/);
    expect(mergeCheckLine({ ...check, daemon: 'a\nb', round: null }, 'main').split('\n')).toHaveLength(1);
  });

  it('a merge check whose daemon is gone names it and says another daemon takes the check over', () => {
    const check = { runId: null, daemon: 'build-1', check: null, round: 2, maxRounds: 3, state: 'ownerGone' as const };
    const line = mergeCheckLine(check, 'trunk');
    expect(line).toBe("Merge check left behind: its merge with trunk must pass the project's checks before it lands, and daemon build-1, which opened it, is no longer running (stopped, or no heartbeat), so its run will not start there. Another daemon takes the check over at its next merge pass; nothing lands until it passes. It will be merge check 2 of at most 3.");
    expect(line).not.toMatch(/waiting for a worker/);
  });

  it('a task waiting behind another task\'s merge check names that task and says it lands after it, on one line', () => {
    expect(mergeTurnLine({ behind: { id: 't_1', title: 'Add a' } })).toBe('Waiting for its turn to merge: the merge check of Add a (t_1) comes first, and the merge queue runs one merge check at a time. This task lands after it.');
    expect(mergeTurnLine({ behind: { id: 't_1', title: 'Add\nb' } }).split('\n')).toHaveLength(1);
  });

  it('a task checked together with another task\'s merge check says so, with how many changes it holds', () => {
    expect(mergeTurnLine({ behind: { id: 't_1', title: 'Add a' }, together: 3 })).toBe('Checking the merge together with Add a (t_1): 3 changes, checked in one merge check. They land together once the checks pass.');
    expect(mergeTurnLine({ behind: { id: 't_1', title: 'Add\nb' }, together: 2 }).split('\n')).toHaveLength(1);
  });
});
