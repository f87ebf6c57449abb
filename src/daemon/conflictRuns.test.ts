import { afterEach, describe, expect, it } from 'vitest';
import type { Task } from '../core/types.js';
import { createStore, type Store } from '../store/store.js';
import { freshSqlite, removeTempDirs } from '../../test/helpers/db.js';
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
      owner: 'build-1',
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

describe('a merge check that finds no run slot free', () => {
  afterEach(() => removeTempDirs());

  it('says once that it waits for a slot, naming its daemon, however often it is tried; a check opened again says it again', async () => {
    const { db } = await freshSqlite();
    await using _ = { [Symbol.asyncDispose]: () => db.close() };
    const store = createStore(db);
    const project = await store.projects.create({ name: 'p', repoPath: '/r', config: {} });
    const task = await store.tasks.create({ projectId: project.id, title: 'Add b' });
    for (const to of ['queued', 'executing', 'reviewing', 'exec_review', 'merging'] as const) await store.tasks.transition(task.id, to);
    // Whether a slot is free at each try to start, in turn.
    const free: boolean[] = [];
    const started: MergeRunKind[] = [];
    const runs = new ConflictRuns(store, {
      owner: 'build-1',
      onConflict: () => undefined,
      startConflictRun: async (_t, kind) => (free.shift() ? (started.push(kind), true) : false),
      toAttention: async () => undefined,
      baseOf: async () => 'main',
      onChange: () => undefined,
      onError: (err) => { throw err; },
    });
    const said = async () => (await store.events.list({ taskId: task.id, type: 'merge.waiting' })).events.map((e) => e.payload);

    free.push(false, false, false);
    await runs.openCheck(await store.tasks.get(task.id), 'b'.repeat(40));
    expect(await said()).toEqual([{ kind: 'merge_check', owner: 'build-1' }]);
    await runs.openWaiting();
    await runs.openWaiting();
    expect(runs.waitingFor(task.id)).toBe('merge_check');
    expect(await said()).toHaveLength(1);
    free.push(true);
    await runs.openWaiting();
    expect(started).toEqual(['merge_check']);
    expect(runs.isWaiting(task.id)).toBe(false);
    expect(await said()).toHaveLength(1);

    // A slot free at once: nothing said. Then none free for the next check: that wait is said.
    free.push(true, false);
    await runs.openCheck(await store.tasks.get(task.id), 'b'.repeat(40));
    expect(await said()).toHaveLength(1);
    await runs.openCheck(await store.tasks.get(task.id), 'b'.repeat(40));
    expect(await said()).toEqual([{ kind: 'merge_check', owner: 'build-1' }, { kind: 'merge_check', owner: 'build-1' }]);
  });
});
