/**
 * A task cancelled (or parked) while its plan waited at plan review, then retried: its plan was never approved,
 * so the next claim plans again and the plan waits for a person again. It kept the proposed plan, and a claim
 * with a plan executes: on the board a retried task went ready → queued → executing with no approval at all
 * (a new-user trial, 2026-12). A plan a person approved is kept: a retry does not ask for it twice.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runKindFor } from '../../src/daemon/jobs.js';
import { createStore, type Store } from '../../src/store/store.js';
import { freshSqlite, removeTempDirs } from '../helpers/db.js';

let store: Store | null = null;
afterEach(async () => {
  await store?.close();
  store = null;
  removeTempDirs();
});

async function atPlanReview(s: Store) {
  const project = await s.projects.create({ name: 'p', repoPath: '/r', config: {} });
  const task = await s.tasks.create({ projectId: project.id, title: 'Add a farewell' });
  for (const to of ['queued', 'planning'] as const) await s.tasks.transition(task.id, to);
  await s.tasks.transition(task.id, 'plan_review', { fields: { plan: 'Write farewell(name) in greet.js.', result: { kind: 'plan', subtasks: [] } } });
  return task;
}

/** What the next claim of the task runs. */
async function nextRun(s: Store, id: string) {
  await s.tasks.claim(id, 'd1', 60_000);
  return runKindFor(await s.tasks.get(id)).kind;
}

describe('retrying a task whose plan was never approved', () => {
  it('plans again after a cancel at plan review, instead of executing the unapproved plan', async () => {
    const s = (store = createStore((await freshSqlite()).db));
    const task = await atPlanReview(s);
    await s.tasks.cancel(task.id, { reason: 'cancelled by ann' });
    const retried = await s.tasks.retry(task.id, 'cancelled');
    expect(retried.status).toBe('ready');
    expect(retried.plan).toBeNull();
    expect(await nextRun(s, task.id)).toBe('plan');
  });

  it('keeps a plan a person approved', async () => {
    const s = (store = createStore((await freshSqlite()).db));
    const task = await atPlanReview(s);
    // A plan with no subtasks: approved, the task executes it itself.
    expect((await s.tasks.approve(task.id, 'plan_review', 'ann')).status).toBe('ready');
    await s.tasks.cancel(task.id, { reason: 'cancelled by ann' });
    const retried = await s.tasks.retry(task.id, 'cancelled');
    expect(retried.plan).toBe('Write farewell(name) in greet.js.');
    expect(await nextRun(s, task.id)).toBe('execute');
  });
});
