/**
 * A task branch that moves after its review. Agents run commands as the user in worktrees of one repository,
 * which share its branches: another task's agent (or a process an agent left running, or a `git branch -f`)
 * can commit on, reset or rewind a task's branch after its reviewers approved it. The merge took the branch's
 * tip whatever it was: commits nobody reviewed landed in main, and a branch rewound into main was recorded as
 * "already in main", the task done, its branch deleted, the reviewed work never merged.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MergeCoordinator } from '../../src/daemon/mergeCoordinator.js';
import { ProjectRepos } from '../../src/daemon/repos.js';
import type { Project, Task } from '../../src/core/types.js';
import { createStore, type Store } from '../../src/store/store.js';
import { freshSqlite, removeTempDirs, tempDir } from '../helpers/db.js';
import { git, makeRepo } from '../helpers/repo.js';

let store: Store | null = null;
afterEach(async () => {
  await store?.close();
  store = null;
  removeTempDirs();
});

/** A task at merging whose reviewed commit is `maestro/t-a`'s tip now (a.txt added). */
async function reviewed(): Promise<{ s: Store; repo: string; project: Project; task: Task; reviewedSha: string }> {
  store = createStore((await freshSqlite()).db);
  const s = store;
  const repo = makeRepo({ 'README.md': '# own\n' });
  git(repo, 'checkout', '-q', '-b', 'maestro/t-a');
  writeFileSync(join(repo, 'a.txt'), 'reviewed\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'reviewed work');
  git(repo, 'checkout', '-q', 'main');
  const reviewedSha = git(repo, 'rev-parse', 'maestro/t-a');
  const project = await s.projects.create({ name: 'own', repoPath: repo, config: {} });
  const created = await s.tasks.create({ projectId: project.id, title: 'a', complexity: 'easy' });
  for (const to of ['queued', 'executing', 'reviewing', 'exec_review'] as const) await s.tasks.transition(created.id, to);
  await s.tasks.transition(created.id, 'merging', { fields: { result: { kind: 'review', verdict: 'approve', branch: 'maestro/t-a', commitSha: reviewedSha } } });
  return { s, repo, project, task: await s.tasks.get(created.id), reviewedSha };
}

function coordinator(s: Store) {
  const errors: Error[] = [];
  const merges = new MergeCoordinator(s, {
    hooks: {},
    startConflictRun: async () => true,
    runningRun: async () => null,
    repos: new ProjectRepos(tempDir('maestro-home-')),
    owner: 'd1',
    leaseMs: 60_000,
    onChange: () => {},
    onError: (err) => errors.push(err),
  });
  return { merges, errors };
}

describe('a task branch that moved after its review', () => {
  it('is not merged: a commit nobody reviewed does not land in main, and the task needs a person', async () => {
    const { s, repo, task, reviewedSha } = await reviewed();
    const mainBefore = git(repo, 'rev-parse', 'main');
    // Another task's agent commits on this task's branch (the worktrees share the repository's branches).
    const other = join(tempDir('maestro-wt-'), 'other');
    git(repo, 'worktree', 'add', '-q', other, 'maestro/t-a');
    writeFileSync(join(other, 'unreviewed.txt'), 'nobody looked at this\n');
    git(other, 'add', '-A');
    git(other, 'commit', '-q', '-m', 'unreviewed');
    const movedTo = git(repo, 'rev-parse', 'maestro/t-a');

    const { merges, errors } = coordinator(s);
    await merges.tick();
    expect(errors).toEqual([]);
    expect(git(repo, 'rev-parse', 'main')).toBe(mainBefore);
    const after = await s.tasks.get(task.id);
    expect(after.status).toBe('needs_attention');
    expect(after.lastRunError).toContain(reviewedSha.slice(0, 12));
    expect(after.lastRunError).toContain(movedTo.slice(0, 12));
    expect(after.lastRunError).toContain(`maestro task retry ${task.id}`);
    // The branch is kept: it holds the reviewed commit and what was added on top.
    expect(git(repo, 'rev-parse', 'maestro/t-a')).toBe(movedTo);

    // Put back on the reviewed commit and retried, exactly that is merged.
    git(other, 'reset', '-q', '--hard', reviewedSha);
    await s.tasks.retry(task.id, 'needs_attention');
    await merges.tick();
    expect((await s.tasks.get(task.id)).status).toBe('done');
    expect(git(repo, 'ls-tree', '--name-only', 'main')).not.toContain('unreviewed.txt');
    expect(git(repo, 'merge-base', '--is-ancestor', reviewedSha, 'main')).toBe('');
  });

  it('is not recorded as merged when it was rewound into main: the reviewed work is not lost', async () => {
    const { s, repo, task, reviewedSha } = await reviewed();
    git(repo, 'branch', '-f', 'maestro/t-a', 'main');

    const { merges, errors } = coordinator(s);
    await merges.tick();
    expect(errors).toEqual([]);
    expect((await s.tasks.get(task.id)).status).toBe('needs_attention');
    expect(await s.db.all(`SELECT task_id FROM merges`)).toEqual([]);
    expect(git(repo, 'cat-file', '-t', reviewedSha)).toBe('commit');
    expect(git(repo, 'rev-parse', 'maestro/t-a')).toBe(git(repo, 'rev-parse', 'main'));
  });

  it('deleted after its review, needs a person told how to put it back; put back and retried, it merges', async () => {
    const { s, repo, task, reviewedSha } = await reviewed();
    git(repo, 'branch', '-D', 'maestro/t-a');
    const { merges, errors } = coordinator(s);
    await merges.tick();
    expect(errors).toEqual([]);
    const parked = await s.tasks.get(task.id);
    expect(parked.status).toBe('needs_attention');
    const put = `git -C ${repo} branch maestro/t-a ${reviewedSha}`;
    expect(parked.lastRunError).toBe(`maestro/t-a is gone from ${repo} (deleted after its review), so nothing was merged; put it back on the reviewed commit: ${put}, then run \`maestro task retry ${task.id}\` to merge it`);
    // As it says: the command, then the retry.
    execFileSync('sh', ['-c', put]);
    await s.tasks.retry(task.id, 'needs_attention');
    await merges.tick();
    expect((await s.tasks.get(task.id)).status).toBe('done');
    expect(git(repo, 'merge-base', '--is-ancestor', reviewedSha, 'main')).toBe('');
  });

  it('is merged when its tip is still the reviewed commit', async () => {
    const { s, repo, task, reviewedSha } = await reviewed();
    const { merges, errors } = coordinator(s);
    await merges.tick();
    expect(errors).toEqual([]);
    expect((await s.tasks.get(task.id)).status).toBe('done');
    expect(git(repo, 'merge-base', '--is-ancestor', reviewedSha, 'main')).toBe('');
  });
});
