/**
 * The diff of a task on a shared remote that another daemon ran: this daemon's clone has not fetched its
 * branch (or holds an older attempt of it), and the person at the gate must still see the version they
 * approve, fetched from the remote, never NO_DIFF and never the older attempt.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/types.js';
import { observeGit } from '../../src/git/git.js';
import type { Store } from '../../src/store/store.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { bareRemote, git } from '../helpers/repo.js';

interface Diff {
  head: string;
  files: { path: string }[];
}

/** What another daemon did: the task's branch, made from main in its own clone with `files`, pushed; returns the commit. */
function pushedElsewhere(remote: string, branch: string, files: Record<string, string>): string {
  const other = join(tempDir('maestro-other-'), 'clone');
  git(join(other, '..'), 'clone', '-q', remote, other);
  git(other, 'checkout', '-q', '-B', branch, 'origin/main');
  for (const [path, content] of Object.entries(files)) writeFileSync(join(other, path), content);
  git(other, 'add', '-A');
  git(other, 'commit', '-q', '-m', `work on ${branch}`);
  git(other, 'push', '-q', '--force', 'origin', branch);
  return git(other, 'rev-parse', 'HEAD');
}

/** The task at exec_review, its result naming the branch and commit the other daemon's run recorded. */
async function atReview(store: Store, task: Task, branch: string, commitSha: string): Promise<void> {
  for (const to of ['queued', 'executing', 'reviewing'] as const) await store.tasks.transition(task.id, to);
  await store.tasks.transition(task.id, 'exec_review', { fields: { result: { kind: 'review', branch, commitSha } } });
}

describe('the diff of work another daemon ran on a shared remote', () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop({ graceMs: 2000 });
    d = null;
    removeTempDirs();
  });

  /** A daemon (no orchestrator: nothing runs here) with a project on a shared remote, its clone made, and a task. */
  async function sharedTask(title: string) {
    const remote = bareRemote(tempDir('maestro-remote-'));
    const daemon = await startTestDaemon({}, { noOrchestrator: true });
    d = daemon;
    const project = await daemon.store.projects.create({ name: 'shared', repoPath: remote, config: { remote } });
    const clone = await daemon.orchestrator.repos.prepare(project);
    const task = await daemon.store.tasks.create({ projectId: project.id, title, complexity: 'easy' });
    const diff = () => daemon.app.inject({ method: 'GET', url: `/api/tasks/${task.id}/diff` });
    return { remote, clone, task, diff };
  }

  it('is fetched from the remote when this clone lacks it, and shows the attempt the result names, not an older one this clone holds', async () => {
    const { remote, clone, task, diff } = await sharedTask('Ran elsewhere');
    const branch = `maestro/${task.id}-v1`;
    const diffOf = async () => (await diff()).json() as Diff;

    const first = pushedElsewhere(remote, branch, { 'first.txt': 'first attempt\n' });
    await atReview(d!.store, task, branch, first);
    expect(git(clone, 'branch', '--list', branch)).toBe('');
    expect(await diffOf()).toMatchObject({ head: first, files: [{ path: 'first.txt' }] });

    // This clone now holds the first attempt; the other daemon retried the task and pushed a second.
    git(clone, 'branch', '-f', branch, first);
    const second = pushedElsewhere(remote, branch, { 'second.txt': 'second attempt\n' });
    await d!.store.tasks.transition(task.id, 'executing', { fields: { result: null } });
    await d!.store.tasks.transition(task.id, 'reviewing');
    await d!.store.tasks.transition(task.id, 'exec_review', { fields: { result: { kind: 'review', branch, commitSha: second } } });
    expect(await diffOf()).toMatchObject({ head: second, files: [{ path: 'second.txt' }] });
  });

  it('of a task that never ran fetches nothing: NO_DIFF at once, saying it has no branch yet', async () => {
    const { diff } = await sharedTask('Not yet');
    const calls: string[] = [];
    const unobserve = observeGit((c) => calls.push(c.args[0]!));
    const res = await diff();
    unobserve();
    expect(res.json()).toMatchObject({ error: { code: 'NO_DIFF', message: expect.stringContaining('it has no branch yet') } });
    expect(calls).not.toContain('fetch');
  });

  it('is NO_DIFF naming the remote when the branch is on neither', async () => {
    const { remote, task, diff } = await sharedTask('Gone');
    await atReview(d!.store, task, `maestro/${task.id}-v1`, 'f'.repeat(40));
    const res = await diff();
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ error: { code: 'NO_DIFF', message: expect.stringContaining(`nor on the remote ${remote}`) } });
  });
});
