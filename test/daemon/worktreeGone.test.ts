/**
 * A task's worktree deleted while its execute run works in it, end to end: a real daemon, real git, the
 * scripted agent in a real worker. The run stops before committing, saying the worktree was removed and
 * that `task retry` makes it again; the retry does, on the task's branch, and the task reaches review.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { git, makeRepo } from '../helpers/repo.js';
import { until } from '../helpers/wait.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

describe('a worktree deleted under a run', () => {
  let daemon: TestDaemon | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 2000 });
    daemon = null;
    removeTempDirs();
  });

  it('stops the run with what happened and what to do, and a retry makes the worktree again on its branch', async () => {
    const repo = makeRepo();
    daemon = await startTestDaemon({ tickMs: 100 });
    const { store, bus } = daemon;
    const project = await store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script: fixture('late-write.yaml') } } });
    const task = await store.tasks.create({ projectId: project.id, title: 'Late write', complexity: 'easy', ownedFiles: ['src/late.ts'] });
    const worktree = join(daemon.config.home, 'worktrees', project.id, `${task.id}-v1`);
    daemon.orchestrator.kick();

    await until(bus, async () => (await store.events.list({ taskId: task.id, type: 'run.phase', limit: 1000 })).events.some((e) => e.payload.stage === 'agent' && e.payload.state === 'start'), 'the agent stage to start');
    rmSync(worktree, { recursive: true, force: true });
    const stuck = await until(bus, async () => {
      const t = await store.tasks.get(task.id);
      return t.status === 'needs_attention' ? t : null;
    }, 'needs_attention');
    expect(stuck.lastRunError).toContain(`WORKTREE_GONE: the worktree ${worktree} of task ${task.id} was removed while the run was working`);
    expect(stuck.lastRunError).toContain(`run \`maestro task retry ${task.id}\`: it makes the worktree again on maestro/${task.id}-v1`);
    // The agent's write made a plain folder there; nothing was committed from it, to this repository or another.
    expect(existsSync(join(worktree, 'src', 'late.ts'))).toBe(true);
    expect(existsSync(join(worktree, '.git'))).toBe(false);
    expect(git(repo, 'rev-list', '--count', `main..maestro/${task.id}-v1`)).toBe('0');

    // As `maestro task retry` asks.
    const retried = await daemonRequest<{ task: { status: string } }>(daemon, 'POST', `/api/tasks/${task.id}/retry`);
    expect(retried).toMatchObject({ status: 200, body: { task: { status: 'ready' } } });
    daemon.orchestrator.kick();
    const atGate = await until(bus, async () => {
      const t = await store.tasks.get(task.id);
      return t.status === 'exec_review' ? t : t.status === 'needs_attention' && t.attempt > stuck.attempt ? Promise.reject(new Error(`needs attention again: ${t.lastRunError}`)) : null;
    }, 'exec_review after the retry');
    expect(atGate.result).toMatchObject({ verdict: 'approve', branch: `maestro/${task.id}-v1` });
    // A worktree again, on the task's branch, with the retry's commit; the folder that stood there kept beside it.
    expect(git(worktree, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe(`maestro/${task.id}-v1`);
    expect(git(repo, 'show', `maestro/${task.id}-v1:src/late.ts`)).toBe('export const late = true;');
    const aside = readdirSync(join(daemon.config.home, 'worktrees', project.id)).filter((n) => n.startsWith(`${task.id}-v1.broken-`));
    expect(aside).toHaveLength(1);
    expect(readFileSync(join(daemon.config.home, 'worktrees', project.id, aside[0]!, 'src', 'late.ts'), 'utf8')).toBe('export const late = true;\n');
    const recreated = (await store.events.list({ taskId: task.id, type: 'run.phase', limit: 1000 })).events.find((e) => e.payload.stage === 'worktree-recreated');
    expect(recreated?.payload).toMatchObject({ state: 'done' });
  });
});
