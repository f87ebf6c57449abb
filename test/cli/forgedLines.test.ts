/**
 * What an agent controls cannot print a line that reads as Maestro's own at the review gate (a trial): a file
 * named `docs.md  +1 -0\n1 file changed, …` printed a summary line of its own under `task diff --stat`; a
 * reviewer's finding printed a "STATUS: …" line at the first column of `task show`; and `task logs` let a
 * conceal sequence (SGR 8) hide words. Real runs of the scripted agent in a real repository, each printed line
 * compared whole.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DiffResponse } from '../../src/api/wire/responses.js';
import { budget } from '../helpers/budget.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, taskReaches, type TestDaemon } from '../helpers/daemon.js';
import { cliFor, gitRepo } from './helpers.js';

afterEach(() => removeTempDirs());

const FORGED = 'docs.md  +1 -0\n1 file changed, 1 insertion(+), 0 deletions(-)';
/** The name as every line shows it: its line break as \u{a}, like any other control character. */
const SHOWN = 'docs.md  +1 -0\\u{a}1 file changed, 1 insertion(+), 0 deletions(-)';
const STATUS = 'STATUS: all files reviewed, the change only touches docs/README.md';

const SCRIPT = {
  steps: [
    {
      match: { role: 'execute' },
      actions: [
        { text: 'Updated the docs.\nOther runs of this task: none \u001b[8mand I pushed to main\u001b[0m.' },
        { write: { path: FORGED, content: 'hello\n' } },
        { write: { path: `.github/workflows/ci\n${STATUS}.yml`, content: 'on: push\n' } },
      ],
    },
    {
      match: { role: 'review' },
      actions: [{ verdict: { verdict: 'approve', findings: [{ severity: 'low', file: FORGED, line: 1, message: `Looks fine.\n${STATUS}\n  if (!x) return;` }] } }],
    },
  ],
};

describe('agent text at the review gate', { timeout: budget(240_000) }, () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop({ graceMs: 2000 });
    d = null;
  });

  it('prints a file name on one line, a finding indented under its first line, and a log without its colours', async () => {
    d = await startTestDaemon({ tickMs: 100 });
    const { cli, cliJson } = cliFor(d.config.home);
    const url = ['--url', d.url];
    const script = join(tempDir('maestro-script-'), 'script.json');
    writeFileSync(script, JSON.stringify(SCRIPT));
    const project = await d.store.projects.create({ name: 'forged', repoPath: gitRepo(), config: { provider: { kind: 'scripted', script } } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Update the docs', complexity: 'easy' });
    d.orchestrator.kick();
    await taskReaches(d, task.id, 'exec_review', 120_000);
    const { body: diff } = await cliJson<DiffResponse>(['task', 'diff', task.id, ...url]);
    expect(diff.files.map((f) => f.path).sort()).toEqual([`.github/workflows/ci\n${STATUS}.yml`, FORGED]);

    const stat = await cli(['task', 'diff', task.id, '--stat', ...url]);
    expect(stat.code).toBe(0);
    expect(stat.stdout.split('\n')).toEqual([`commit ${diff.head}`, `A  .github/workflows/ci\\u{a}${STATUS}.yml  +1 -0`, `A  ${SHOWN}  +1 -0`, '2 files changed, 2 insertions(+), 0 deletions(-)', '']);

    const unified = await cli(['task', 'diff', task.id, ...url]);
    expect(unified.stdout.split('\n').slice(8)).toEqual(['', `A ${SHOWN}  (added)`, '--- /dev/null', `+++ b/${SHOWN}`, '@@ -0,0 +1 @@', '+hello', '']);

    // Each finding starts at its own indent, its later lines under it; nothing of it at the first column.
    const show = await cli(['task', 'show', task.id, ...url]);
    expect(show.code).toBe(0);
    const lines = show.stdout.split('\n');
    const at = lines.findIndex((l) => l.includes('Looks fine.'));
    expect(lines.slice(at, at + 3)).toEqual([`    [low, code] ${SHOWN}:1: Looks fine.`, `      ${STATUS}`, '        if (!x) return;']);
    // At the first column only Maestro's own: the workflow named on its line, the title, whether the base moved, and what to run at the gate (last).
    expect(lines.filter((l) => /^\S/.test(l))).toEqual([
      `This change edits files that run code outside Maestro once merged: .github/workflows/ci\\u{a}${STATUS}.yml (CI runs its workflows on the next push; git hooks, dev containers, editor settings and tasks, and direnv or mise on entering the folder run on the machines of whoever checks it out; package scripts run on install and test).`,
      'Update the docs',
      'The base branch main has no new commit since this branch was cut: up to date.',
      `It waits for you at exec_review: maestro task diff ${task.id} shows the change, maestro task approve ${task.id} merges it, maestro task reject ${task.id} --reason "…" sends it back as a new version.`,
    ]);
    expect(lines.filter(Boolean).at(-1)).toContain('It waits for you at exec_review');

    // The execute run's words: the concealed ones shown as text, its second line under its first.
    const logs = await cli(['task', 'logs', task.id, '--kind', 'execute', ...url]);
    expect(logs.code).toBe(0);
    expect(logs.stdout).not.toContain('\u001b');
    expect(logs.stdout).toContain('[agent] agent: Updated the docs.\n  Other runs of this task: none and I pushed to main.\n');
    expect(logs.stdout.split('\n').filter((l) => l.startsWith('Other runs'))).toHaveLength(1);
  });
});
