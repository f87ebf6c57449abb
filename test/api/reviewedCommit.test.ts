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
    const project = (await call('POST', '/api/projects', { name: 'r', repoPath: repo, config: { provider: { kind: 'scripted', script: join(repo, 'nonexistent.yaml') } } })).body.project;
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

  it('a branch deleted after its review: the gate says so before the approval, with the command that puts it back', async () => {
    const { task, branch, reviewed } = await atExecReview();
    expect((await call('GET', `/api/tasks/${task.id}`)).body.mergeBlocked).toBeNull();
    git(repo, 'branch', '-D', branch);
    const detail = await call('GET', `/api/tasks/${task.id}`);
    expect(detail.body.mergeBlocked).toBe(`${branch} is gone from ${repo} (deleted after its review); put it back on the reviewed commit: git -C ${repo} branch ${branch} ${reviewed}`);
    git(repo, 'branch', branch, reviewed);
    expect((await call('GET', `/api/tasks/${task.id}`)).body.mergeBlocked).toBeNull();
  });

  it('an approval naming the commit looked at is refused when another was reviewed since: nothing changes', async () => {
    const { task, branch, reviewed: seen } = await atExecReview();
    const shown = (await call('GET', `/api/tasks/${task.id}/diff`)).body.head;
    expect(shown).toBe(seen);
    // Meanwhile the task goes round again (another tab's action, a conflict run): a new commit is reviewed.
    await d.store.tasks.transition(task.id, 'executing');
    const now = commitOn(branch, 'fix.txt', 'the second round\n');
    await d.store.tasks.transition(task.id, 'reviewing');
    await d.store.tasks.transition(task.id, 'exec_review', { fields: { result: { kind: 'review', verdict: 'approve', next: 'exec_review', branch, commitSha: now } } });
    const events = (await d.store.events.list({ taskId: task.id, limit: 1000 })).events.length;

    const stale = await call('POST', `/api/tasks/${task.id}/approve`, { commit: seen, who: 'tab A' });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('STALE_REVIEW');
    expect(stale.body.error.message).toBe(`Nothing was approved: you looked at commit ${seen.slice(0, 12)} of task ${task.id}, but the change waiting at exec_review is commit ${now.slice(0, 12)} now. Look at its diff again, then approve what it shows.`);
    expect(stale.body.error.details).toEqual({ taskId: task.id, commit: seen, reviewed: now });
    const after = await d.store.tasks.get(task.id);
    expect(after.status).toBe('exec_review');
    expect(after.approvals).toEqual([]);
    expect((await d.store.events.list({ taskId: task.id, limit: 1000 })).events.length).toBe(events);

    // Looked at again: the diff is the new commit's, and an approval of it goes through, naming it in its event.
    expect((await call('GET', `/api/tasks/${task.id}/diff`)).body.head).toBe(now);
    const approved = await call('POST', `/api/tasks/${task.id}/approve`, { commit: now, who: 'tab A' });
    expect(approved.status).toBe(200);
    expect(approved.body.task.status).toBe('merging');
    const decided = (await d.store.events.list({ taskId: task.id, type: 'task.status' })).events.find((e) => e.payload.decision === 'approve');
    expect(decided?.payload.commit).toBe(now);
  });

  it('refuses a commit that is not a full sha, and one named at a gate that approves no change', async () => {
    const { task, reviewed } = await atExecReview();
    for (const commit of [reviewed.slice(0, 12), reviewed.toUpperCase(), `${reviewed}0`, 'main', 42]) {
      const bad = await call('POST', `/api/tasks/${task.id}/approve`, { commit });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('BAD_INPUT');
      expect(bad.body.error.message).toMatch(/^Invalid body: commit: /);
    }
    expect((await d.store.tasks.get(task.id)).status).toBe('exec_review');

    const plan = (await call('POST', '/api/tasks', { projectId: task.projectId, title: 'Plan things' })).body.task;
    for (const s of ['queued', 'planning', 'plan_review'] as const) await d.store.tasks.transition(plan.id, s);
    const atPlan = await call('POST', `/api/tasks/${plan.id}/approve`, { commit: reviewed });
    expect(atPlan.status).toBe(400);
    expect(atPlan.body.error).toMatchObject({ code: 'BAD_INPUT', message: 'commit: only an approval at exec_review names a commit (the change\'s); plan_review approves no change, so leave it out.' });
    expect((await d.store.tasks.get(plan.id)).status).toBe('plan_review');
    // Without one, an approval is as before.
    expect((await call('POST', `/api/tasks/${plan.id}/approve`, {})).status).toBe(200);
    expect((await call('POST', `/api/tasks/${task.id}/approve`, {})).body.task.status).toBe('merging');
  });

  it('a result that names no reviewed commit is checked against the head its diff shows', async () => {
    const project = (await call('POST', '/api/projects', { name: 'r', repoPath: repo, config: { provider: { kind: 'scripted', script: join(repo, 'nonexistent.yaml') } } })).body.project;
    const task = (await call('POST', '/api/tasks', { projectId: project.id, title: 'Old result' })).body.task;
    const branch = makeTaskBranch(repo, task.id);
    for (const s of ['queued', 'executing', 'reviewing', 'exec_review'] as const) await d.store.tasks.transition(task.id, s);
    const head = git(repo, 'rev-parse', branch);
    const other = 'f'.repeat(40);
    expect((await call('POST', `/api/tasks/${task.id}/approve`, { commit: other })).body.error).toMatchObject({ code: 'STALE_REVIEW', details: { commit: other, reviewed: head } });
    expect((await call('POST', `/api/tasks/${task.id}/approve`, { commit: head })).body.task.status).toBe('merging');
  });

  it('while a run may still move the branch, the diff is the tip\'s: the work so far', async () => {
    const { task, branch } = await atExecReview();
    await d.store.tasks.transition(task.id, 'executing');
    const tip = commitOn(branch, 'more.txt', 'the next round\n');
    expect((await call('GET', `/api/tasks/${task.id}/diff`)).body).toMatchObject({ head: tip, branchMoved: null });
  });

  it('checked together with other changes, a task waiting to land shows its own change, not the chain\'s', async () => {
    const { task, branch, reviewed } = await atExecReview();
    // The batch's chain (daemon/mergeBatch.ts): from main, this task's commit merged, then a rider's; the branch holds its tip.
    const base = git(repo, 'rev-parse', 'main');
    git(repo, 'checkout', '-q', '-b', 'rider', base);
    writeFileSync(join(repo, 'rider.txt'), 'another task\'s change\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'rider');
    const rider = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'checkout', '-q', '--detach', base);
    git(repo, 'merge', '-q', '--no-ff', '-m', 'merge the task', reviewed);
    const own = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'merge', '-q', '--no-ff', '-m', 'merge the rider', rider);
    const tip = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'checkout', '-q', 'main');
    git(repo, 'branch', '-f', branch, tip);
    const cars = [{ taskId: task.id, commit: reviewed, sha: own }, { taskId: 'rider-task', commit: rider, sha: tip }];
    const result = (await d.store.tasks.get(task.id)).result!;
    const mergeChecked = { approved: reviewed, commitSha: tip, rounds: 1, batch: { from: reviewed, before: null, base, cars } };
    await d.store.tasks.transition(task.id, 'merging', { fields: { result: { ...result, mergeChecked } } });

    const diff = await call('GET', `/api/tasks/${task.id}/diff`);
    expect(diff.status).toBe(200);
    expect(diff.body).toMatchObject({ head: own, base, branchMoved: null });
    expect(diff.body.files.map((f: { path: string }) => f.path)).not.toContain('rider.txt');
    expect(diff.body.totals.files).toBe(6);
  });
});
