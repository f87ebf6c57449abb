/**
 * finishParents on a real SQLite store: a parent is done only when every subtask that was not superseded is done;
 * a cancelled subtask sends it to needs_attention naming it (it used to be "done", or with all cancelled, waited
 * forever); a subtask a person rejected at its gate counts by its next version.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Task } from '../core/types.js';
import { createStore, type Store } from '../store/store.js';
import { freshSqlite, removeTempDirs } from '../../test/helpers/db.js';
import { makeRepo } from '../../test/helpers/repo.js';
import { finishParents } from './parentTasks.js';

let store: Store | null = null;
afterEach(async () => {
  await store?.close();
  store = null;
  removeTempDirs();
});

const SUBTASKS = ['Define', 'Wire', 'Document'].map((title) => ({ title, complexity: 'easy', priority: 1, deps: [], ownedFiles: [], expectedOutput: null }));

/** A parent approved into three subtasks: waiting_children. */
async function decomposed(): Promise<{ s: Store; parent: Task; kids: [Task, Task, Task] }> {
  const s = (store = createStore((await freshSqlite()).db));
  const project = await s.projects.create({ name: 'demo', repoPath: makeRepo(), config: {} });
  const parent = await s.tasks.create({ projectId: project.id, title: 'Greet people' });
  for (const st of ['queued', 'planning'] as const) await s.tasks.transition(parent.id, st);
  await s.tasks.transition(parent.id, 'plan_review', { fields: { plan: 'Three steps.', result: { kind: 'plan', subtasks: SUBTASKS } } });
  await s.tasks.approve(parent.id, 'plan_review', 'ann');
  return { s, parent, kids: (await s.tasks.list({ parentId: parent.id })) as [Task, Task, Task] };
}

const DONE = ['queued', 'executing', 'reviewing', 'merging', 'done'] as const;
async function walk(s: Store, id: string, path: readonly Task['status'][]): Promise<void> {
  for (const st of path) await s.tasks.transition(id, st);
}

/** The parent's status and, when it moved, its last status event. */
async function after(s: Store, parent: Task): Promise<{ status: string; event: Record<string, unknown> | undefined; lastRunError: string | null }> {
  let changes = 0;
  await finishParents(s, () => changes++);
  const t = await s.tasks.get(parent.id);
  const event = (await s.events.list({ taskId: parent.id, type: 'task.status', limit: 1000 })).events.at(-1)?.payload;
  expect(changes).toBe(t.status === 'waiting_children' ? 0 : 1);
  return { status: t.status, event, lastRunError: t.lastRunError };
}

describe('finishParents', () => {
  it('waits while a subtask is unfinished, and is done when all are done', async () => {
    const { s, parent, kids } = await decomposed();
    await walk(s, kids[0].id, DONE);
    await walk(s, kids[1].id, DONE);
    // A parent still waiting costs no read of its subtasks (one query names the settled ones): a merge tick did one per parent.
    const list = s.tasks.list;
    const reads: unknown[] = [];
    s.tasks.list = (filter) => (reads.push(filter), list(filter));
    expect((await after(s, parent)).status).toBe('waiting_children');
    expect(reads.filter((f) => (f as { parentId?: string } | undefined)?.parentId)).toEqual([]);
    await walk(s, kids[2].id, DONE);
    expect(await after(s, parent)).toMatchObject({ status: 'done', event: { from: 'waiting_children', to: 'done', reason: 'all subtasks done' } });
  });

  it('sends the parent to needs_attention, naming the cancelled subtask, when the others are done', async () => {
    const { s, parent, kids } = await decomposed();
    await walk(s, kids[0].id, DONE);
    await walk(s, kids[2].id, DONE);
    await s.tasks.cancel(kids[1].id, { reason: 'not needed' });
    const reason = `a subtask was cancelled, so its part of the work never landed: ${kids[1].id} "Wire". Retry this task to run it again (subtasks that are done stay done), or cancel it.`;
    expect(await after(s, parent)).toEqual({ status: 'needs_attention', lastRunError: reason, event: { from: 'waiting_children', to: 'needs_attention', reason } });

    // What the reason offers: the retry runs Wire again, and then the parent is done.
    await s.tasks.retry(parent.id, 'needs_attention');
    expect((await s.tasks.list({ parentId: parent.id })).map((k) => k.status)).toEqual(['done', 'ready', 'done']);
    expect((await after(s, parent)).status).toBe('waiting_children');
    await walk(s, kids[1].id, DONE);
    expect((await after(s, parent)).status).toBe('done');
  });

  it('does not wait forever when every subtask was cancelled', async () => {
    const { s, parent, kids } = await decomposed();
    for (const k of kids) await s.tasks.cancel(k.id, { reason: 'not needed' });
    const { status, lastRunError } = await after(s, parent);
    expect(status).toBe('needs_attention');
    expect(lastRunError).toBe(`3 subtasks were cancelled, so their part of the work never landed: ${kids.map((k) => `${k.id} "${k.title}"`).join(', ')}. Retry this task to run them again (subtasks that are done stay done), or cancel it.`);
  });

  it('counts a subtask rejected at its gate by its next version', async () => {
    const { s, parent, kids } = await decomposed();
    await walk(s, kids[0].id, DONE);
    await walk(s, kids[1].id, DONE);
    await walk(s, kids[2].id, ['queued', 'executing', 'reviewing', 'exec_review']);
    const { next } = await s.tasks.reject(kids[2].id, 'exec_review', 'ann', 'say hello');
    // Superseded and its replacement not done yet: the parent waits for the replacement.
    expect((await after(s, parent)).status).toBe('waiting_children');
    await s.tasks.cancel(next.id, { reason: 'not needed' });
    const { status, lastRunError } = await after(s, parent);
    expect(status).toBe('needs_attention');
    expect(lastRunError).toContain(`${next.id} "Document"`);
    expect(lastRunError).not.toContain(kids[2].id);

    // Retried, the replacement (not the superseded version) runs again; done, the parent is done.
    await s.tasks.retry(parent.id, 'needs_attention');
    expect((await s.tasks.get(next.id)).status).toBe('ready');
    expect((await s.tasks.get(kids[2].id)).status).toBe('superseded');
    await walk(s, next.id, DONE);
    expect((await after(s, parent)).status).toBe('done');
  });
});
