/**
 * A project's checkout locked by git (its .git/index.lock left by a git that crashed; one at work there holds it for
 * a moment, and the merge waits for that: src/daemon/mergeCoordinator.test.ts), end to end: a real daemon, real git, the scripted agent in real workers. Git refuses the merge with
 * exit 1, as for a conflict; that is no conflict, and a conflict run (model calls) could not clear it. The task
 * detail says so before the approval; after it the task waits for the person, naming the lock file and what to
 * do; once the file is gone, `task retry` merges.
 */
import { readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LOCK_WAIT_MS } from '../../src/daemon/mergeLock.js';
import { cliFor } from '../cli/helpers.js';
import { removeTempDirs } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { until, untilStatus } from '../helpers/wait.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

describe('a locked checkout', () => {
  let daemon: TestDaemon | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 2000 });
    daemon = null;
    removeTempDirs();
  });

  it('is said before the approval and parks the merge for the person, naming the lock file, with no conflict run; a retry once it is gone merges', async () => {
    const repo = makeRepo();
    daemon = await startTestDaemon({ tickMs: 100 });
    const d = daemon;
    const { store, bus } = d;
    const project = await store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script: fixture('simple.yaml') } } });
    const task = await store.tasks.create({ projectId: project.id, title: 'Add greeting', complexity: 'easy', ownedFiles: ['src/greet.ts'] });
    d.orchestrator.kick();
    await untilStatus(d, task.id, 'exec_review');

    // Left by a git that crashed: older than a merge waits for a lock to go (a momentary one: src/daemon/mergeLock.ts).
    const lock = join(repo, '.git', 'index.lock');
    writeFileSync(lock, '');
    // Taken just now, it is a git at work (an editor refreshing its view): the merge would wait for it, nothing to say.
    expect((await daemonRequest<{ mergeBlocked: string | null }>(d, 'GET', `/api/tasks/${task.id}`)).body.mergeBlocked).toBeNull();
    const old = new Date(Date.now() - LOCK_WAIT_MS - 60_000);
    utimesSync(lock, old, old);
    const locked = `the main checkout ${repo} is locked: ${lock} exists (a git process is running there, or one that crashed left it), so git cannot write its index: make sure no git process is running in ${repo}, then remove ${lock}`;
    const detail = await daemonRequest<{ mergeBlocked: string | null }>(d, 'GET', `/api/tasks/${task.id}`);
    expect(detail.body.mergeBlocked).toBe(locked);

    const { cli } = cliFor(d.config.home);
    const approved = await cli(['task', 'approve', task.id, '--url', d.url]);
    expect(approved.code).toBe(0);
    expect(approved.stderr).toBe(`maestro: the merge will stop: ${locked}. Then \`maestro task retry ${task.id}\` merges it.\n`);
    d.orchestrator.kick();
    await until(bus, async () => {
      const t = await store.tasks.get(task.id);
      return t.status === 'needs_attention' ? t : t.status === 'done' ? Promise.reject(new Error('merged into a locked checkout')) : null;
    }, 'needs_attention');
    const shown = await cli(['task', 'show', task.id, '--url', d.url]);
    expect(shown.stdout).toContain(`  last error: ${locked}, then run \`maestro task retry ${task.id}\` to merge it\n`);
    const kinds = async () => (await store.runs.list({ taskId: task.id })).map((r) => r.kind);
    expect(await kinds()).toEqual(['execute', 'review']);
    expect((await store.events.list({ taskId: task.id, type: 'merge.conflict' })).events).toEqual([]);

    rmSync(lock);
    const retried = await cli(['task', 'retry', task.id, '--url', d.url]);
    expect(retried.code).toBe(0);
    d.orchestrator.kick();
    await until(bus, async () => (await store.tasks.get(task.id)).status === 'done', 'done after the retry');
    expect(readFileSync(join(repo, 'src', 'greet.ts'), 'utf8')).toBe("export const greet = () => 'hello';\n");
    // The merge was tried again, no agent ran again.
    expect(await kinds()).toEqual(['execute', 'review']);
  });
});
