/**
 * The merge check at work in a project (store/ops/mergeCheckAtWork.ts), on both engines: the running merge_check run,
 * else the check a train opened whose run has not started (waiting for a worker), read from the task's events.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DBAdapter } from '../../src/store/db.js';
import { mergeCheckAtWork } from '../../src/store/ops/mergeCheckAtWork.js';
import { createStore, type Store } from '../../src/store/store.js';
import { removeTempDirs } from '../helpers/db.js';

export function defineMergeCheckAtWorkContract(label: string, fresh: () => Promise<{ db: DBAdapter }>, skip = false): void {
  describe.skipIf(skip)(`the merge check at work: ${label}`, () => {
    let db: DBAdapter;
    let store: Store;
    beforeEach(async () => {
      ({ db } = await fresh());
      store = createStore(db);
    });
    afterEach(async () => {
      await db.close();
      removeTempDirs();
    });

    it('names a check waiting for a worker until its run starts, then the running run, and none once it ran or the task moved on', async () => {
      const project = await store.projects.create({ name: 'p', repoPath: '/r', config: {} });
      const task = await store.tasks.create({ projectId: project.id, title: 'Add b' });
      for (const to of ['queued', 'executing', 'reviewing', 'exec_review', 'merging'] as const) await store.tasks.transition(task.id, to);
      const opened = () => store.events.append({ projectId: project.id, taskId: task.id, type: 'merge.check', payload: { round: 1, maxRounds: 3, owner: 'build-1', riders: [] } });
      expect(await mergeCheckAtWork(db, project.id)).toBeNull();

      await opened();
      expect(await mergeCheckAtWork(db, project.id)).toEqual({ taskId: task.id, title: 'Add b', runId: null, waitingOn: 'build-1' });
      const run = await store.runs.start({ taskId: task.id, kind: 'merge_check', model: null, traceId: 'tr', attempt: 1, owner: 'build-1' });
      expect(await mergeCheckAtWork(db, project.id)).toEqual({ taskId: task.id, title: 'Add b', runId: run.id, waitingOn: null });
      await store.runs.finish({ id: run.id, status: 'succeeded' });
      expect(await mergeCheckAtWork(db, project.id)).toBeNull();

      // A conflict found after the check was opened is no check waiting; a check opened again is.
      await opened();
      await store.events.append({ projectId: project.id, taskId: task.id, type: 'merge.conflict', payload: { owner: 'build-1' } });
      expect(await mergeCheckAtWork(db, project.id)).toBeNull();
      await opened();
      expect((await mergeCheckAtWork(db, project.id))?.runId).toBeNull();
      // The task moved on (a person was asked): nothing waits.
      await store.tasks.transition(task.id, 'needs_attention', { from: 'merging' });
      expect(await mergeCheckAtWork(db, project.id)).toBeNull();
    });
  });
}
