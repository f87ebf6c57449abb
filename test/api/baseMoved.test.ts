/**
 * The task detail's baseMoved at exec_review: how many commits the base branch gained that the task's branch lacks,
 * counted by the daemon with real git, and which of the two is missing when one is gone (said, not a failure). A real
 * daemon store and repository; the runs are stood in for by the result they record.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { bareRemote, git } from '../helpers/repo.js';
import { tempDir } from '../helpers/db.js';
import { makeTaskBranch, reviewRepo } from '../helpers/reviewRepo.js';
import { cliFor } from '../cli/helpers.js';

describe("the task detail's baseMoved", () => {
  let d: TestDaemon;
  let repo: string;
  beforeEach(async () => {
    d = await startTestDaemon({}, { noOrchestrator: true });
    repo = reviewRepo();
  });
  afterEach(async () => {
    await d.stop();
    removeTempDirs();
  });

  const detail = async (id: string) => {
    const res = await d.app.inject({ method: 'GET', url: `/api/tasks/${id}` });
    expect(res.statusCode).toBe(200);
    return JSON.parse(res.body) as { baseMoved: unknown; baseBranch: string };
  };
  const commitOnMain = (file: string) => {
    writeFileSync(join(repo, file), `${file}\n`);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', `add ${file}`);
  };

  const atExecReview = async (config: Record<string, unknown> = {}) => {
    const project = await d.store.projects.create({ name: 'b', repoPath: repo, config: { provider: { kind: 'scripted', script: join(repo, 'none.yaml') }, ...config } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Change things' });
    const branch = makeTaskBranch(repo, task.id);
    const commitSha = git(repo, 'rev-parse', branch);
    expect((await detail(task.id)).baseMoved).toBeNull(); // ready: nothing to count
    for (const s of ['queued', 'executing', 'reviewing'] as const) await d.store.tasks.transition(task.id, s);
    await d.store.tasks.transition(task.id, 'exec_review', { fields: { result: { kind: 'review', verdict: 'approve', next: 'exec_review', branch, commitSha } } });
    return { task, branch };
  };

  it('counts the commits main gained since the branch was cut, and names a missing branch or base', async () => {
    const { task, branch } = await atExecReview();
    expect((await detail(task.id)).baseMoved).toEqual({ state: 'counted', base: 'main', branch, commits: 0, mergeStrategy: 'merge', checks: 0 });

    commitOnMain('one.txt');
    commitOnMain('two.txt');
    expect((await detail(task.id)).baseMoved).toEqual({ state: 'counted', base: 'main', branch, commits: 2, mergeStrategy: 'merge', checks: 0 });

    // The branch takes main in: up to date again, whatever it had before.
    git(repo, 'checkout', '-q', branch);
    git(repo, 'merge', '-q', '--no-edit', 'main');
    git(repo, 'checkout', '-q', 'main');
    expect((await detail(task.id)).baseMoved).toMatchObject({ state: 'counted', commits: 0 });

    git(repo, 'branch', '-D', branch);
    expect((await detail(task.id)).baseMoved).toEqual({ state: 'missing', base: 'main', branch, missing: 'branch' });
  });

  it('maestro task show says it beside the gate, with what an approval does then', async () => {
    const { task, branch } = await atExecReview();
    const { cli } = cliFor(d.config.home);
    const show = async () => {
      const r = await cli(['task', 'show', task.id, '--url', d.url]);
      expect(r.code).toBe(0);
      return r.stdout;
    };
    expect(await show()).toContain(`The base branch main has no new commit since this branch was cut: up to date.\n\nIt waits for you at exec_review`);
    commitOnMain('one.txt');
    commitOnMain('two.txt');
    expect(await show()).toContain('The base branch main has 2 new commits since this branch was cut: an approval merges the branch onto main as it is now (the project has no checks to run on the result;');
    // With checks: they run on the merged tree first (the merge queue), and only a result they pass lands.
    mkdirSync(join(repo, '.maestro'), { recursive: true });
    writeFileSync(join(repo, '.maestro', 'config.json'), JSON.stringify({ checks: [{ name: 'test', command: 'true' }] }));
    git(repo, 'add', '.maestro');
    git(repo, 'commit', '-q', '-m', 'checks');
    expect(await show()).toContain("The base branch main has 3 new commits since this branch was cut: after an approval the project's checks run on the branch merged with main as it is now, and only that checked result lands; if they fail, nothing lands and the task needs attention");
    git(repo, 'branch', '-D', branch);
    expect(await show()).toContain(`The task's branch ${branch} is not in the repository: the commits main gained since it was cut cannot be counted.`);
  });

  it('a base branch that does not exist is said, with the strategy the merge will use when both are there', async () => {
    const { task, branch } = await atExecReview({ baseBranch: 'trunk' });
    expect((await detail(task.id)).baseMoved).toEqual({ state: 'missing', base: 'trunk', branch, missing: 'base' });
    git(repo, 'branch', '-D', branch);
    expect((await detail(task.id)).baseMoved).toEqual({ state: 'missing', base: 'trunk', branch, missing: 'both' });

    // Both back, the project's checkout on trunk with a fast-forward-only merge: one commit on trunk the branch lacks.
    git(repo, 'branch', branch, 'main');
    git(repo, 'checkout', '-q', '-b', 'trunk');
    mkdirSync(join(repo, '.maestro'), { recursive: true });
    writeFileSync(join(repo, '.maestro', 'config.json'), JSON.stringify({ mergeStrategy: 'ff-only' }));
    commitOnMain('on-trunk.txt');
    expect((await detail(task.id)).baseMoved).toEqual({ state: 'counted', base: 'trunk', branch, commits: 1, mergeStrategy: 'ff-only', checks: 0 });
  });

  it("on a shared remote, counts in this daemon's clone as its last fetch left the remote's branches", async () => {
    const remote = bareRemote(tempDir('maestro-remote-'));
    const project = await d.store.projects.create({ name: 'shared', repoPath: remote, config: { remote } });
    const clone = await d.orchestrator.repos.prepare(project);
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Ran elsewhere' });
    const branch = `maestro/${task.id}-v1`;
    // Another daemon's clone: the task's branch pushed, then a commit on main.
    const other = join(tempDir('maestro-other-'), 'clone');
    git(join(other, '..'), 'clone', '-q', remote, other);
    git(other, 'checkout', '-q', '-b', branch);
    writeFileSync(join(other, 'work.txt'), 'work\n');
    git(other, 'add', '-A');
    git(other, 'commit', '-q', '-m', 'work');
    git(other, 'push', '-q', 'origin', branch);
    for (const s of ['queued', 'executing', 'reviewing'] as const) await d.store.tasks.transition(task.id, s);
    await d.store.tasks.transition(task.id, 'exec_review', { fields: { result: { kind: 'review', branch, commitSha: git(other, 'rev-parse', 'HEAD') } } });
    // Not fetched here yet: said, not an error.
    expect((await detail(task.id)).baseMoved).toEqual({ state: 'missing', base: 'main', branch, missing: 'branch' });
    git(clone, 'fetch', '-q', 'origin');
    expect((await detail(task.id)).baseMoved).toMatchObject({ state: 'counted', commits: 0 });
    git(other, 'checkout', '-q', 'main');
    writeFileSync(join(other, 'main.txt'), 'on main\n');
    git(other, 'add', '-A');
    git(other, 'commit', '-q', '-m', 'on main');
    git(other, 'push', '-q', 'origin', 'main');
    git(clone, 'fetch', '-q', 'origin');
    expect((await detail(task.id)).baseMoved).toMatchObject({ state: 'counted', base: 'main', branch, commits: 1 });
  });
});
