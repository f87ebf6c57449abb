/**
 * Cancelling a decomposed parent cancels its unfinished subtasks with it (a new-user trial: they stayed ready
 * or at work, were claimed, and one reached exec_review and could merge). Through the API and the CLI against a
 * real store; the all-or-nothing part with a crash before the commit.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/types.js';
import { createStore, type Store } from '../../src/store/store.js';
import { freshSqlite, removeTempDirs } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { cliFor } from '../cli/helpers.js';
import { budget } from '../helpers/budget.js';

const SUBTASKS = ['Define', 'Wire', 'Document'].map((title) => ({ title, complexity: 'easy', priority: 1, deps: [], ownedFiles: [], expectedOutput: null }));

/** A parent at plan_review with three planned subtasks, approved: waiting_children with its three children. */
async function decomposed(store: Store, projectId: string): Promise<{ parent: Task; define: Task; wire: Task; doc: Task }> {
  const parent = await store.tasks.create({ projectId, title: 'Greet people' });
  for (const s of ['queued', 'planning'] as const) await store.tasks.transition(parent.id, s);
  await store.tasks.transition(parent.id, 'plan_review', { fields: { plan: 'Three steps.', result: { kind: 'plan', subtasks: SUBTASKS } } });
  expect((await store.tasks.approve(parent.id, 'plan_review', 'ann')).status).toBe('waiting_children');
  const kids = await store.tasks.list({ parentId: parent.id });
  expect(kids.map((k) => k.title)).toEqual(['Define', 'Wire', 'Document']);
  const [define, wire, doc] = kids as [Task, Task, Task];
  return { parent, define, wire, doc };
}

async function walk(store: Store, id: string, path: readonly Task['status'][]): Promise<void> {
  for (const s of path) await store.tasks.transition(id, s);
}

