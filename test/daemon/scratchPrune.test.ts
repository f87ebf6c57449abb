/**
 * An agent's scratch folder (`<runDir>.scratch`, agentRunFolder.ts) outlives its run when nobody kills the worker:
 * a worker that died on its own mid-call, or a run another daemon ended while this one was away. The daemon removes
 * those of ended runs when it starts (and every WORKTREE_PRUNE_MS after), and leaves a running run's alone.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/config.js';
import { Orchestrator } from '../../src/daemon/orchestrator.js';
import { Bus } from '../../src/lib/bus.js';
import { createStore } from '../../src/store/store.js';
import { freshSqlite, removeTempDirs, tempDir } from '../helpers/db.js';
import { makeRepo } from '../helpers/repo.js';
import { poll } from '../helpers/wait.js';

afterEach(() => removeTempDirs());

it("a daemon that starts removes the agents' scratch folders of ended runs, and keeps a running run's", async () => {
  const { db } = await freshSqlite();
  const store = createStore(db);
  const home = tempDir('maestro-scratch-');
  const project = await store.projects.create({ name: 'shop', repoPath: makeRepo(), config: {} });
  const task = await store.tasks.create({ projectId: project.id, title: 'Two runs', complexity: 'easy' });
  const { attempt } = await store.tasks.claim(task.id, 'd2', 60_000);
  const ended = await store.runs.start({ taskId: task.id, kind: 'execute', model: null, traceId: 't1', attempt, owner: 'd2' });
  await store.runs.finish({ id: ended.id, status: 'failed', error: 'WORKER_DIED' });
  const running = await store.runs.start({ taskId: task.id, kind: 'review', model: null, traceId: 't2', attempt, owner: 'd2' });
  const scratchOf = (runId: string) => join(home, 'runs', task.id, `${runId}.scratch`);
  for (const run of [ended, running]) {
    mkdirSync(join(scratchOf(run.id), 'call-x'), { recursive: true });
    writeFileSync(join(scratchOf(run.id), 'call-x', 'knowledge-delta.json'), '{}');
  }

  const config = { ...resolveConfig({ home }, {}), name: 'd1', maxConcurrentRuns: 0 };
  const orchestrator = new Orchestrator(store, new Bus(), config, { env: {}, onChange: () => {}, onError: (e) => expect.unreachable(e.message) });
  await orchestrator.register();
  orchestrator.start();
  try {
    await poll(() => !existsSync(scratchOf(ended.id)), "the ended run's scratch folder removed");
    expect(existsSync(join(scratchOf(running.id), 'call-x', 'knowledge-delta.json'))).toBe(true);
    expect(existsSync(join(home, 'runs', task.id))).toBe(true); // the run directories' folder stays
  } finally {
    await orchestrator.stop({ graceMs: 0 });
    await store.close();
  }
});
