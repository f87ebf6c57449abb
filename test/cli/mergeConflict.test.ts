/**
 * `task show` of a task parked by a merge conflict names the ways out as commands: the git commands that merge
 * main into the branch in its worktree, `task retry <id> --commit <sha>`, `task retry <id> --fresh`, `task cancel`.
 * Before, it printed the last error and nothing more, and the retry it might suggest met the same conflict (a
 * trial's dead end); its commands, run as printed, end it. A real daemon, the scripted agent, the on:conflict hook asking for a
 * person.
 */
import { spawnSync } from 'node:child_process';
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

/** A daemon, a task parked by a conflict in keep.txt (the person edited it after the review, the hook asks for a person). */
async function parked(d: TestDaemon) {
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
  return { repo, project, task, cli, url };
}

describe('maestro task show: a merge conflict left to a person', { timeout: budget(300_000) }, () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop({ graceMs: 2000 });
    d = null;
  });

  it('names the files, the commands that resolve it by hand, retry --commit, retry --fresh and cancel', async () => {
    d = await startTestDaemon({ tickMs: 100 });
    const { project, task, cli, url } = await parked(d);
    const shown = await cli(['task', 'show', task.id, ...url]);
    expect(shown.code).toBe(0);
    const worktree = join(d.config.home, 'worktrees', project.id, `${task.id}-v1`);
    expect(shown.stdout).toContain([
      `main and maestro/${task.id}-v1 conflict in keep.txt, and a person must settle it: \`maestro task retry ${task.id}\` alone merges again and meets the same conflict. Ways out:`,
      `  - Resolve it by hand on maestro/${task.id}-v1, in the task's worktree:`,
      `      cd ${worktree}`,
      '      git merge main',
      "    resolve keep.txt (git's conflict markers), then:",
      '      git add -- keep.txt',
      '      git commit --no-edit',
      '      git rev-parse HEAD',
      `    then maestro task retry ${task.id} --commit <sha> (the commit the last line prints) merges it, with no conflict run.`,
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

  it('its commands, run as printed with the files resolved between the two blocks, make the commit that retry --commit merges', async () => {
    d = await startTestDaemon({ tickMs: 100 });
    const { repo, task, cli, url } = await parked(d);
    const shown = (await cli(['task', 'show', task.id, ...url])).stdout.split('\n');
    const block = (from: number) => {
      const out: string[] = [];
      for (let i = from; i < shown.length && shown[i]!.startsWith('      '); i++) out.push(shown[i]!.trim());
      return out;
    };
    const start = shown.findIndex((l) => l.includes('Resolve it by hand')) + 1;
    const merge = block(start);
    const commit = block(start + merge.length + 1);
    expect(shown[start + merge.length]).toContain('resolve keep.txt');
    const person = { ...process.env, GIT_AUTHOR_NAME: 'Ada', GIT_AUTHOR_EMAIL: 'ada@example.com', GIT_COMMITTER_NAME: 'Ada', GIT_COMMITTER_EMAIL: 'ada@example.com' };
    const ran = spawnSync('bash', ['-c', `${merge.join('\n')}\nprintf 'both versions\\n' > keep.txt\n${commit.join('\n')}`], { cwd: repo, env: person, encoding: 'utf8' });
    const sha = ran.stdout.trim().split('\n').at(-1)!;
    expect(sha, ran.stderr).toMatch(/^[0-9a-f]{40}$/);
    const retried = await cli(['task', 'retry', task.id, '--commit', sha, ...url]);
    expect(retried.code, retried.stderr).toBe(0);
    d.orchestrator.kick();
    await taskReaches(d, task.id, 'done', 120_000);
    expect(git(repo, 'show', 'main:keep.txt')).toBe('both versions');
  });
});
