/**
 * A task cancelled (or parked) while its plan waited at plan review, then retried, in the store contract (both
 * engines): its plan was never approved, so the next claim plans again and the plan waits for a person again. It
 * kept the proposed plan, and a claim with a plan executes: on the board a retried task went ready → queued →
 * executing with no approval at all (a new-user trial, 2026-12). A plan a person approved is kept: a retry does
 * not ask for it twice.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runKindFor } from '../../src/daemon/jobs.js';
import type { DBAdapter } from '../../src/store/db.js';
import { createStore, type Store } from '../../src/store/store.js';
import { removeTempDirs } from '../helpers/db.js';

export function defineRetryPlanContract(label: string, fresh: () => Promise<{ db: DBAdapter }>, skip = false): void {
  describe.skipIf(skip)(`retrying a task whose plan was never approved: ${label}`, () => {
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

    async function atPlanReview() {
      const project = await store.projects.create({ name: 'p', repoPath: '/r', config: {} });
      const task = await store.tasks.create({ projectId: project.id, title: 'Add a farewell' });
      for (const to of ['queued', 'planning'] as const) await store.tasks.transition(task.id, to);
      await store.tasks.transition(task.id, 'plan_review', { fields: { plan: 'Write farewell(name) in greet.js.', result: { kind: 'plan', subtasks: [] } } });
      return task;
    }

    /** What the next claim of the task runs. */
    async function nextRun(id: string) {
      await store.tasks.claim(id, 'd1', 60_000);
      return runKindFor(await store.tasks.get(id)).kind;
    }

    it('plans again after a cancel at plan review, instead of executing the unapproved plan', async () => {
      const task = await atPlanReview();
      await store.tasks.cancel(task.id, { reason: 'cancelled by ann' });
      const retried = await store.tasks.retry(task.id, 'cancelled');
      expect(retried.status).toBe('ready');
      expect(retried.plan).toBeNull();
      expect(await nextRun(task.id)).toBe('plan');
    });

    it('keeps a plan a person approved', async () => {
      const task = await atPlanReview();
      // A plan with no subtasks: approved, the task executes it itself.
      expect((await store.tasks.approve(task.id, 'plan_review', 'ann')).status).toBe('ready');
      await store.tasks.cancel(task.id, { reason: 'cancelled by ann' });
      const retried = await store.tasks.retry(task.id, 'cancelled');
      expect(retried.plan).toBe('Write farewell(name) in greet.js.');
      expect(await nextRun(task.id)).toBe('execute');
    });
  });
}
