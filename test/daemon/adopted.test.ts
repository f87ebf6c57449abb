/**
 * A run whose worker outlives its daemon (a kill -9, a restart) is taken over by the next daemon, and that is said:
 * a `run.adopted` event on the task, which `maestro serve` prints. Before, recovery left no trace, and a person
 * checking after a crash could not tell what had been recovered (trial 3).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { terminalLine } from '../../src/cli/commands/serve.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { poll, until } from '../helpers/wait.js';
import { isPidAlive } from '../../src/lib/processes.js';

describe('a worker that outlives its daemon', () => {
  const daemons: TestDaemon[] = [];
  afterEach(async () => {
    for (const d of daemons.splice(0)) await d.stop({ graceMs: 2000 });
    removeTempDirs();
  });

  it('is taken over by the next daemon, which says so once', async () => {
    const home = tempDir('maestro-home-');
    const script = join(tempDir('maestro-script-'), 'hang.yaml');
    // The execute never answers: its worker is still at work whatever the machine's speed.
    writeFileSync(script, 'steps:\n  - match: { role: execute }\n    actions:\n      - text: "working"\n      - hang: true\n');
    const first = await startTestDaemon({ home, tickMs: 100 });
    daemons.push(first);
    const project = await first.store.projects.create({ name: 'p', repoPath: makeRepo(), config: { provider: { kind: 'scripted', script } } });
    const task = await first.store.tasks.create({ projectId: project.id, title: 'Long work', complexity: 'easy' });
    first.orchestrator.kick();
    const run = await until(first.bus, async () => (await first.store.runs.list({ taskId: task.id, status: 'running' })).find((r) => r.workerPid !== null) ?? null, 'the run with its worker');
    // As a kill -9 leaves it: the daemon gone, its worker running on.
    await first.abandon();
    daemons.length = 0;

    const second = await startTestDaemon({ home, tickMs: 100 });
    daemons.push(second);
    second.orchestrator.kick();
    const adopted = await until(second.bus, async () => (await second.store.events.list({ taskId: task.id, type: 'run.adopted' })).events[0] ?? null, 'run.adopted');
    expect(adopted).toMatchObject({ runId: run.id, payload: { kind: 'execute', pid: run.workerPid } });
    expect(terminalLine(adopted, 'Long work')).toMatch(new RegExp(`Long work\\s+execute run taken over: its worker \\(pid ${run.workerPid}\\) ran on while no daemon did$`));
    // Once: later ticks follow the same worker without saying it again.
    for (let i = 0; i < 3; i++) {
      second.orchestrator.kick();
      await second.orchestrator.idle();
    }
    expect((await second.store.events.list({ taskId: task.id, type: 'run.adopted' })).events).toHaveLength(1);
    expect((await second.store.runs.get(run.id)).status).toBe('running');

    // Taken over means this daemon's to stop: a cancel ends the adopted worker, which it did not start, by its pid.
    expect((await second.app.inject({ method: 'POST', url: `/api/tasks/${task.id}/cancel`, payload: { reason: 'done looking' } })).statusCode).toBe(200);
    second.orchestrator.kick();
    await poll(() => !isPidAlive(run.workerPid!), `the adopted worker (pid ${run.workerPid}) to end`);
    await until(second.bus, async () => (await second.store.runs.get(run.id)).status === 'cancelled', 'the adopted run cancelled');
  });
});
