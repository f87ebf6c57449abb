/**
 * A change the diff gate refused leaves its task needing attention, and `task show` names the ways out that fit
 * the refusal: the key in `.maestro/config.json` of the limit it went over, or the `task edit` that adds the files
 * outside the task's owned files; narrowing the task; and what `task retry` does. Before, it printed the error and
 * nothing more (a trial). Real runs of the scripted agent in a real repository, and the advice followed: each
 * task gets through the gate on its retry.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { budget } from '../helpers/budget.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, taskReaches, type TestDaemon } from '../helpers/daemon.js';
import { git } from '../helpers/repo.js';
import { cliFor, gitRepo } from './helpers.js';

afterEach(() => removeTempDirs());

const SCRIPT = {
  steps: [
    { match: { role: 'execute', title: 'long file' }, actions: [{ write: { path: 'notes.txt', content: 'a line\n'.repeat(30) } }] },
    { match: { role: 'execute', title: 'manifest' }, actions: [{ write: { path: 'src/a.ts', content: 'export const a = 1;\n' } }, { write: { path: 'package.json', content: '{}\n' } }] },
    { match: { role: 'execute', title: 'dump' }, actions: [{ write: { path: 'dump.bin', content: 'x'.repeat(5000) } }] },
    { match: { role: 'review' }, actions: [{ verdict: { verdict: 'approve', findings: [] } }] },
  ],
};

describe('maestro task show: a change the diff gate refused', { timeout: budget(300_000) }, () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop({ graceMs: 2000 });
    d = null;
  });

  it('names the limit to raise or the owned files to add, narrowing the task, and what a retry does', async () => {
    d = await startTestDaemon({ tickMs: 100 });
    const { cli, cliJson } = cliFor(d.config.home);
    const url = ['--url', d.url];
    const repo = gitRepo({ 'README.md': '# demo\n', '.maestro/config.json': JSON.stringify({ limits: { maxDiffLines: 5 } }) });
    const script = join(tempDir('maestro-script-'), 'script.json');
    writeFileSync(script, JSON.stringify(SCRIPT));
    const project = await d.store.projects.create({ name: 'gate', repoPath: repo, config: { provider: { kind: 'scripted', script } } });
    const long = await d.store.tasks.create({ projectId: project.id, title: 'Write a long file', complexity: 'easy' });
    const owned = await d.store.tasks.create({ projectId: project.id, title: 'Touch the manifest', complexity: 'easy', ownedFiles: ['src/'] });
    d.orchestrator.kick();
    await taskReaches(d, long.id, 'needs_attention', 120_000);
    await taskReaches(d, owned.id, 'needs_attention', 120_000);
    const runOf = async (id: string) => (await d!.store.runs.list({ taskId: id })).at(-1)!.id;
    const retry = `Then maestro task retry %s starts a new run on maestro/%s-v1, which keeps the refused commit: the agent goes on from it, and the checks and the diff gate look at the whole branch again.`;
    const retryLine = (id: string) => retry.replaceAll('%s', id);

    // Over the line limit: the key to raise, with the number; nothing about owned files.
    const overLines = await cli(['task', 'show', long.id, ...url]);
    expect(overLines.code).toBe(0);
    expect(overLines.stdout).toContain('last error: DIFF_GATE: the diff gate refused the change: 30 lines changed (limit 5)');
    expect(overLines.stdout).toContain([
      `The diff gate refused the change of run ${await runOf(long.id)}. Ways out:`,
      `  - 30 lines changed, over limits.maxDiffLines (5): raise limits.maxDiffLines to 30 or more in the project's .maestro/config.json ({"limits": {"maxDiffLines": 30}}) and commit it.`,
      `  - Narrow the task (maestro task edit ${long.id} --spec "…"): the retry starts from the refused commit, so say what to take out of it.`,
      retryLine(long.id),
    ].join('\n'));
    expect(overLines.stdout).not.toContain('owned files');
    expect((await cliJson<{ diffGate: unknown }>(['task', 'show', long.id, ...url])).body.diffGate).toEqual({
      runId: await runOf(long.id), branch: `maestro/${long.id}-v1`, lines: { changed: 30, limit: 5 }, files: null, outsideOwned: null, largeFiles: null, strayGitlinks: [], committed: true,
    });

    // Outside the owned files: the edit that adds them; no limit to raise.
    const outside = await cli(['task', 'show', owned.id, ...url]);
    expect(outside.stdout).toContain([
      `The diff gate refused the change of run ${await runOf(owned.id)}. Ways out:`,
      `  - 1 file(s) outside the task's owned files (src/): package.json. If the task may change them, add them: maestro task edit ${owned.id} --owned-files src/,package.json`,
      `  - Narrow the task (maestro task edit ${owned.id} --spec "…"): the retry starts from the refused commit, so say what to take out of it.`,
      retryLine(owned.id),
    ].join('\n'));
    expect(outside.stdout).not.toContain('maxDiff');

    // The advice holds: each does what it says, and the retry gets through the gate with the refused commit.
    writeFileSync(join(repo, '.maestro/config.json'), JSON.stringify({ limits: { maxDiffLines: 30 } }));
    git(repo, 'commit', '-q', '-am', 'Raise the line limit');
    expect((await cli(['task', 'edit', owned.id, '--owned-files', 'src/,package.json', ...url])).code).toBe(0);
    for (const id of [long.id, owned.id]) expect((await cli(['task', 'retry', id, ...url])).code).toBe(0);
    d.orchestrator.kick();
    await taskReaches(d, long.id, 'exec_review', 120_000);
    await taskReaches(d, owned.id, 'exec_review', 120_000);
    expect((await cliJson<{ diffGate: unknown }>(['task', 'show', long.id, ...url])).body.diffGate).toBeNull();
    expect((await cli(['task', 'show', long.id, ...url])).stdout).not.toContain('diff gate');
  });

  // Refused before the commit (worktreeStage.ts): the board and `task show` said to delete it "from the task's
  // branch" and that the retry "keeps the refused commit"; the branch holds nothing of the run.
  it('says a file too large was never committed: delete it in the worktree, and the retry starts from the last commit', async () => {
    d = await startTestDaemon({ tickMs: 100 });
    const { cli, cliJson } = cliFor(d.config.home);
    const url = ['--url', d.url];
    const repo = gitRepo({ 'README.md': '# demo\n', '.maestro/config.json': JSON.stringify({ limits: { maxFileBytes: 1000 } }) });
    const script = join(tempDir('maestro-script-'), 'script.json');
    writeFileSync(script, JSON.stringify(SCRIPT));
    const project = await d.store.projects.create({ name: 'gate', repoPath: repo, config: { provider: { kind: 'scripted', script } } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Write a dump', complexity: 'easy' });
    d.orchestrator.kick();
    await taskReaches(d, task.id, 'needs_attention', 120_000);
    const runId = (await d.store.runs.list({ taskId: task.id })).at(-1)!.id;
    const branch = `maestro/${task.id}-v1`;
    expect((await cliJson<{ diffGate: unknown }>(['task', 'show', task.id, ...url])).body.diffGate).toEqual({
      runId, branch, lines: null, files: null, outsideOwned: null, largeFiles: { limit: 1000, files: [{ path: 'dump.bin', bytes: 5000 }] }, strayGitlinks: [], committed: false,
    });
    const shown = (await cli(['task', 'show', task.id, ...url])).stdout;
    expect(shown).toContain([
      `The diff gate refused the change of run ${runId}. Ways out:`,
      `  - 1 file(s) larger than limits.maxFileBytes (1000 bytes), left uncommitted in the worktree (dump.bin); nothing was committed. Delete it in the worktree (and add it to .gitignore if a tool makes it), or raise limits.maxFileBytes to 5000 or more in the project's .maestro/config.json ({"limits": {"maxFileBytes": 5000}}) and commit it.`,
      `Then maestro task retry ${task.id} starts a new run from the last commit of ${branch}, setting aside what is left uncommitted in the worktree (the run names the ref to restore it from); while a file past limits.maxFileBytes is still there, the retry is refused again.`,
    ].join('\n'));
    expect(shown).not.toContain('refused commit');
    // What it says holds: the branch has no commit of the run's, it is where main is.
    expect(git(repo, 'rev-parse', branch)).toBe(git(repo, 'rev-parse', 'HEAD'));
  });
});
