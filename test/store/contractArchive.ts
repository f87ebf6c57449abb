/**
 * Archiving a project, in the store contract (both engines): it keeps everything, takes no new work, and
 * is refused while work is in flight or at a gate, changing nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DBAdapter } from '../../src/store/db.js';
import { createStore, type Store } from '../../src/store/store.js';
import { removeTempDirs } from '../helpers/db.js';
import { expectCode, snapshot } from './contract.js';

const MINUTE = 60_000;

export function defineArchiveContract(label: string, fresh: () => Promise<{ db: DBAdapter }>, skip = false): void {
  describe.skipIf(skip)(`project archive: ${label}`, () => {
    let db: DBAdapter;
    let store: Store;
    let now: number;
    beforeEach(async () => {
      ({ db } = await fresh());
      now = 1_700_000_000_000;
      store = createStore(db, () => now);
    });
    afterEach(async () => {
      await db.close();
      removeTempDirs();
    });

    it('archives and restores a project with their events; an archived one takes no new task, retry or run', async () => {
      const p = await store.projects.create({ name: 'old', repoPath: '/repos/old' });
      const ready = await store.tasks.create({ projectId: p.id, title: 'waits' });
      const cancelled = await store.tasks.transition((await store.tasks.create({ projectId: p.id, title: 'dropped' })).id, 'cancelled');
      now += 1000;
      const archived = await store.projects.archive('old', { who: 'ann' });
      expect(archived).toMatchObject({ id: p.id, archivedAt: now });
      expect(await store.projects.list()).toEqual([archived]);
      const { events } = await store.events.list({ projectId: p.id });
      expect(events.at(-1)).toMatchObject({ type: 'project.archived', payload: { name: 'old', who: 'ann' } });

      const before = await snapshot(db);
      await expectCode(store.tasks.create({ projectId: p.id, title: 'new' }), 'PROJECT_ARCHIVED', /old is archived: no task can be created in it.*project restore old/);
      await expectCode(store.tasks.retry(cancelled.id, 'cancelled'), 'PROJECT_ARCHIVED', /no task can be retried/);
      await expectCode(store.projects.archive(p.id), 'PROJECT_ARCHIVED', /already archived/);
      await expectCode(store.projects.create({ name: 'old', repoPath: '/elsewhere' }), 'DUPLICATE_PROJECT', /archived: `maestro project restore old`/);
      // A claim that committed after the archive looked (another daemon's): its run cannot start.
      await store.tasks.claim(ready.id, 'd1', MINUTE);
      const claimed = await snapshot(db);
      await expectCode(store.runs.start({ taskId: ready.id, kind: 'execute', model: null, traceId: 'tr', attempt: 1 }), 'PROJECT_ARCHIVED', /no run starts in it/);
      expect(await snapshot(db)).toEqual(claimed);
      expect(claimed.projects).toEqual(before.projects);

      now += 1000;
      const restored = await store.projects.restore('old', { who: 'bob' });
      expect(restored.archivedAt).toBeNull();
      expect((await store.events.list({ projectId: p.id })).events.at(-1)).toMatchObject({ type: 'project.restored', payload: { who: 'bob' } });
      await expectCode(store.projects.restore('old'), 'BAD_INPUT', /not archived/);
      expect((await store.tasks.create({ projectId: p.id, title: 'new' })).title).toBe('new');
      expect((await store.runs.start({ taskId: ready.id, kind: 'execute', model: null, traceId: 'tr', attempt: 1 })).status).toBe('running');
    });

    it('refuses to archive a project with work in flight or at a gate, naming it, and changes nothing', async () => {
      const p = await store.projects.create({ name: 'busy', repoPath: '/repos/busy' });
      const running = await store.tasks.create({ projectId: p.id, title: 'running' });
      await store.tasks.claim(running.id, 'd1', MINUTE);
      now += 1000;
      const gated = await store.tasks.create({ projectId: p.id, title: 'at the gate' });
      await store.tasks.transition(gated.id, 'queued');
      await store.tasks.transition(gated.id, 'planning');
      await store.tasks.transition(gated.id, 'plan_review');
      await store.tasks.create({ projectId: p.id, title: 'ready stays ready' });
      const before = await snapshot(db);
      const err = await expectCode(store.projects.archive('busy'), 'PROJECT_BUSY', new RegExp(`${running.id} \\(queued\\), ${gated.id} \\(plan_review\\).*task cancel`));
      expect(err.details).toMatchObject({ tasks: [{ id: running.id, status: 'queued' }, { id: gated.id, status: 'plan_review' }] });
      expect(await snapshot(db)).toEqual(before);
      await expectCode(store.projects.archive('nope'), 'UNKNOWN_PROJECT');
    });
  });
}
