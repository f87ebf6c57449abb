/**
 * A passed merge check no clone can land (its push failed, and another daemon's train reached the task), forgotten
 * in the store contract (both engines; daemon/mergeCars.ts checkAgain): the approved commit is the change again, so
 * the train checks the merge anew, with an event saying why. Only while the task is merging on that very check.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { approvedCommit, mergeChecked, reviewedCommit } from '../../src/core/reviewed.js';
import type { DBAdapter } from '../../src/store/db.js';
import { createStore, type Store } from '../../src/store/store.js';
import { removeTempDirs } from '../helpers/db.js';

const APPROVED = 'a'.repeat(40);
const CHECKED = 'c'.repeat(40);

export function defineMergeCheckLostContract(label: string, fresh: () => Promise<{ db: DBAdapter }>, skip = false): void {
  describe.skipIf(skip)(`a merge check no clone can land: ${label}`, () => {
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

    /** A task merging on its approval, with a passed merge check of it. */
    async function checked() {
      const project = await store.projects.create({ name: 'p', repoPath: '/r', config: {} });
      const task = await store.tasks.create({ projectId: project.id, title: 'Add b' });
      for (const to of ['queued', 'executing', 'reviewing', 'exec_review'] as const) await store.tasks.transition(task.id, to);
      const result = { kind: 'review', verdict: 'approve', branch: 'maestro/b', commitSha: APPROVED, mergeChecked: { approved: APPROVED, commitSha: CHECKED, rounds: 1 } };
      return store.tasks.transition(task.id, 'merging', { fields: { result } });
    }

    it('forgets the check: the approved commit is the change again, the rest of the result kept, an event says why', async () => {
      const task = await checked();
      expect(reviewedCommit(task)).toBe(CHECKED);
      const after = await store.tasks.forgetMergeCheck(task.id, CHECKED, 'its push failed');
      expect(after?.status).toBe('merging');
      expect(mergeChecked(after!)).toBeNull();
      expect(reviewedCommit(after!)).toBe(APPROVED);
      expect(approvedCommit(after!)).toBe(APPROVED);
      expect(after!.result).toEqual({ kind: 'review', verdict: 'approve', branch: 'maestro/b', commitSha: APPROVED });
      const events = (await store.events.list({ taskId: task.id, type: 'merge.check_lost' })).events;
      expect(events.map((e) => e.payload)).toEqual([{ commit: CHECKED, approved: APPROVED, reason: 'its push failed' }]);
    });

    it('leaves a task alone that was checked again, or is no longer merging', async () => {
      const task = await checked();
      expect(await store.tasks.forgetMergeCheck(task.id, 'd'.repeat(40), 'another check')).toBeNull();
      await store.tasks.transition(task.id, 'needs_attention', { from: 'merging' });
      expect(await store.tasks.forgetMergeCheck(task.id, CHECKED, 'parked')).toBeNull();
      expect(reviewedCommit(await store.tasks.get(task.id))).toBe(CHECKED);
      expect((await store.events.list({ taskId: task.id, type: 'merge.check_lost' })).events).toEqual([]);
    });
  });
}
