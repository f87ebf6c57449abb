/**
 * A knowledge write the daemon's API makes (a review's promote or resolve) while a person's `maestro knowledge …`
 * holds the project's `.workflow` lock: the daemon awaits the folder's lock (format/lock.ts withWorkflowLockAsync)
 * and answers its other requests meanwhile, where the operation's own synchronous lock froze the API, WebSocket
 * and scheduler for up to the lock's 10 s budget. Once the other process lets go, the write answers as it would have.
 */
import { readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { budget } from '../helpers/budget.js';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { SPEC_FILE } from '../helpers/knowledge2.js';
import { lockHolder } from '../helpers/lockHolder.js';
import { makeRepo } from '../helpers/repo.js';
import { poll } from '../helpers/wait.js';
import { namespaceLockPath } from '../../src/knowledge/format/lock.js';
import { resolveWorkflowRoot, type WorkflowRoot } from '../../src/knowledge/format/root.js';
import { stage } from '../../src/knowledge/lifecycle/session/ops.js';
import { createSession } from '../../src/knowledge/lifecycle/session/store.js';

/**
 * Whether this process (the daemon runs in the test's) has the folder's kernel lock file open: a taker that awaits its
 * tries keeps its connection open between them. Seen only while the loop turns, so never while a taker blocks.
 */
function tryingForLock(lockFile: string): boolean {
  const real = realpathSync(lockFile); // as the kernel names an open file
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === real) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}

describe("the daemon's knowledge writes while another process holds the project's .workflow lock", { timeout: budget(90_000) }, () => {
  let d: TestDaemon;
  let root: WorkflowRoot;
  let projectId: string;
  let candidate: string;
  beforeEach(async () => {
    d = await startTestDaemon({}, { noOrchestrator: true });
    const repo = makeRepo({ 'README.md': '# test\n', '.workflow/specs/coding-conventions.md': SPEC_FILE });
    projectId = (await d.store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script: '/nonexistent.yaml' } } })).id;
    root = resolveWorkflowRoot({ workflowRoot: repo, env: process.env });
    createSession(root, 'task-1', 'teach the board');
    candidate = stage(root, { target: 'knowhow', title: 'Queues drain before shutdown', content: 'Every queue is drained before the process shuts down, then the process exits.', category: 'coding', session: 'task-1', evidence: ['src/queue.ts:12'] }, process.env).candidate.candidate_id;
  });
  afterEach(async () => {
    await d.stop();
    removeTempDirs();
  });

  /**
   * Sends `path`'s POST while a child holds the project's `.workflow` lock; once the daemon is seen waiting for it, asks
   * GET /api/health, and lets the child go only once that is answered. The POST's answer, and what came first.
   */
  async function postWhileHeld(path: string, body: object) {
    const other = await lockHolder(['hold', join(root.workflowDir, 'sessions', '.session-store')]);
    try {
      const post = d.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (r) => ({ status: r.status, body: await r.json() }));
      const answered = post.then((r) => ({ answered: r }));
      // The daemon trying for the lock, its loop turning; a daemon that blocked has answered the POST (a lock timeout) by then.
      const waiting = poll(() => tryingForLock(namespaceLockPath(join(root.workflowDir, 'x'))) && ('waiting' as const), 'the daemon to try for the .workflow lock', 30_000);
      expect(await Promise.race([waiting, answered])).toBe('waiting');
      const health = d.fetch('/api/health').then(async (r) => ({ health: r.status }));
      expect(await Promise.race([health, answered])).toEqual({ health: 200 }); // answered while the child still holds the lock
      expect(await other.release()).toMatchObject({ code: 0, stdout: 'HELD\nRELEASED\n' });
      return await post;
    } finally {
      await other.release();
    }
  }

  it('a refresh and then a promotion each wait for the lock with the API answering, then do their work', async () => {
    const refreshed = await postWhileHeld(`/api/knowledge/review/task-1/reconcile?projectId=${projectId}`, {});
    expect(refreshed).toMatchObject({ status: 200, body: { candidates: [{ candidate_id: candidate, receipt: 'fresh' }] } });
    const r = await postWhileHeld(`/api/knowledge/review/task-1/promote?projectId=${projectId}`, { candidates: [candidate] });
    expect(r).toMatchObject({ status: 200, body: { promoted: [{ candidate_id: candidate }] } });
  });

  it('a resolution waits for the lock with the API answering, then resolves', async () => {
    const r = await postWhileHeld(`/api/knowledge/review/task-1/resolve?projectId=${projectId}`, { candidate, as: 'unique', reason: 'nothing like it', refresh: true });
    expect(r).toMatchObject({ status: 200, body: { resolution: { candidate_id: candidate, disposition: 'unique' } } });
  });
});
