/**
 * Where a project's auto-approval takes effect (core/autoApproval.ts, store/ops/autoApproval.ts), in the store
 * contract (both engines): a task waiting at a gate when it is switched on or shortened is not the auto-approver's, one
 * reaching a gate after it is; a longer wait keeps what it applied to; off, none. A database from before the column
 * keeps a project's setting for every task.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DBAdapter } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { createStore, type Store } from '../../src/store/store.js';
import { removeTempDirs } from '../helpers/db.js';

export function defineAutoApprovalContract(label: string, fresh: () => Promise<{ db: DBAdapter }>, skip = false): void {
  describe.skipIf(skip)(`auto-approval from its change on: ${label}`, () => {
    let db: DBAdapter;
    let store: Store;
    beforeEach(async () => {
      ({ db } = await fresh());
      let now = 1_700_000_000_000;
      store = createStore(db, () => (now += 1000));
    });
    afterEach(async () => {
      await db.close();
      removeTempDirs();
    });

    async function atGate(projectId: string, title: string) {
      const { id } = await store.tasks.create({ projectId, title });
      for (const to of ['queued', 'executing', 'exec_review'] as const) await store.tasks.transition(id, to);
      return id;
    }
    const approvable = async () => (await store.tasks.autoApprovable()).map(({ task, afterMs }) => [task.title, afterMs]);
    const from = async (id: string) => (await db.one<{ auto_approve_from: unknown }>(`SELECT auto_approve_from FROM projects WHERE id = $1`, [id]))!.auto_approve_from;

    it('approves only what reaches a gate after the setting is switched on or shortened; a longer wait keeps it, off ends it', async () => {
      const p = await store.projects.create({ name: 'p', repoPath: '/repos/p' });
      await atGate(p.id, 'before');
      const on = await store.projects.updateConfig(p.id, { autoApproveAfterMs: 0 });
      expect(on.autoApproval).toEqual({ afterMs: 0, previousMs: null, waiting: 1 });
      const [event] = (await store.events.list({ projectId: p.id, type: 'project.config' })).events;
      expect(event!.payload).toMatchObject({ autoApproval: { afterMs: 0, previousMs: null, waiting: 1 } });
      expect(Number(await from(p.id))).toBe(event!.id);
      expect(await approvable()).toEqual([]);

      await atGate(p.id, 'after');
      expect(await approvable()).toEqual([['after', 0]]);
      // Longer: nothing more is let through; what it applied to keeps it, with the longer wait.
      expect((await store.projects.updateConfig(p.id, { autoApproveAfterMs: 5000 })).autoApproval).toEqual({ afterMs: 5000, previousMs: 0, waiting: 1 });
      expect(await approvable()).toEqual([['after', 5000]]);
      // Shorter: from now on, as switching it on; both waiting now wait for a person.
      expect((await store.projects.updateConfig(p.id, { autoApproveAfterMs: 10 })).autoApproval).toEqual({ afterMs: 10, previousMs: 5000, waiting: 2 });
      expect(await approvable()).toEqual([]);
      await atGate(p.id, 'later');
      expect(await approvable()).toEqual([['later', 10]]);
      // Another setting leaves it as it is, and says nothing of it.
      expect((await store.projects.updateConfig(p.id, { autoApproveAfterMs: 10, keepBranches: true })).autoApproval).toBeNull();
      expect(await approvable()).toEqual([['later', 10]]);
      expect((await store.projects.updateConfig(p.id, { keepBranches: true })).autoApproval).toEqual({ afterMs: null, previousMs: 10, waiting: 3 });
      expect(await from(p.id)).toBeNull();
      expect(await approvable()).toEqual([]);
    });

    it('a project registered with it approves its tasks; one from before the column keeps it for every task', async () => {
      const demo = await store.projects.create({ name: 'demo', repoPath: '/repos/demo', config: { autoApproveAfterMs: 200 } });
      await atGate(demo.id, 'first');
      expect(await approvable()).toEqual([['first', 200]]);

      const old = await store.projects.create({ name: 'old', repoPath: '/repos/old' });
      await atGate(old.id, 'waiting');
      // As an older Maestro stored it: the setting in the config, no column.
      await db.run(`UPDATE projects SET config = $1 WHERE id = $2`, [JSON.stringify({ autoApproveAfterMs: 0 }), old.id]);
      await db.run(`ALTER TABLE projects DROP COLUMN auto_approve_from`);
      await db.run(`ALTER TABLE tasks DROP COLUMN feedback_source`); // 009, after it
      await db.run(`DROP INDEX tasks_parent_version`); // 010
      await db.run(`ALTER TABLE daemons DROP COLUMN settings`); // 011
      await db.run(`DROP TABLE run_knowledge`); // 012
      await db.run(`DELETE FROM schema_migrations WHERE version >= 8`);
      expect((await migrate(db)).applied).toEqual([8, 9, 10, 11, 12]);
      expect(Number(await from(old.id))).toBe(0);
      expect(Number(await from(demo.id))).toBe(0);
      expect((await approvable()).sort()).toEqual([['first', 200], ['waiting', 0]]);
    });
  });
}
