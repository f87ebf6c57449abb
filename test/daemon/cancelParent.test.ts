/**
 * A decomposed parent cancelled while its subtasks' agents work: the subtasks are cancelled with it, and their
 * daemon stops their workers and ends their runs as it does for any cancelled task (the orchestrator's reconcile).
 * A new-user trial found them going on after the parent was cancelled, one as far as exec_review.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { budget } from '../helpers/budget.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { poll, until } from '../helpers/wait.js';

const SCRIPT = `
steps:
  - match: { role: plan }
    actions:
      - plan: { plan: "Two steps.", subtasks: [{ title: "Define", complexity: easy }, { title: "Wire", complexity: easy }] }
  - match: { role: execute }
    actions:
      - hang: true
`;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('cancelling a parent whose subtasks are at work', () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop({ graceMs: 2000 });
    d = null;
    removeTempDirs();
  });

  it('cancels the subtasks and stops their workers', async () => {
    const script = join(tempDir('maestro-cancel-parent-'), 'script.yaml');
    writeFileSync(script, SCRIPT);
    d = await startTestDaemon({ tickMs: 100 });
    const { store, bus } = d;
    const project = await store.projects.create({ name: 'demo', repoPath: makeRepo(), config: { provider: { kind: 'scripted', script } } });
    const parent = await store.tasks.create({ projectId: project.id, title: 'Greet people', complexity: 'medium' });
    d.orchestrator.kick();
    await until(bus, async () => (await store.tasks.get(parent.id)).status === 'plan_review', 'the plan at its gate', 60_000);
    const approved = await d.app.inject({ method: 'POST', url: `/api/tasks/${parent.id}/approve`, payload: { gate: 'plan_review' } });
    expect(JSON.parse(approved.body).task.status).toBe('waiting_children');
    const kids = await store.tasks.list({ parentId: parent.id });
    expect(kids.map((k) => k.title)).toEqual(['Define', 'Wire']);
    // Both subtasks' agents at work (they never answer).
    const runs = await poll(async () => {
      const running = (await store.runs.list({ status: 'running' })).filter((r) => r.workerPid && kids.some((k) => k.id === r.taskId));
      return running.length === 2 ? running : null;
    }, 'both subtasks at work', 60_000);

    const res = await d.app.inject({ method: 'POST', url: `/api/tasks/${parent.id}/cancel`, payload: { reason: 'not needed' } });
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body).subtasksCancelled.map((s: { title: string }) => s.title)).toEqual(['Define', 'Wire']);
    expect((await store.tasks.list({ parentId: parent.id })).map((k) => k.status)).toEqual(['cancelled', 'cancelled']);
    for (const run of runs) {
      const ended = await until(bus, async () => {
        const r = await store.runs.get(run.id);
        return r.status === 'running' ? null : r;
      }, `the run of ${run.taskId} to end`, 60_000);
      expect(ended).toMatchObject({ status: 'cancelled', error: 'task is cancelled' });
      await poll(async () => (alive(run.workerPid!) ? null : true), `the worker of ${run.taskId} to exit`, 60_000);
    }
    expect((await store.tasks.get(parent.id)).status).toBe('cancelled');
  }, budget(180_000));
});
