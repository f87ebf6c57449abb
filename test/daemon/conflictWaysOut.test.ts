/**
 * The ways out of a merge conflict left to a person, end to end: a real daemon, real git, the scripted agent in
 * real workers. The on:conflict hook asks for a person, so the task is parked at needs_attention (MERGE_CONFLICT)
 * as it is when its conflict runs are used up; a plain retry met the same conflict again and `task reject` was
 * refused (a trial's dead end). Resolving it by hand on the branch then retrying with that commit merges it with no
 * conflict run; retrying fresh runs the task again from the current main as its next version; cancelling ends it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { git, makeRepo } from '../helpers/repo.js';
import { until, untilStatus } from '../helpers/wait.js';
import { resolveByHandCommands } from '../../src/core/mergeConflictWays.js';

const SCRIPT = `steps:
  - match: { role: execute }
    actions:
      - write: { path: keep.txt, content: "the task's version\\n" }
  - match: { role: review }
    actions:
      - verdict: { verdict: approve, findings: [] }
`;
/** A conflict run that leaves git's markers where they are: it fails, leaving its worktree mid-merge. */
const MARKERS_LEFT = `${SCRIPT}  - match: { role: conflict }
    actions:
      - text: "I could not decide."
`;
const MANUAL = "export const decide = () => 'manual';\nexport { decide as 'on:conflict' };\n";

interface Detail {
  task: { id: string; status: string; version: number; lastRunError: string | null };
  mergeConflict: { branch: string; baseBranch: string; remote: string | null; worktree: string | null; midMerge: boolean; files: string[]; conflictRuns: number } | null;
}

