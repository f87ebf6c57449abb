/**
 * Which task version a person replaced, and why, as the store says it (supersededVersions.ts) on a real SQLite
 * store: what review's `superseded` shows for the version's knowledge session on every daemon. It replaced the
 * `task-version.json` a daemon wrote into the session folder on its own host only.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { sessionIdFor } from '../../core/supersededVersion.js';
import { createStore, type Store } from '../store.js';
import { freshSqlite, removeTempDirs } from '../../../test/helpers/db.js';
import { makeRepo } from '../../../test/helpers/repo.js';

let store: Store | null = null;
afterEach(async () => {
  await store?.close();
  store = null;
  removeTempDirs();
});

async function project(): Promise<{ s: Store; projectId: string; otherId: string }> {
  const s = (store = createStore((await freshSqlite()).db));
  const p = await s.projects.create({ name: 'demo', repoPath: makeRepo(), config: {} });
  const other = await s.projects.create({ name: 'other', repoPath: makeRepo(), config: {} });
  return { s, projectId: p.id, otherId: other.id };
}

async function atExecReview(s: Store, projectId: string) {
  const t = await s.tasks.create({ projectId, title: 'Greet people' });
  for (const st of ['queued', 'executing', 'reviewing', 'exec_review'] as const) await s.tasks.transition(t.id, st);
  return t;
}

async function needingAttention(s: Store, projectId: string, error: string) {
  const t = await s.tasks.create({ projectId, title: 'Drain queues' });
  await s.tasks.transition(t.id, 'needs_attention', { from: 'ready', fields: { lastRunError: error } });
  return t;
}

describe('a replaced task version, from the task rows', () => {
  it('a rejection at a gate: which version, the gate, the reason, who, when, and what replaced it; nothing for the current version', async () => {
    const { s, projectId, otherId } = await project();
    const t = await atExecReview(s, projectId);
    const { next } = await s.tasks.reject(t.id, 'exec_review', 'ana', 'greet in French');
    const found = await s.tasks.superseded([t.id, next.id, 't_0000000000000000'], projectId);
    expect([...found.keys()]).toEqual([t.id]);
    expect(found.get(t.id)).toEqual({
      task_id: t.id, version: 1, cause: 'rejected', gate: 'exec_review', reason: 'greet in French', who: 'ana',
      at: new Date(next.createdAt).toISOString(), superseded_by: { task_id: next.id, version: 2, session_id: sessionIdFor(next.id) },
    });
    // Asked for another project's tasks, the store names none of this one's.
    expect((await s.tasks.superseded([t.id], otherId)).size).toBe(0);
  });

  it('a retry from the current main: retried, with the error the version stopped on', async () => {
    const { s, projectId } = await project();
    const t = await needingAttention(s, projectId, 'checks failed: lint');
    const next = await s.tasks.retry(t.id, 'needs_attention', { fresh: true, who: 'bo' });
    expect((await s.tasks.superseded([t.id])).get(t.id)).toEqual({
      task_id: t.id, version: 1, cause: 'retried', gate: null, reason: 'it needed attention: checks failed: lint', who: 'bo',
      at: new Date(next.createdAt).toISOString(), superseded_by: { task_id: next.id, version: 2, session_id: sessionIdFor(next.id) },
    });
  });

  it('versions made before feedback_source (migration 009): the old version’s status event says who and why', async () => {
    const { s, projectId } = await project();
    const rejected = await atExecReview(s, projectId);
    const { next: afterReject } = await s.tasks.reject(rejected.id, 'exec_review', 'ana', 'greet in French');
    const retried = await needingAttention(s, projectId, 'checks failed: lint');
    const afterRetry = await s.tasks.retry(retried.id, 'needs_attention', { fresh: true, who: 'bo' });
    await s.db.run(`UPDATE tasks SET feedback_source = NULL`);
    const found = await s.tasks.superseded([rejected.id, retried.id], projectId);
    expect(found.get(rejected.id)).toMatchObject({ cause: 'rejected', gate: 'exec_review', reason: 'greet in French', who: 'ana', superseded_by: { task_id: afterReject.id } });
    expect(found.get(retried.id)).toMatchObject({ cause: 'retried', gate: null, reason: 'it needed attention: checks failed: lint', who: 'bo', superseded_by: { task_id: afterRetry.id } });
  });

  it('finds a version’s successor through an index (migration 010), not a scan of every task', async () => {
    const { s } = await project();
    const plan = await s.db.all<{ detail: string }>(`EXPLAIN QUERY PLAN SELECT * FROM tasks WHERE parent_version_id IN ($1, $2) ORDER BY version`, ['t_1', 't_2']);
    expect(plan.map((r) => r.detail).join('\n')).toMatch(/USING INDEX tasks_parent_version/);
  });
});
