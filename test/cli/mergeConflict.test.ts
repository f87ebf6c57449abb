/**
 * `task show` of a task parked by a merge conflict names the ways out as commands: the git commands that merge
 * main into the branch in its worktree, `task retry <id> --commit <sha>`, `task retry <id> --fresh`, `task cancel`.
 * Before, it printed the last error and nothing more, and the retry it might suggest met the same conflict (a
 * trial's dead end). A real daemon, the scripted agent, the on:conflict hook asking for a person.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { budget } from '../helpers/budget.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, taskReaches, type TestDaemon } from '../helpers/daemon.js';
import { git } from '../helpers/repo.js';
import { cliFor, gitRepo } from './helpers.js';

afterEach(() => removeTempDirs());

const SCRIPT = {
  steps: [
    { match: { role: 'execute' }, actions: [{ write: { path: 'keep.txt', content: "the task's version\n" } }] },
    { match: { role: 'review' }, actions: [{ verdict: { verdict: 'approve', findings: [] } }] },
  ],
};

describe('maestro task show: a merge conflict left to a person', { timeout: budget(300_000) }, () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop({ graceMs: 2000 });
    d = null;
  });

  it('names the files, the commands that resolve it by hand, retry --commit, retry --fresh and cancel', async () => {
    d = await startTestDaemon({ tickMs: 100 });
    const { cli } = cliFor(d.config.home);
    const url = ['--url', d.url];
    const repo = gitRepo({ 'keep.txt': 'original\n', '.maestro/hooks.mjs': "export const decide = () => 'manual';\nexport { decide as 'on:conflict' };\n" });
    const script = join(tempDir('maestro-script-'), 'script.json');
    writeFileSync(script, JSON.stringify(SCRIPT));
    const project = await d.store.projects.create({ name: 'conflict', repoPath: repo, config: { provider: { kind: 'scripted', script } } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Change keep', complexity: 'easy', ownedFiles: ['keep.txt'] });
    d.orchestrator.kick();
    await taskReaches(d, task.id, 'exec_review', 120_000);
    writeFileSync(join(repo, 'keep.txt'), "the person's version\n");
    git(repo, 'commit', '-qam', 'a person edits keep.txt');
    expect((await daemonRequest(d, 'POST', `/api/tasks/${task.id}/approve`, { who: 'ada' })).status).toBe(200);
    d.orchestrator.kick();
    await taskReaches(d, task.id, 'needs_attention', 120_000);

    const shown = await cli(['task', 'show', task.id, ...url]);
    expect(shown.code).toBe(0);
    const worktree = join(d.config.home, 'worktrees', project.id, `${task.id}-v1`);
    expect(shown.stdout).toContain([
      `main and maestro/${task.id}-v1 conflict in keep.txt, and a person must settle it: \`maestro task retry ${task.id}\` alone merges again and meets the same conflict. Ways out:`,
      `  - Resolve it by hand on maestro/${task.id}-v1, in the task's worktree:`,
      `      cd ${worktree}`,
      '      git merge main',
      '      # resolve keep.txt, then: git add <the files>',
      '      git commit --no-edit',
      '      git rev-parse HEAD   # the commit to name',
      `    then maestro task retry ${task.id} --commit <sha> (the commit you made) merges it, with no conflict run.`,
      `  - Run the task again from the current main: maestro task retry ${task.id} --fresh (a new version on a new branch, its plan kept; nothing of maestro/${task.id}-v1 is carried over).`,
      `  - Drop it: maestro task cancel ${task.id}.`,
    ].join('\n'));

    // The fresh retry, from the CLI: the next version, ready.
    const fresh = await cli(['task', 'retry', task.id, '--fresh', ...url]);
    expect(fresh.code).toBe(0);
    const next = (await d.store.tasks.list({ projectId: project.id })).find((t) => t.version === 2)!;
    expect(fresh.stdout.trim()).toBe(`Running ${task.id} again from the current main: version 2 is ${next.id} (ready).`);
    expect((await cli(['task', 'show', task.id, ...url])).stdout).not.toContain('Ways out');
  });
});
