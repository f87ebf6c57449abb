/**
 * What a landed train leaves, cleaned up on real git: every task's worktree removed, the train's branches deleted
 * in one git process, a cleanup event per task, and git's auto-maintenance (which Maestro's own commits and merges
 * skip) run at most once per MAINTENANCE_EVERY_MS (git/maintenance.ts) per repository.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/types.js';
import { cleanUpLanded } from '../../src/daemon/mergeCleanup.js';
import { ProjectRepos } from '../../src/daemon/repos.js';
import { observeGit } from '../../src/git/git.js';
import { ensureWorktree } from '../../src/git/worktree.js';
import { createStore, type Store } from '../../src/store/store.js';
import { freshSqlite, removeTempDirs, tempDir } from '../helpers/db.js';
import { git, makeRepo } from '../helpers/repo.js';

let store: Store | null = null;
afterEach(async () => {
  await store?.close();
  store = null;
  removeTempDirs();
});

async function setup(titles: string[]) {
  store = createStore((await freshSqlite()).db);
  const repo = makeRepo();
  const root = tempDir('maestro-wts-');
  const project = await store.projects.create({ name: 'p', repoPath: repo, config: {} });
  const cars: Array<{ task: Task; branch: string; path: string }> = [];
  for (const title of titles) {
    const task = await store.tasks.create({ projectId: project.id, title, complexity: 'easy' });
    const wt = await ensureWorktree({ repoPath: repo, worktreeRoot: root, taskId: task.id, version: task.version, baseBranch: 'main' });
    cars.push({ task, branch: wt.branch, path: wt.path });
  }
  const errors: Error[] = [];
  const deps = { store, repos: new ProjectRepos(tempDir('maestro-home-')), worktreeRoot: () => root, onError: (e: Error) => errors.push(e) };
  const land = async (which: typeof cars) => {
    const calls: string[][] = [];
    const unobserve = observeGit((c) => calls.push(c.args));
    await cleanUpLanded(deps, project, { repo, cleanups: which, conflicts: [], checks: [], gone: new Set() });
    unobserve();
    return calls.map((a) => a.filter((x) => x !== '--end-of-options').join(' '));
  };
  return { repo, cars, errors, land, s: store };
}

describe('cleaning up a landed train', () => {
  it('removes the worktrees, deletes the branches in one process, tells each task, and maintains the repository once', async () => {
    const { repo, cars, errors, land, s } = await setup(['a', 'b', 'c']);
    const [a, b, c] = cars as [(typeof cars)[0], (typeof cars)[0], (typeof cars)[0]];
    expect(await land([a, b])).toEqual([`branch -D ${a.branch} ${b.branch}`, 'maintenance run --auto --quiet']);
    expect(errors).toEqual([]);
    for (const car of [a, b]) {
      expect(existsSync(car.path)).toBe(false);
      expect(git(repo, 'branch', '--list', car.branch)).toBe('');
      const events = (await s.events.list({ taskId: car.task.id, type: 'git.cleanup' })).events;
      expect(events.map((e) => e.payload)).toEqual([{ worktree: car.path, branch: car.branch, branchDeleted: true }]);
    }
    expect(git(repo, 'worktree', 'list').split('\n')).toHaveLength(2); // main and c
    // The next train within MAINTENANCE_EVERY_MS: no maintenance.
    expect(await land([c])).toEqual([`branch -D ${c.branch}`]);
    expect(git(repo, 'worktree', 'list').split('\n')).toHaveLength(1);
  });

  it('a branch git will not delete (checked out in a worktree of the person\'s) is told, and its event says it stays', async () => {
    const { repo, cars, errors, land, s } = await setup(['a', 'b']);
    const [a, b] = cars as [(typeof cars)[0], (typeof cars)[0]];
    const theirs = join(tempDir('maestro-theirs-'), 'b');
    git(repo, 'worktree', 'add', '-q', '-f', theirs, b.branch);
    await land([a, b]);
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/merged branches not deleted .*Cannot delete branch '.*' checked out at/s)]);
    expect(git(repo, 'branch', '--list', a.branch)).toBe('');
    expect(git(repo, 'branch', '--list', b.branch)).toContain(b.branch);
    for (const [car, branchDeleted] of [[a, true], [b, false]] as const) {
      const events = (await s.events.list({ taskId: car.task.id, type: 'git.cleanup' })).events;
      expect(events.map((e) => e.payload)).toEqual([{ worktree: car.path, branch: car.branch, branchDeleted }]);
    }
  });

  it('a worktree that cannot be removed (locked) is told and keeps its branch; the others are cleaned', async () => {
    const { repo, cars, errors, land, s } = await setup(['a', 'b']);
    const [a, b] = cars as [(typeof cars)[0], (typeof cars)[0]];
    git(repo, 'worktree', 'lock', a.path);
    const calls = await land([a, b]);
    expect(calls.slice(0, 2)).toEqual([`worktree remove --force ${a.path}`, `branch -D ${b.branch}`]);
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/locked/)]);
    expect(existsSync(a.path)).toBe(true);
    expect(git(repo, 'branch', '--list', a.branch)).toContain(a.branch);
    expect((await s.events.list({ taskId: a.task.id, type: 'git.cleanup' })).events).toEqual([]);
    expect(existsSync(b.path)).toBe(false);
    expect(git(repo, 'branch', '--list', b.branch)).toBe('');
  });
});
