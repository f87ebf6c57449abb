/**
 * One daemon on SQLite, stopped (as Ctrl-C or SIGTERM stop it) while a task executes: the run finishes in the grace
 * period, the task is left at review with its lease ended (released, for another daemon to go on with at once),
 * and the same daemon started again renews its claim and goes on with the review itself: nothing is executed again,
 * nothing is taken over, and the claim's attempt stays.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, taskDone, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { until } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';

describe('a single daemon stopped with its task between stages', () => {
  const daemons: TestDaemon[] = [];
  afterEach(async () => {
    for (const d of daemons.splice(0)) await d.stop({ graceMs: 2000 });
    removeTempDirs();
  });

  it('releases the task at review, and goes on with it itself when started again', { timeout: budget(180_000) }, async () => {
    const home = tempDir('maestro-home-');
    const script = join(tempDir('maestro-script-'), 'script.yaml');
    writeFileSync(script, 'steps:\n  - match: { role: execute }\n    actions:\n      - wait: 3000\n      - write: { path: "a.txt", content: "a\\n" }\n  - match: { role: review }\n    actions:\n      - verdict: { verdict: approve, findings: [] }\n');
    const first = await startTestDaemon({ home, tickMs: 100 });
    daemons.push(first);
    const project = await first.store.projects.create({ name: 'p', repoPath: makeRepo(), config: { provider: { kind: 'scripted', script }, autoApproveAfterMs: 0 } });
    const task = await first.store.tasks.create({ projectId: project.id, title: 'Stopped mid-execute', complexity: 'easy', ownedFiles: ['a.txt'] });
    first.orchestrator.kick();
    await until(first.bus, async () => (await first.store.events.list({ taskId: task.id, type: 'run.phase' })).events.some((e) => e.payload.stage === 'agent' && e.payload.state === 'start'), "the execute's agent stage");
    const claimed = await first.store.tasks.get(task.id);

    daemons.length = 0;
    await first.stop({ graceMs: 60_000 });
    const second = await startTestDaemon({ home, tickMs: 100 });
    daemons.push(second);
    const left = await second.store.tasks.get(task.id);
    expect(left).toMatchObject({ status: 'reviewing', claimedBy: claimed.claimedBy, attempt: claimed.attempt });
    expect((await second.store.events.list({ taskId: task.id, type: 'task.released' })).events).toHaveLength(1);

    second.orchestrator.kick();
    const done = await taskDone(second, task.id, budget(120_000));
    expect(done.attempt).toBe(claimed.attempt);
    const runs = await second.store.runs.list({ taskId: task.id });
    expect(runs.map((r) => [r.kind, r.status])).toEqual([['execute', 'succeeded'], ['review', 'succeeded']]);
    expect((await second.store.events.list({ taskId: task.id, type: 'task.taken_over' })).events).toHaveLength(0);
  });
});
