/**
 * A task an agent's failure left in needs_attention: `maestro status` sends a person to `task show` for "why it
 * stopped, and the ways out", and `task show` names them: the run's output, what to put right, `task retry` and
 * `task cancel`. Before, it printed the error and nothing more (a trial: the scripted agent's edit failed on a
 * rejected task's new version). A real daemon, a real repository and the scripted agent; the advice is then
 * followed (the script put right, the task retried) and the task reaches its gate.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { budget } from '../helpers/budget.js';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon, taskReaches, type TestDaemon } from '../helpers/daemon.js';
import { cliFor, gitRepo } from './helpers.js';

afterEach(() => removeTempDirs());

const failing = { steps: [{ match: { role: 'execute' }, actions: [{ edit: { path: 'README.md', find: 'no such text', replace: 'x' } }] }] };
const working = {
  steps: [
    { match: { role: 'execute' }, actions: [{ append: { path: 'README.md', content: 'more\n' } }] },
    { match: { role: 'review' }, actions: [{ verdict: { verdict: 'approve', findings: [] } }] },
  ],
};

describe('maestro task show: a task an agent failure stopped', { timeout: budget(300_000) }, () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop({ graceMs: 2000 });
    d = null;
  });

  it('names how to see why and the ways out, and the retry it names works once the cause is put right', async () => {
    d = await startTestDaemon({ tickMs: 100 });
    const { cli } = cliFor(d.config.home);
    const url = ['--url', d.url];
    const repo = gitRepo({ 'README.md': '# demo\n' });
    const script = join(repo, 'script.json');
    writeFileSync(script, JSON.stringify(failing));
    const project = await d.store.projects.create({ name: 'failing', repoPath: repo, config: { provider: { kind: 'scripted', script } } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Edit the readme', complexity: 'easy' });
    d.orchestrator.kick();
    await taskReaches(d, task.id, 'needs_attention', 120_000);

    const shown = await cli(['task', 'show', task.id, ...url]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('last error: AGENT_FAILED');
    expect(shown.stdout.trimEnd().split('\n\n').at(-1)).toBe(
      `It stopped and waits for you. \`maestro task logs ${task.id}\` shows its last run's output. Put right what stopped it ` +
        `(the task: \`maestro task edit ${task.id}\`; the project's agent: \`maestro project config set\`; its checks: ` +
        `\`.maestro/config.json\`, committed), then \`maestro task retry ${task.id}\` tries it again, or \`maestro task cancel ${task.id}\` drops it.`,
    );

    writeFileSync(script, JSON.stringify(working));
    const retried = await cli(['task', 'retry', task.id, ...url]);
    expect(retried.code).toBe(0);
    await taskReaches(d, task.id, 'exec_review', 120_000);
    const atGate = await cli(['task', 'show', task.id, ...url]);
    expect(atGate.stdout).not.toContain('It stopped and waits for you');
  });
});
