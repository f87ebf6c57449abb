import { describe, expect, it } from 'vitest';
import type { Task } from '../core/types.js';
import type { Store } from '../store/store.js';
import { ConflictRuns, type MergeRunKind } from './conflictRuns.js';
import { MAX_SAME_BASE_CHECKS } from './mergeQueue.js';

describe('a merge check opened again on the same main', () => {
  const approved = 'a'.repeat(40);
  const main = 'b'.repeat(40);
  const task = (rechecks: number) => ({ id: 't_1', projectId: 'p_1', status: 'merging', result: { kind: 'review', verdict: 'approve', commitSha: approved, mergeChecked: { approved, commitSha: 'c'.repeat(40), rounds: 1, rechecks, baseSha: main } } }) as unknown as Task;
  const opened = async (t: Task, head: string) => {
    const started: MergeRunKind[] = [];
    const asked: string[] = [];
    const runs = new ConflictRuns({} as Store, {
      onConflict: () => undefined,
      startConflictRun: async (_t, kind) => (started.push(kind), true),
      toAttention: async (_t, reason) => void asked.push(reason),
      baseOf: async () => 'main',
      onChange: () => undefined,
      onError: (err) => { throw err; },
    });
    await runs.openCheck(t, head);
    return { started, asked };
  };

  it(`is checked again up to ${MAX_SAME_BASE_CHECKS} times, then a person is asked, not checked on without end`, async () => {
    expect(await opened(task(MAX_SAME_BASE_CHECKS - 2), main)).toEqual({ started: ['merge_check'], asked: [] });
    const parked = await opened(task(MAX_SAME_BASE_CHECKS - 1), main);
    expect(parked.started).toEqual([]);
    expect(parked.asked).toEqual([`the merge of this change onto main passed its checks ${MAX_SAME_BASE_CHECKS} times, each time together with other changes of which one was then retried, cancelled or moved, so nothing was merged (only a checked merge lands); run \`maestro task retry t_1\` to check it again, or \`maestro task cancel t_1\``]);
    // Main moved since: a new round, checked.
    expect(await opened(task(MAX_SAME_BASE_CHECKS - 1), 'd'.repeat(40))).toEqual({ started: ['merge_check'], asked: [] });
  });
});
