/**
 * What a person approves at exec_review is the commit the reviewers reviewed. Worktrees share a repository's
 * branches, so a task's branch can move after its review: the diff showed the moving tip, not what was reviewed
 * (and what the merge takes). A real daemon store and a real git repository; the runs are stood in for by the
 * results they record (a review that approved commit X of the task's branch).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { git } from '../helpers/repo.js';
import { makeTaskBranch, reviewRepo } from '../helpers/reviewRepo.js';

describe('the reviewed commit at exec_review', () => {
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

  const call = async (method: 'GET' | 'POST', url: string, payload?: unknown) => {
    const res = await d.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) });
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : null };
  };

  /** A commit on the task's branch, as another worktree's process would make it. */
  const commitOn = (branch: string, file: string, text: string): string => {
    git(repo, 'checkout', '-q', branch);
    writeFileSync(join(repo, file), text);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', `add ${file}`);
    git(repo, 'checkout', '-q', 'main');
    return git(repo, 'rev-parse', branch);
  };

  /** A task whose review approved its branch's tip: at exec_review, reviewed commit = that tip. */
  const atExecReview = async () => {
    const project = (await call('POST', '/api/projects', { name: 'r', repoPath: repo, config: { provider: { kind: 'scripted', script: '/nonexistent.yaml' } } })).body.project;
    const task = (await call('POST', '/api/tasks', { projectId: project.id, title: 'Change things' })).body.task;
    const branch = makeTaskBranch(repo, task.id);
    const reviewed = git(repo, 'rev-parse', branch);
    for (const s of ['queued', 'executing', 'reviewing'] as const) await d.store.tasks.transition(task.id, s);
    await d.store.tasks.transition(task.id, 'exec_review', { fields: { result: { kind: 'review', verdict: 'approve', next: 'exec_review', branch, commitSha: reviewed } } });
    return { task, branch, reviewed };
  };

  it('the diff is the reviewed commit\'s change, not the tip\'s, and says when the branch moved after the review', async () => {
    const { task, branch, reviewed } = await atExecReview();
    const before = await call('GET', `/api/tasks/${task.id}/diff`);
    expect(before.body).toMatchObject({ head: reviewed, branchMoved: null });

    const tip = commitOn(branch, 'unreviewed.txt', 'nobody looked at this\n');
    const diff = await call('GET', `/api/tasks/${task.id}/diff`);
    expect(diff.status).toBe(200);
    expect(diff.body.head).toBe(reviewed);
    expect(diff.body.files.map((f: { path: string }) => f.path)).not.toContain('unreviewed.txt');
    expect(diff.body.totals.files).toBe(6);
    // In the words of the task detail's mergeBlocked, which says it before the approval too.
    const detail = await call('GET', `/api/tasks/${task.id}`);
    expect(diff.body.branchMoved).toEqual({ reviewed, tip, message: detail.body.mergeBlocked });
    expect(diff.body.branchMoved.message).toBe(`${branch} moved after its review (reviewed ${reviewed.slice(0, 12)}, now ${tip.slice(0, 12)}): merging it would land commits nobody reviewed, or leave the reviewed work out; look at its commits and put it back on ${reviewed}`);
    expect((await call('GET', `/api/tasks/${task.id}/diff?file=unreviewed.txt`)).status).toBe(404);

    // Put back on the reviewed commit, it says nothing more.
    git(repo, 'branch', '-f', branch, reviewed);
    expect((await call('GET', `/api/tasks/${task.id}/diff`)).body).toMatchObject({ head: reviewed, branchMoved: null });
  });

  it('while a run may still move the branch, the diff is the tip\'s: the work so far', async () => {
    const { task, branch } = await atExecReview();
    await d.store.tasks.transition(task.id, 'executing');
    const tip = commitOn(branch, 'more.txt', 'the next round\n');
    expect((await call('GET', `/api/tasks/${task.id}/diff`)).body).toMatchObject({ head: tip, branchMoved: null });
  });
});
