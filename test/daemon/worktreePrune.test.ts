/**
 * The daemon removes the worktrees of finished tasks (every WORKTREE_PRUNE_MS) and keeps those of work in flight,
 * however long the project's history: it reads the tasks of the worktrees it finds, not every task of the project.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { pruneFinishedWorktrees } from '../../src/daemon/runAftermath.js';
import { ensureWorktree } from '../../src/git/worktree.js';
import { createStore } from '../../src/store/store.js';
import { freshSqlite, removeTempDirs, tempDir } from '../helpers/db.js';
import { makeRepo } from '../helpers/repo.js';

afterEach(() => removeTempDirs());

const HISTORY = 100_001;

it('keeps the worktrees of work in flight in a project with more than 100,000 finished tasks, and removes the finished ones', async () => {
  const { db } = await freshSqlite();
  const store = createStore(db);
  const home = tempDir('maestro-prune-');
  try {
    const repoPath = makeRepo();
    const project = await store.projects.create({ name: 'shop', repoPath, config: {} });
    const finished = await store.tasks.create({ projectId: project.id, title: 'Finished long ago', complexity: 'easy' });
    await store.tasks.transition(finished.id, 'cancelled');
    // The history: copies of the finished task, all created before the work in flight.
    const cols = (await db.all<{ name: string }>(`SELECT name FROM pragma_table_info('tasks')`)).map((c) => c.name);
    const picked = cols.map((c) => (c === 'id' ? `'old-' || n.i` : c === 'created_at' ? `t.created_at - 1000000 + n.i` : `t.${c}`));
    await db.run(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${HISTORY}) INSERT INTO tasks (${cols.join(', ')}) SELECT ${picked.join(', ')} FROM n, tasks t WHERE t.id = $1`,
      [finished.id],
    );
    const inFlight = await store.tasks.create({ projectId: project.id, title: 'Being worked on', complexity: 'easy' });
    await store.tasks.claim(inFlight.id, 'd1', 60_000);

    const worktreeRoot = join(home, 'worktrees', project.id);
    const worktreeOf = async (taskId: string) => (await ensureWorktree({ repoPath, worktreeRoot, taskId, version: 1, baseBranch: 'main' })).path;
    const [kept, gone] = [await worktreeOf(inFlight.id), await worktreeOf(finished.id)];
    const errors: Error[] = [];
    await pruneFinishedWorktrees(store, home, { onError: (e) => errors.push(e) });

    expect(errors).toEqual([]);
    expect(existsSync(kept), 'the worktree of the task in flight').toBe(true);
    expect(existsSync(gone), 'the worktree of the cancelled task').toBe(false);
  } finally {
    await store.close();
  }
});