describe('a merge conflict left to a person', () => {
  let daemon: TestDaemon | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 2000 });
    daemon = null;
    removeTempDirs();
  });

  /** A task on keep.txt approved, a person's commit to the same line on main first, and the hook asking for a person. */
  async function parkedByConflict(how: 'hook' | 'conflict run' = 'hook') {
    const repo = makeRepo({ 'keep.txt': 'original\n', ...(how === 'hook' ? { '.maestro/hooks.mjs': MANUAL } : {}) });
    const script = join(tempDir('maestro-script-'), 'script.yaml');
    writeFileSync(script, how === 'hook' ? SCRIPT : MARKERS_LEFT);
    const d = (daemon = await startTestDaemon({ tickMs: 100 }));
    const project = await d.store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script } } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Change keep', complexity: 'easy', ownedFiles: ['keep.txt'] });
    d.orchestrator.kick();
    await untilStatus(d, task.id, 'exec_review', ['needs_attention', 'done']);
    writeFileSync(join(repo, 'keep.txt'), "the person's version\n");
    git(repo, 'commit', '-qam', 'a person edits keep.txt');
    expect((await daemonRequest(d, 'POST', `/api/tasks/${task.id}/approve`, { who: 'ada' })).status).toBe(200);
    d.orchestrator.kick();
    await untilStatus(d, task.id, 'needs_attention', ['done', 'exec_review']);
    const detail = (await daemonRequest<Detail>(d, 'GET', `/api/tasks/${task.id}`)).body;
    return { d, repo, task, detail };
  }

  it('names the branch, its worktree and the files; a resolution by hand, retried with its commit, merges with no conflict run', async () => {
    const { d, repo, task, detail } = await parkedByConflict();
    expect(detail.task.lastRunError).toMatch(/^MERGE_CONFLICT: the on:conflict hook asks for a person: /);
    const branch = `maestro/${task.id}-v1`;
    expect(detail.mergeConflict).toEqual({
      branch, baseBranch: 'main', remote: null, worktree: join(d.config.home, 'worktrees', task.projectId, `${task.id}-v1`), midMerge: false, files: ['keep.txt'], conflictRuns: 0,
    });
    const worktree = detail.mergeConflict!.worktree!;

    // A commit the branch is not at is refused, and nothing changes.
    const wrong = await daemonRequest<{ error: { code: string; message: string } }>(d, 'POST', `/api/tasks/${task.id}/retry`, { commit: git(repo, 'rev-parse', 'main') });
    expect([wrong.status, wrong.body.error.code]).toEqual([400, 'BAD_INPUT']);
    expect((await d.store.tasks.get(task.id)).status).toBe('needs_attention');

    // The person merges main into the branch in its worktree, as task show says, and commits.
    expect(() => git(worktree, 'merge', 'main')).toThrow();
    writeFileSync(join(worktree, 'keep.txt'), 'resolved by hand\n');
    git(worktree, 'add', 'keep.txt');
    git(worktree, 'commit', '--no-edit');
    const resolution = git(worktree, 'rev-parse', 'HEAD');

    const retried = await daemonRequest<{ task: { status: string } }>(d, 'POST', `/api/tasks/${task.id}/retry`, { commit: resolution, who: 'ada' });
    expect([retried.status, retried.body.task.status]).toEqual([200, 'merging']);
    d.orchestrator.kick();
    await until(d.bus, async () => {
      const t = await d.store.tasks.get(task.id);
      if (t.status === 'needs_attention') return Promise.reject(new Error(`parked again: ${t.lastRunError}`));
      return t.status === 'done';
    }, 'done');
    expect(readFileSync(join(repo, 'keep.txt'), 'utf8')).toBe('resolved by hand\n');
    git(repo, 'merge-base', '--is-ancestor', resolution, 'main');
    expect((await d.store.runs.list({ taskId: task.id })).map((r) => r.kind)).toEqual(['execute', 'review']);
    const merges = await d.store.db.all<{ task_id: string }>(`SELECT task_id FROM merges WHERE task_id = $1`, [task.id]);
    expect(merges).toHaveLength(1);
    const statuses = (await d.store.events.list({ taskId: task.id, type: 'task.status', limit: 100 })).events.map((e) => e.payload);
    expect(statuses).toContainEqual({ from: 'needs_attention', to: 'merging', reason: 'retry the merge with the conflict resolved by hand', commit: resolution, who: 'ada' });
  });

  it('after a conflict run that left its worktree mid-merge, the commands task show prints resolve it by hand', async () => {
    const { d, repo, task, detail } = await parkedByConflict('conflict run');
    expect(detail.task.lastRunError).toBe('MERGE_CONFLICT: conflict markers remain in keep.txt');
    expect([detail.mergeConflict?.conflictRuns, detail.mergeConflict?.midMerge]).toEqual([1, true]);
    const ways = resolveByHandCommands(task.id, detail.mergeConflict!);
    const sh = (lines: string[]) => execFileSync('sh', ['-ec', lines.join('\n')], { encoding: 'utf8', stdio: 'pipe', env: { ...process.env, GIT_AUTHOR_NAME: 'Ada', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'Ada', GIT_COMMITTER_EMAIL: 'a@example.com' } });
    // The merge block ends at git's conflict (exit 1, CONFLICT named), not at "Merging is not possible" (128).
    const merge = (() => {
      try {
        return { status: 0, out: sh(ways.merge) };
      } catch (err) {
        const e = err as { status: number; stdout: string; stderr: string };
        return { status: e.status, out: e.stdout + e.stderr };
      }
    })();
    expect(merge.status, merge.out).toBe(1);
    expect(merge.out).toContain('CONFLICT (content): Merge conflict in keep.txt');
    const worktree = detail.mergeConflict!.worktree!;
    writeFileSync(join(worktree, 'keep.txt'), 'resolved by hand\n');
    const resolution = sh([`cd ${worktree}`, ...ways.commit]).trim().split('\n').at(-1)!;
    expect((await daemonRequest(d, 'POST', `/api/tasks/${task.id}/retry`, { commit: resolution, who: 'ada' })).status).toBe(200);
    d.orchestrator.kick();
    await untilStatus(d, task.id, 'done', ['needs_attention']);
    expect(readFileSync(join(repo, 'keep.txt'), 'utf8')).toBe('resolved by hand\n');
  });

  it('retried fresh, runs again as its next version from the current main, and merges once approved', async () => {
    const { d, repo, task } = await parkedByConflict();
    const personMain = git(repo, 'rev-parse', 'main');
    const retried = await daemonRequest<{ task: { id: string; status: string; version: number; parentVersionId: string | null } }>(d, 'POST', `/api/tasks/${task.id}/retry`, { fresh: true, who: 'ada' });
    expect(retried.status).toBe(200);
    const next = retried.body.task;
    expect([next.status, next.version, next.parentVersionId]).toEqual(['ready', 2, task.id]);
    expect((await d.store.tasks.get(task.id)).status).toBe('superseded');
    const statuses = (await d.store.events.list({ taskId: task.id, type: 'task.status', limit: 100 })).events.map((e) => e.payload);
    expect(statuses.at(-1)).toEqual({ from: 'needs_attention', to: 'superseded', reason: 'retry from the current main', who: 'ada', nextVersion: next.id });

    d.orchestrator.kick();
    await untilStatus(d, next.id, 'exec_review', ['needs_attention', 'done']);
    // Its branch starts from main as it was at the retry: the person's commit is in it, so nothing conflicts.
    git(repo, 'merge-base', '--is-ancestor', personMain, `maestro/${next.id}-v2`);
    expect((await daemonRequest(d, 'POST', `/api/tasks/${next.id}/approve`, { who: 'ada' })).status).toBe(200);
    d.orchestrator.kick();
    await untilStatus(d, next.id, 'done', ['needs_attention']);
    expect(readFileSync(join(repo, 'keep.txt'), 'utf8')).toBe("the task's version\n");
    expect((await d.store.runs.list({ taskId: next.id })).map((r) => r.kind)).toEqual(['execute', 'review']);
    // The old version never merged; a fresh retry of a task that is not parked is refused.
    expect(await d.store.db.all(`SELECT task_id FROM merges WHERE task_id = $1`, [task.id])).toEqual([]);
    expect((await daemonRequest(d, 'POST', `/api/tasks/${task.id}/retry`, { fresh: true })).status).toBe(409);
  });

  it('cancelled, is over, and its detail names no way out', async () => {
    const { d, task, detail } = await parkedByConflict();
    expect(detail.mergeConflict?.files).toEqual(['keep.txt']);
    expect((await daemonRequest(d, 'POST', `/api/tasks/${task.id}/cancel`, { who: 'ada' })).status).toBe(200);
    const after = (await daemonRequest<Detail>(d, 'GET', `/api/tasks/${task.id}`)).body;
    expect([after.task.status, after.mergeConflict]).toEqual(['cancelled', null]);
  });
});
