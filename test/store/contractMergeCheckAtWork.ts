/**
 * The merge check at work in a project (store/ops/mergeCheckAtWork.ts), on both engines: the running merge_check run,
 * else the check a train opened whose run has not started, read from the task's events and the daemons registry:
 * starting (a slot was free), waiting for a worker (its daemon said every slot was taken), or owed by a daemon that is
 * gone. The registry goes by a clock moved by hand (handClock), on PostgreSQL too.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DBAdapter } from '../../src/store/db.js';
import { beatDaemon, registerDaemon, unregisterDaemon } from '../../src/store/ops/daemons.js';
import { mergeCheckAtWork } from '../../src/store/ops/mergeCheckAtWork.js';
import { createStore, type Store } from '../../src/store/store.js';
import { removeTempDirs } from '../helpers/db.js';

const MINUTE = 60_000;
const STALE_MS = 3 * MINUTE;

export function defineMergeCheckAtWorkContract(label: string, fresh: () => Promise<{ db: DBAdapter }>, skip = false): void {
  describe.skipIf(skip)(`the merge check at work: ${label}`, () => {
    let db: DBAdapter;
    let store: Store;
    let now = 1_000_000_000_000;
    beforeEach(async () => {
      ({ db } = await fresh());
      now = 1_000_000_000_000;
      store = createStore(db, () => now, { handClock: true });
    });
    afterEach(async () => {
      await db.close();
      removeTempDirs();
    });

    const atWork = (projectId: string) => mergeCheckAtWork(store.db, projectId, { now, staleMs: STALE_MS });
    const live = (name: string) => registerDaemon(store.db, { name, host: 'h', pid: 1, home: `/home/${name}`, now, staleMs: STALE_MS });

    /** A task of a fresh project in merging, and how its train opens its check and its daemon says it waits for a slot. */
    async function merging() {
      const project = await store.projects.create({ name: 'p', repoPath: '/r', config: {} });
      const task = await store.tasks.create({ projectId: project.id, title: 'Add b' });
      for (const to of ['queued', 'executing', 'reviewing', 'exec_review', 'merging'] as const) await store.tasks.transition(task.id, to);
      const base = { projectId: project.id, taskId: task.id };
      return {
        project,
        task,
        opened: (owner = 'build-1') => store.events.append({ ...base, type: 'merge.check', payload: { round: 1, maxRounds: 3, owner, riders: [] } }),
        waits: (owner = 'build-1') => store.events.append({ ...base, type: 'merge.waiting', payload: { kind: 'merge_check', owner } }),
      };
    }

    it('names a check starting, then waiting for a worker once its daemon said so, then the running run, and none once it ran or the task moved on', async () => {
      const { project, task, opened, waits } = await merging();
      await live('build-1');
      expect(await atWork(project.id)).toBeNull();

      // Opened with a slot free: its run is being started, nobody waits for a worker.
      await opened();
      expect(await atWork(project.id)).toEqual({ taskId: task.id, title: 'Add b', runId: null, owner: 'build-1', state: 'starting' });
      await waits();
      expect(await atWork(project.id)).toEqual({ taskId: task.id, title: 'Add b', runId: null, owner: 'build-1', state: 'waiting' });
      const run = await store.runs.start({ taskId: task.id, kind: 'merge_check', model: null, traceId: 'tr', attempt: 1, owner: 'build-1' });
      expect(await atWork(project.id)).toEqual({ taskId: task.id, title: 'Add b', runId: run.id, owner: null, state: 'running' });
      await store.runs.finish({ id: run.id, status: 'succeeded' });
      expect(await atWork(project.id)).toBeNull();

      // A check opened again starts afresh: the wait said for the one before is not this one's.
      await opened();
      expect((await atWork(project.id))?.state).toBe('starting');
      // A conflict found after the check was opened is no check at all; a check opened again is.
      await store.events.append({ projectId: project.id, taskId: task.id, type: 'merge.conflict', payload: { owner: 'build-1' } });
      expect(await atWork(project.id)).toBeNull();
      await opened();
      await waits();
      expect((await atWork(project.id))?.state).toBe('waiting');
      // The task moved on (a person was asked): nothing waits.
      await store.tasks.transition(task.id, 'needs_attention', { from: 'merging' });
      expect(await atWork(project.id)).toBeNull();
    });

    it('says the daemon that owes the check is gone once its heartbeat is stale or its name is off the registry, and not before', async () => {
      const { project, task, opened, waits } = await merging();
      await live('build-1');
      await live('build-2');
      await opened('build-1');
      await waits('build-1');
      expect((await atWork(project.id))?.state).toBe('waiting');
      // Killed: no heartbeat since. Alive up to staleMs, gone after it; build-2 beats on meanwhile.
      now += STALE_MS;
      await beatDaemon(store.db, 'build-2', now);
      expect((await atWork(project.id))?.state).toBe('waiting');
      now += 1;
      expect(await atWork(project.id)).toEqual({ taskId: task.id, title: 'Add b', runId: null, owner: 'build-1', state: 'ownerGone' });

      // build-2 takes it over: its train opens the check again, under its own name, and a slot is free there.
      await opened('build-2');
      expect(await atWork(project.id)).toEqual({ taskId: task.id, title: 'Add b', runId: null, owner: 'build-2', state: 'starting' });
      // Then build-2 stops (its name leaves the registry) before the run starts: gone as well, starting or not.
      await unregisterDaemon(store.db, 'build-2');
      expect((await atWork(project.id))?.state).toBe('ownerGone');
      // A check whose event names no daemon (written before they did) has nobody to ask about: never said gone.
      await store.events.append({ projectId: project.id, taskId: task.id, type: 'merge.check', payload: { round: 1, maxRounds: 3, riders: [] } });
      expect(await atWork(project.id)).toEqual({ taskId: task.id, title: 'Add b', runId: null, owner: null, state: 'starting' });
    });
  });
}