describe('cancelling a parent task', () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop();
    d = null;
    removeTempDirs();
  });
  /** A daemon (no orchestrator: the test moves the tasks) with a decomposed parent in project demo. */
  const start = async () => {
    d = await startTestDaemon({}, { noOrchestrator: true });
    const project = await d.store.projects.create({ name: 'demo', repoPath: makeRepo(), config: {} });
    return { daemon: d, store: d.store, project, ...(await decomposed(d.store, project.id)) };
  };

  it('cancels every unfinished subtask with it, each with its own event; done and superseded ones stay as they are', async () => {
    const { daemon, store, project, parent, define, wire, doc } = await start();
    // Define merged; Wire was rejected at its gate (version 2 is ready); Document is at work.
    await walk(store, define.id, ['queued', 'executing', 'reviewing', 'merging', 'done']);
    await walk(store, wire.id, ['queued', 'executing', 'reviewing', 'exec_review']);
    const { next: wire2 } = await store.tasks.reject(wire.id, 'exec_review', 'ann', 'name it better');
    await store.tasks.claim(doc.id, 'someone', 60_000);
    await walk(store, doc.id, ['executing', 'awaiting_input']);

    const { cli } = cliFor(daemon.config.home);
    const out = await cli(['task', 'cancel', parent.id, '--reason', 'not needed', '--url', daemon.url]);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    // Listed in creation order (created_at, then id: Wire's version 2 may be made in Document's millisecond).
    const listed = [doc, wire2].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1)).map((t) => `${t.id} ${t.title}`);
    expect(out.stdout.trim()).toBe(`Cancelled ${parent.id} and its 2 unfinished subtasks (${listed.join(', ')}).`);

    const statuses = async () => Object.fromEntries((await store.tasks.list({ parentId: parent.id })).map((k) => [`${k.title} v${k.version}`, k.status]));
    expect((await store.tasks.get(parent.id)).status).toBe('cancelled');
    expect(await statuses()).toEqual({ 'Define v1': 'done', 'Wire v1': 'superseded', 'Wire v2': 'cancelled', 'Document v1': 'cancelled' });
    const lastStatus = async (id: string) => (await store.events.list({ taskId: id, type: 'task.status', limit: 1000 })).events.at(-1)!.payload;
    expect(await lastStatus(parent.id)).toEqual({ from: 'waiting_children', to: 'cancelled', reason: 'not needed' });
    expect(await lastStatus(doc.id)).toEqual({ from: 'awaiting_input', to: 'cancelled', reason: `cancelled with task ${parent.id}: not needed`, cancelledWith: parent.id });
    expect(await lastStatus(wire2.id)).toEqual({ from: 'ready', to: 'cancelled', reason: `cancelled with task ${parent.id}: not needed`, cancelledWith: parent.id });
    expect((await lastStatus(define.id)).to).toBe('done');

    // The API answers the same; a task without subtasks cancels alone.
    const lone = await store.tasks.create({ projectId: project.id, title: 'Alone' });
    const res = await daemon.app.inject({ method: 'POST', url: `/api/tasks/${lone.id}/cancel`, payload: { reason: 'no' } });
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ task: { id: lone.id, status: 'cancelled' }, subtasksCancelled: [] });
  }, budget(60_000));

  it('a retry brings a decomposed subtask back to waiting_children, and its own cancelled subtasks back to ready', async () => {
    const { store, parent, define, wire } = await start();
    // Define was planned into subtasks of its own (a second level).
    await walk(store, define.id, ['queued', 'planning']);
    const two = SUBTASKS.slice(0, 2).map((s) => ({ ...s, title: `${s.title} more` }));
    await store.tasks.transition(define.id, 'plan_review', { fields: { plan: 'Two steps.', result: { kind: 'plan', subtasks: two } } });
    await store.tasks.approve(define.id, 'plan_review', 'ann');
    const grandchildren = await store.tasks.list({ parentId: define.id });
    expect(grandchildren).toHaveLength(2);
    await store.tasks.cancel(parent.id, { reason: 'not now' });
    expect((await store.tasks.get(define.id)).status).toBe('cancelled');

    await store.tasks.retry(parent.id, 'cancelled');
    expect((await store.tasks.get(define.id)).status).toBe('waiting_children');
    expect((await store.tasks.get(wire.id)).status).toBe('ready');
    for (const g of grandchildren) expect((await store.tasks.get(g.id)).status).toBe('ready');
  }, budget(60_000));

  it('a retry of the cancelled parent brings back its cancelled subtasks: the parent waits for them again, done ones stay done', async () => {
    const { daemon, store, project, parent, define, wire, doc } = await start();
    await walk(store, define.id, ['queued', 'executing', 'reviewing', 'merging', 'done']);
    await store.tasks.claim(wire.id, 'someone', 60_000);
    await walk(store, wire.id, ['executing']);
    await store.tasks.cancel(parent.id, { reason: 'not now' });

    const { cli } = cliFor(daemon.config.home);
    const out = await cli(['task', 'retry', parent.id, '--url', daemon.url]);
    expect(out.code).toBe(0);
    // Not ready: its plan is approved, and a claim would execute all of it as one task beside Define's landed work.
    expect(out.stdout.trim()).toBe(`Retrying ${parent.id}; it is now waiting_children (its cancelled subtasks are ready again).`);
    expect((await store.tasks.get(parent.id)).status).toBe('waiting_children');
    const now = await store.tasks.list({ parentId: parent.id });
    expect(now.map((k) => [k.title, k.status, k.claimedBy])).toEqual([['Define', 'done', null], ['Wire', 'ready', null], ['Document', 'ready', null]]);
    const lastStatus = async (id: string) => (await store.events.list({ taskId: id, type: 'task.status', limit: 1000 })).events.at(-1)!.payload;
    expect(await lastStatus(parent.id)).toEqual({ from: 'cancelled', to: 'waiting_children', reason: 'retry with its subtasks' });
    expect(await lastStatus(wire.id)).toEqual({ from: 'cancelled', to: 'ready', reason: `retried with task ${parent.id}`, retriedWith: parent.id });
    expect(await lastStatus(doc.id)).toEqual({ from: 'cancelled', to: 'ready', reason: `retried with task ${parent.id}`, retriedWith: parent.id });
    // A task that was never decomposed is retried to ready as before.
    const lone = await store.tasks.create({ projectId: project.id, title: 'Alone' });
    await store.tasks.cancel(lone.id, { reason: 'no' });
    expect(JSON.parse((await daemon.app.inject({ method: 'POST', url: `/api/tasks/${lone.id}/retry`, headers: { 'x-maestro-client': 'test' } })).body).task.status).toBe('ready');
  }, budget(60_000));

  it('cancels all of it or none of it: a crash before the commit leaves the parent and its subtasks as they were', async () => {
    let crash = false;
    const store = createStore((await freshSqlite()).db, Date.now, {
      faults: {
        point(at) {
          if (crash && at === 'tasks.cancel#commit') throw new Error('killed before the commit');
        },
      },
    });
    try {
      const project = await store.projects.create({ name: 'demo', repoPath: makeRepo(), config: {} });
      const { parent, define } = await decomposed(store, project.id);
      await store.tasks.claim(define.id, 'someone', 60_000);
      const before = await store.events.list({ limit: 1000 });
      crash = true;
      await expect(store.tasks.cancel(parent.id, { reason: 'not needed' })).rejects.toThrow('killed before the commit');
      expect((await store.tasks.get(parent.id)).status).toBe('waiting_children');
      expect((await store.tasks.list({ parentId: parent.id })).map((k) => k.status)).toEqual(['queued', 'ready', 'ready']);
      expect((await store.events.list({ limit: 1000 })).events).toEqual(before.events);
      crash = false;
      const { subtasks } = await store.tasks.cancel(parent.id, { reason: 'not needed' });
      expect(subtasks.map((s) => [s.title, s.status])).toEqual([['Define', 'cancelled'], ['Wire', 'cancelled'], ['Document', 'cancelled']]);
    } finally {
      await store.close();
    }
  });
});
