/**
 * A repository that commits `.workflow -> /somewhere` (or `.workflow/sessions -> /somewhere`) does not have the
 * daemon write there. A trial registered such a repository and ran one task with the scripted agent: the task's
 * session.json, its .gitignore, its runs/ folder and the corpus lock were made in the folder the link named. Now
 * the task runs as before, nothing is written through the link, and the task's events say why its session was not
 * recorded (knowledge.error, naming the link and where it leads).
 */
import { readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { git, makeRepo } from '../helpers/repo.js';
import { until, untilStatus } from '../helpers/wait.js';

const SCRIPT = {
  steps: [
    { match: { role: 'execute' }, actions: [{ write: { path: 'src/a.ts', content: 'export const a = 1;\n' } }] },
    { match: { role: 'review' }, actions: [{ verdict: { verdict: 'approve', findings: [] } }] },
  ],
};

describe('the daemon writes nothing through a link the repository holds', () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop({ graceMs: 2000 });
    d = null;
    removeTempDirs();
  });

  /** A repository committing `link` (a path) as a symbolic link to an empty folder outside it, and a task run there to its review gate. */
  async function runWithLink(link: string) {
    const victim = tempDir('maestro-victim-');
    const repo = makeRepo({ 'README.md': '# r\n', ...(link === '.workflow' ? {} : { '.workflow/specs/.keep': '' }) });
    symlinkSync(victim, join(repo, link));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'a link out');
    const script = join(tempDir('script-'), 'script.json');
    writeFileSync(script, JSON.stringify(SCRIPT));
    d = await startTestDaemon({ tickMs: 100 });
    const project = await d.store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script } } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Add a', complexity: 'easy', ownedFiles: ['src/a.ts'] });
    d.orchestrator.kick();
    await untilStatus(d, task.id, 'exec_review');
    const errors = async () => (await d!.store.events.list({ taskId: task.id, type: 'knowledge.error', limit: 100 })).events.map((e) => e.payload as { step: string; message: string });
    return { repo, victim, errors, bus: d.bus };
  }

  it('.workflow linked out of the repository: the run goes on, nothing is written there, and the task says why', async () => {
    const { repo, victim, errors, bus } = await runWithLink('.workflow');
    // Both runs (execute, review) finished their knowledge step, refused too: nothing after it is left to write.
    await until(bus, async () => (await errors()).filter((e) => e.step === 'run-finished').length === 2, 'both runs\' knowledge steps to end');
    expect(readdirSync(victim)).toEqual([]);
    const started = (await errors()).find((e) => e.step === 'run-started');
    expect(started?.message).toContain(`${join(repo, '.workflow')} is a symbolic link leading to ${victim}/sessions/task-`);
    expect(started?.message).toContain(`outside the repository ${repo}`);
    expect(started?.message).toContain('Nothing was written');
  });

  it('.workflow/sessions linked out of the repository: the same', async () => {
    const { repo, victim, errors } = await runWithLink('.workflow/sessions');
    expect(readdirSync(victim)).toEqual([]);
    // (Finishing a run whose session was never recorded writes nothing and says nothing: there is no session.)
    const started = (await errors()).find((e) => e.step === 'run-started');
    expect(started?.message).toContain(`${join(repo, '.workflow', 'sessions')} is a symbolic link leading to ${victim}/task-`);
    expect(started?.message).toContain('Nothing was written');
  });
});
