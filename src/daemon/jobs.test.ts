import { afterEach, describe, expect, it } from 'vitest';
import { freshSqlite, removeTempDirs } from '../../test/helpers/db.js';
import { createStore, type Store } from '../store/store.js';
import { buildJob } from './jobs.js';
import { parseJob } from '../executor/protocol/job.js';

let store: Store | null = null;
afterEach(async () => {
  await store?.close();
  store = null;
  removeTempDirs();
});

describe('buildJob', () => {
  it('counts review rounds since the last retry by a person: a retry after the rounds ran out gives a fresh set', async () => {
    const s = (store = createStore((await freshSqlite()).db));
    const project = await s.projects.create({ name: 'p', repoPath: '/r', config: { provider: { kind: 'scripted', script: '/s.yaml' } } });
    let task = await s.tasks.create({ projectId: project.id, title: 't', complexity: 'easy' });
    task = await s.tasks.claim(task.id, 'd1', 60_000).then(() => s.tasks.get(task.id));
    for (let i = 0; i < 3; i++) {
      const r = await s.runs.create({ taskId: task.id, kind: 'review', model: null, traceId: `t${i}`, attempt: task.attempt });
      await s.runs.finish({ id: r.id, status: 'succeeded' });
    }
    const job = async () => buildJob({ runId: 'r', traceId: 'x', kind: 'review', task: await s.tasks.get(task.id), project, history: await s.runs.list({ taskId: task.id }), worktreeRoot: '/w', env: {}, heartbeatMs: 1000 });
    expect((await job()).reviewRound).toBe(4);
    // The rounds ran out; a person retries: the next claim's reviews start again from round 1.
    await s.tasks.transition(task.id, 'needs_attention', { reason: 'review rejected the change in round 3 of 3' });
    await s.tasks.retry(task.id, 'needs_attention');
    expect((await job()).reviewRound).toBe(1);
    await s.tasks.claim(task.id, 'd1', 60_000);
    const again = await s.runs.create({ taskId: task.id, kind: 'review', model: null, traceId: 't3', attempt: (await s.tasks.get(task.id)).attempt });
    await s.runs.finish({ id: again.id, status: 'succeeded' });
    expect((await job()).reviewRound).toBe(2);
  });

  it("carries the daemon's agentSandbox: its home hidden with the configured folders, the project readable", async () => {
    const s = (store = createStore((await freshSqlite()).db));
    const project = await s.projects.create({ name: 'p', repoPath: '/srv/repo', config: { provider: { kind: 'scripted', script: '/s.yaml' } } });
    const task = await s.tasks.create({ projectId: project.id, title: 't', complexity: 'easy' });
    const base = { runId: 'r', traceId: 'x', kind: 'execute' as const, task, project, history: [], worktreeRoot: '/w', env: {}, heartbeatMs: 1000 };
    expect(buildJob(base).sandbox).toBeNull();
    expect(buildJob({ ...base, sandbox: { home: '/home/ada/.maestro', agentSandbox: null } }).sandbox).toBeNull();
    const job = buildJob({ ...base, sandbox: { home: '/home/ada/.maestro', agentSandbox: { kind: 'bwrap', required: true, hide: ['/home/ada/.ssh'], writable: ['/home/ada/.claude'] } } });
    expect(job.sandbox).toEqual({ kind: 'bwrap', hide: ['/home/ada/.maestro', '/home/ada/.ssh'], readOnly: ['/srv/repo'], writable: ['/home/ada/.claude'] });
    expect(parseJob(job).sandbox).toEqual(job.sandbox);
  });
});
