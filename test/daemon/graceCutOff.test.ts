/**
 * A stop whose grace period ends while a stage still runs says so in the daemon's log, run by run: a person who
 * pressed Ctrl-C once learns that work was cut off and that it resumes at the next start.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { poll } from '../helpers/wait.js';

afterEach(() => removeTempDirs());

it('names each run stopped mid-stage when the grace period ends', async () => {
  const script = join(tempDir('maestro-grace-'), 'hang.yaml');
  writeFileSync(script, 'steps:\n  - match: { role: execute }\n    actions:\n      - hang: true\n');
  const d = await startTestDaemon({ tickMs: 100 });
  const project = await d.store.projects.create({ name: 'shop', repoPath: makeRepo(), config: { provider: { kind: 'scripted', script } } });
  const task = await d.store.tasks.create({ projectId: project.id, title: 'Hangs', complexity: 'easy' });
  d.orchestrator.kick();
  const run = await poll(async () => (await d.store.runs.list({ taskId: task.id })).find((r) => r.workerPid) ?? null, 'a worker at work', 60_000);
  // In its agent stage (which hangs), past the worktree's: no stage ends within the grace period.
  await poll(async () => (await d.store.events.list({ taskId: task.id, type: 'run.phase' })).events.find((e) => e.payload.stage === 'agent' && e.payload.state === 'start') ?? null, 'the agent stage', 60_000);
  await d.stop({ graceMs: 300 });
  const lines = d.logs.join('').split('\n').filter((l) => l.includes('stopped mid-stage'));
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0]!)).toMatchObject({ runId: run.id, graceMs: 300, msg: 'stage still running when the grace period ended: stopped mid-stage; the run resumes from its last finished stage at the next start' });
});
