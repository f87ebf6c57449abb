/**
 * A dependency named by a superseded version's id, in the store contract (both engines): it is stored as the
 * task's newest version, so the dependent runs once that one is done; a chain that ends in nothing is refused.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ReadyWork } from '../../src/daemon/readyWork.js';
import type { DBAdapter } from '../../src/store/db.js';
import { createStore, type Store } from '../../src/store/store.js';
import { removeTempDirs } from '../helpers/db.js';
import { expectCode, snapshot } from './contract.js';

export function defineVersionDepsContract(label: string, fresh: () => Promise<{ db: DBAdapter }>, skip = false): void {
  describe.skipIf(skip)(`dependencies on superseded versions: ${label}`, () => {
    let db: DBAdapter;
    let store: Store;
    beforeEach(async () => {
      ({ db } = await fresh());
      store = createStore(db, () => 1_700_000_000_000);
    });
    afterEach(async () => {
      await db.close();
      removeTempDirs();
    });

    /** A task rejected at exec_review once: its v1 (superseded) and v2 (ready). */
    async function rejectedOnce() {
      const p = await store.projects.create({ name: 'demo', repoPath: '/repos/demo' });
      const v1 = await store.tasks.create({ projectId: p.id, title: 'Base' });
      for (const s of ['queued', 'executing', 'exec_review'] as const) await store.tasks.transition(v1.id, s);
      const { next: v2 } = await store.tasks.reject(v1.id, 'exec_review', 'ann', 'again');
      return { p, v1, v2 };
    }

    it('stores the newest version at creation and in an edit, and the dependent runs once that is done', async () => {
      const { p, v1, v2 } = await rejectedOnce();
      const after = await store.tasks.create({ projectId: p.id, title: 'After', deps: [v1.id] });
      expect(after.deps).toEqual([v2.id]);
      const other = await store.tasks.create({ projectId: p.id, title: 'Other' });
      // Both versions named: one task, one dependency.
      expect((await store.tasks.edit(other.id, { deps: [v1.id, v2.id] })).deps).toEqual([v2.id]);
      // The old id of a task is still that task.
      await expectCode(store.tasks.edit(v2.id, { deps: [v1.id] }), 'SELF_DEPENDENCY', new RegExp(`${v1.id} is an older version of it`));

      // What the scheduler would claim: not the dependent while v2 works, then the dependent once v2 is done.
      const work = new ReadyWork(store, { rebuildMs: 0 });
      const ready = async () => (await work.candidates()).map((c) => c.task.id);
      expect(await ready()).not.toContain(after.id);
      for (const s of ['queued', 'executing', 'exec_review', 'merging', 'done'] as const) await store.tasks.transition(v2.id, s);
      expect(await ready()).toContain(after.id);
    });

    it('moves a rejected version\'s dependents and subtasks to the next version, each with a task.edited event in that transaction', async () => {
      const p = await store.projects.create({ name: 'demo', repoPath: '/repos/demo' });
      const v1 = await store.tasks.create({ projectId: p.id, title: 'Base' });
      const dependent = await store.tasks.create({ projectId: p.id, title: 'After', deps: [v1.id] });
      const child = await store.tasks.create({ projectId: p.id, title: 'Part', parentId: v1.id });
      const bystander = await store.tasks.create({ projectId: p.id, title: 'Other' });
      for (const s of ['queued', 'executing', 'exec_review'] as const) await store.tasks.transition(v1.id, s);
      const { next: v2 } = await store.tasks.reject(v1.id, 'exec_review', 'ann', 'again');
      expect((await store.tasks.get(dependent.id)).deps).toEqual([v2.id]);
      expect((await store.tasks.get(child.id)).parentId).toBe(v2.id);
      // Boards, watchers and other daemons read a task again on its event: without one they kept the old links.
      const edited = (await store.events.list({ projectId: p.id, type: 'task.edited' })).events.map((e) => [e.taskId, e.payload]);
      expect(edited).toEqual([[dependent.id, { fields: ['deps'], nextVersion: v2.id }], [child.id, { fields: ['parentId'], nextVersion: v2.id }]]);
      expect(edited.some(([id]) => id === bystander.id)).toBe(false);
    });

    it("keeps a new version's feedback as data beside its English text: a rejection's and a retry's from main", async () => {
      const p = await store.projects.create({ name: 'demo', repoPath: '/repos/demo' });
      const v1 = await store.tasks.create({ projectId: p.id, title: 'Base' });
      for (const s of ['queued', 'executing', 'exec_review'] as const) await store.tasks.transition(v1.id, s);
      const comments = [{ file: 'src/a.ts', line: 2, side: 'new' as const, text: 'keep b' }];
      const { next: v2 } = await store.tasks.reject(v1.id, 'exec_review', 'ann', 'no tests', comments);
      expect(v2.feedback).toMatch(/^exec_review rejected by ann: no tests/); // the agent's prompt reads it, as before
      const rejection = { kind: 'rejection', gate: 'exec_review', who: 'ann', reason: 'no tests', comments };
      expect(v2.feedbackSource).toEqual(rejection);
      expect((await store.tasks.get(v2.id)).feedbackSource).toEqual(rejection);
      expect((await store.tasks.get(v1.id)).feedbackSource).toBeNull();

      for (const s of ['queued', 'executing'] as const) await store.tasks.transition(v2.id, s);
      await store.tasks.transition(v2.id, 'needs_attention', { fields: { lastRunError: 'checks failed: npm test' } });
      const v3 = await store.tasks.retry(v2.id, 'needs_attention', { fresh: true, who: 'bo' });
      expect((await store.tasks.get(v3.id)).feedbackSource).toEqual({ kind: 'fresh', version: 2, who: 'bo', error: 'checks failed: npm test' });
    });

    it('refuses a superseded version whose chain ends in nothing, naming it, changing nothing', async () => {
      const p = await store.projects.create({ name: 'demo', repoPath: '/repos/demo' });
      const orphan = await store.tasks.create({ projectId: p.id, title: 'Orphan' });
      // No path of the store's leaves a superseded version without a next one: made by hand, as damage would.
      await db.run(`UPDATE tasks SET status = 'superseded' WHERE id = $1`, [orphan.id]);
      const other = await store.tasks.create({ projectId: p.id, title: 'Other' });
      const before = await snapshot(db);
      const refusal = new RegExp(`Dependency ${orphan.id} was superseded, but its version chain ends at ${orphan.id}`);
      await expectCode(store.tasks.create({ projectId: p.id, title: 'Waits', deps: [orphan.id] }), 'BAD_INPUT', refusal);
      await expectCode(store.tasks.edit(other.id, { deps: [orphan.id] }), 'BAD_INPUT', refusal);
      expect(await snapshot(db)).toEqual(before);
    });
  });
}
