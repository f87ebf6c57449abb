/**
 * An untracked file in the project's checkout where the approved change adds one, end to end: a real
 * daemon, real git, the scripted agent in real workers. The task detail says so before the approval;
 * after it, git refuses the merge and the task waits for the person (no conflict run, which would cost
 * model calls and could not move the file); once the file is moved, `task retry` merges.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { cliFor } from '../cli/helpers.js';
import { removeTempDirs } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { git, makeRepo } from '../helpers/repo.js';
import { until, untilStatus } from '../helpers/wait.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

describe('an untracked file in the way of a merge', () => {
  let daemon: TestDaemon | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 2000 });
    daemon = null;
    removeTempDirs();
  });

  it('is said before the approval, parks the merge for the person with no conflict run, and a retry after moving it merges', async () => {
    const repo = makeRepo();
    daemon = await startTestDaemon({ tickMs: 100 });
    const d = daemon;
    const { store, bus } = d;
    const project = await store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script: fixture('simple.yaml') } } });
    const task = await store.tasks.create({ projectId: project.id, title: 'Add greeting', complexity: 'easy', ownedFiles: ['src/greet.ts'] });
    d.orchestrator.kick();
    await untilStatus(d, task.id, 'exec_review');

    // The person's notes, untracked, where the change adds its file.
    mkdirSync(join(repo, 'src'));
    writeFileSync(join(repo, 'src', 'greet.ts'), '// my notes\n');
    const detail = await daemonRequest<{ mergeBlocked: string | null }>(d, 'GET', `/api/tasks/${task.id}`);
    expect(detail.body.mergeBlocked).toBe(`the main checkout ${repo} has untracked files (src/greet.ts) that merging maestro/${task.id}-v1 would overwrite: move or remove them`);

    // A commit on its branch after the review (worktrees share the branches): said before the approval too.
    rmSync(join(repo, 'src', 'greet.ts'));
    const reviewed = git(repo, 'rev-parse', `maestro/${task.id}-v1`);
    git(repo, 'update-ref', `refs/heads/maestro/${task.id}-v1`, 'main');
    const moved = await daemonRequest<{ mergeBlocked: string | null }>(d, 'GET', `/api/tasks/${task.id}`);
    expect(moved.body.mergeBlocked).toBe(`maestro/${task.id}-v1 moved after its review (reviewed ${reviewed.slice(0, 12)}, now ${git(repo, 'rev-parse', 'main').slice(0, 12)}): merging it would land commits nobody reviewed, or leave the reviewed work out; look at its commits and put it back on ${reviewed}`);
    git(repo, 'update-ref', `refs/heads/maestro/${task.id}-v1`, reviewed);
    writeFileSync(join(repo, 'src', 'greet.ts'), '// my notes\n');
    expect((await daemonRequest<{ mergeBlocked: string | null }>(d, 'GET', `/api/tasks/${task.id}`)).body.mergeBlocked).toContain('has untracked files (src/greet.ts)');

    // Approved as a person does, who is told again that the merge will stop.
    const approved = await cliFor(d.config.home).cli(['task', 'approve', task.id, '--url', d.url]);
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain(`Approved exec_review of ${task.id}; it is now merging.`);
    expect(approved.stderr).toBe(`maestro: the merge will stop: the main checkout ${repo} has untracked files (src/greet.ts) that merging maestro/${task.id}-v1 would overwrite: move or remove them. Then \`maestro task retry ${task.id}\` merges it.\n`);
    d.orchestrator.kick();
    const parked = await until(bus, async () => {
      const t = await store.tasks.get(task.id);
      return t.status === 'needs_attention' ? t : t.status === 'done' ? Promise.reject(new Error('merged over the untracked file')) : null;
    }, 'needs_attention');
    expect(parked.lastRunError).toBe(`the main checkout ${repo} has untracked files (src/greet.ts) that merging maestro/${task.id}-v1 would overwrite; this merge changed nothing in main: move or remove them, then run \`maestro task retry ${task.id}\` to merge it`);
    expect(readFileSync(join(repo, 'src', 'greet.ts'), 'utf8')).toBe('// my notes\n');
    const kinds = async () => (await store.runs.list({ taskId: task.id })).map((r) => r.kind);
    expect(await kinds()).toEqual(['execute', 'review']);
    expect((await store.events.list({ taskId: task.id, type: 'merge.conflict' })).events).toEqual([]);

    rmSync(join(repo, 'src', 'greet.ts'));
    const retried = await daemonRequest<{ task: { status: string } }>(d, 'POST', `/api/tasks/${task.id}/retry`);
    expect(retried).toMatchObject({ status: 200, body: { task: { status: 'merging' } } });
    d.orchestrator.kick();
    await until(bus, async () => (await store.tasks.get(task.id)).status === 'done', 'done after the retry');
    expect(readFileSync(join(repo, 'src', 'greet.ts'), 'utf8')).toBe("export const greet = () => 'hello';\n");
    // The merge was tried again, no agent ran again.
    expect(await kinds()).toEqual(['execute', 'review']);
  });
});
