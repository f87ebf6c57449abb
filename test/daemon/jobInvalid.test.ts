/**
 * A run whose job.json is damaged (a disk error, a hand edit) while its worker is dead cannot resume:
 * the run ends at once, and the task says why, instead of three worker starts that die the same way and
 * a "worker died 3 times" that names no cause.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { poll, until } from '../helpers/wait.js';

describe('a damaged job.json', () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop({ graceMs: 2000 });
    d = null;
    removeTempDirs();
  });

  it('ends the run when its worker must be started again, naming the file', async () => {
    const script = join(tempDir('maestro-job-'), 'hang.yaml');
    writeFileSync(script, 'steps:\n  - match: { role: execute }\n    actions:\n      - hang: true\n');
    d = await startTestDaemon({ tickMs: 100 });
    const { store, bus } = d;
    const project = await store.projects.create({ name: 'p', repoPath: makeRepo(), config: { provider: { kind: 'scripted', script } } });
    const task = await store.tasks.create({ projectId: project.id, title: 'Hangs', complexity: 'easy' });
    d.orchestrator.kick();
    const run = await poll(async () => (await store.runs.list({ taskId: task.id })).find((r) => r.workerPid) ?? null, 'a worker at work', 60_000);
    writeFileSync(join(run.runDir!, 'job.json'), '{"truncated');
    process.kill(run.workerPid!, 'SIGKILL');
    await until(bus, async () => (await store.runs.get(run.id)).status !== 'running', 'the run ended', 60_000);
    const after = await store.tasks.get(task.id);
    expect(after.lastRunError).toMatch(new RegExp(`^JOB_INVALID: the run cannot resume: cannot read ${join(run.runDir!, 'job.json')}: .*not valid JSON`));
    expect((await store.events.list({ taskId: task.id, type: 'run.resumed' })).events).toHaveLength(1);
  });
});
