/**
 * A graceful stop applies the result a worker finished during the grace period before it lets the task go
 * (daemon/handOver.ts applyLeftovers, then releaseBetweenStages). Through a daemon the outbox watcher usually reads
 * that result first, so a test of the whole stop passed without the step. Here no watcher follows the run (the
 * orchestrator was never started, so its ingestor follows nothing): the execute's result sits in its outbox, unread,
 * when stop() begins, as when the watcher loses the race. The stop must read it, move the task to reviewing and only
 * then release it; without the step the run stays running and the task executing, its claim kept.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OutboxWriter } from '../../src/executor/protocol/outbox.js';
import { openMigratedDatabase } from '../../src/store/open.js';
import { createStore, type Store } from '../../src/store/store.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { makeRepo } from '../helpers/repo.js';

const NO_USAGE = { inputTokens: 0, outputTokens: 0, costUsd: 0, models: [], agentCalls: 0 };

let reopened: Store | null = null;
afterEach(async () => {
  await reopened?.close();
  reopened = null;
  removeTempDirs();
});

describe('a graceful stop and the results left in outboxes', () => {
  it('applies an execute result no watcher read, then releases the task at reviewing', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    const owner = d.config.name;
    const repoPath = makeRepo();
    const project = await d.store.projects.create({ name: 'leftovers', repoPath, config: {} });
    const created = await d.store.tasks.create({ projectId: project.id, title: 'Finished in the grace period', complexity: 'easy' });
    await d.store.tasks.claim(created.id, owner, 10 * 60_000);
    await d.store.tasks.transition(created.id, 'executing');
    const task = await d.store.tasks.get(created.id);
    const runDir = tempDir('maestro-run-');
    const run = await d.store.runs.start({ taskId: task.id, kind: 'execute', model: null, traceId: 'tr-left', attempt: task.attempt, runDir, owner });
    // What the worker wrote before it exited: its stages, then its result.
    const w = new OutboxWriter(runDir, { traceId: 'tr-left', runId: run.id });
    w.write({ type: 'phase', stage: 'agent', state: 'start' });
    w.write({ type: 'phase', stage: 'agent', state: 'done' });
    const data = {
      branch: 'maestro/t-left', worktreePath: join(runDir, 'wt'), baseBranch: 'main', baseSha: 'a'.repeat(40), commitSha: 'b'.repeat(40),
      divergence: { commits: 0, files: 0 }, diff: { files: ['a.txt'], filesChanged: 1, linesAdded: 1, linesDeleted: 0, outsideOwned: [], strayGitlinks: [] },
      checks: [], reflection: null, summary: 'done',
    };
    w.write({ type: 'result', kind: 'execute', usage: NO_USAGE, data });
    expect((await d.store.runs.get(run.id)).status).toBe('running');

    await d.stop();

    reopened = createStore(await openMigratedDatabase(d.config.database));
    expect((await reopened.runs.get(run.id)).status).toBe('succeeded');
    expect(await reopened.tasks.get(task.id)).toMatchObject({ status: 'reviewing', result: { kind: 'execute', commitSha: 'b'.repeat(40) } });
    // Released where it stands now, at reviewing: another daemon reviews it at once.
    const released = (await reopened.events.list({ taskId: task.id, type: 'task.released' })).events;
    expect(released.map((e) => e.payload)).toEqual([expect.objectContaining({ owner, status: 'reviewing' })]);
  });
});
