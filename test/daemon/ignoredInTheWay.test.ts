/**
 * Git-ignored files in the project's checkout where an approved change puts its own, end to end: a real daemon,
 * real git, the scripted agent in real workers. git merge would overwrite or delete them without a word (a task
 * that stopped ignoring secret.env replaced the person's; one that put a file where `.workflow/sessions` was deleted
 * Maestro's sessions). The gate says so before the approval; after it, the merge stops before touching the
 * checkout and the task waits for the person, naming the files and the way out; moved aside, `task retry` merges,
 * over Maestro's own ignored state, which an ordinary change never touches. Main moves after the review in both,
 * so the merge is a merge commit: git's --no-overwrite-ignore does not stop that one.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/types.js';
import { cliFor } from '../cli/helpers.js';
import { removeTempDirs } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { git, makeRepo } from '../helpers/repo.js';
import { untilStatus } from '../helpers/wait.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

/** Every file and link under `dir` with its content or target: what must come through a stopped merge unchanged. */
function contents(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const path = join(e.parentPath, e.name);
    if (e.isFile()) out[path.slice(dir.length + 1)] = readFileSync(path, 'utf8');
    if (e.isSymbolicLink()) out[path.slice(dir.length + 1)] = `-> ${readlinkSync(path)}`;
  }
  return out;
}

describe('git-ignored files in the way of a merge', () => {
  let daemon: TestDaemon | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 2000 });
    daemon = null;
    removeTempDirs();
  });

  /** A task of ignored.yaml run to exec_review, then a commit of the person's on main. */
  async function atGate(repo: string, title: string, ownedFiles: string[]): Promise<{ d: TestDaemon; task: Task; detail: () => Promise<string | null> }> {
    daemon = await startTestDaemon({ tickMs: 100 });
    const d = daemon;
    const project = await d.store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script: fixture('ignored.yaml') } } });
    const task = await d.store.tasks.create({ projectId: project.id, title, complexity: 'easy', ownedFiles });
    d.orchestrator.kick();
    await untilStatus(d, task.id, 'exec_review');
    writeFileSync(join(repo, 'NOTES.md'), 'mine\n');
    git(repo, 'add', 'NOTES.md');
    git(repo, 'commit', '-q', '-m', 'notes');
    return { d, task, detail: async () => (await daemonRequest<{ mergeBlocked: string | null }>(d, 'GET', `/api/tasks/${task.id}`)).body.mergeBlocked };
  }

  it("a file the change stops ignoring and adds: the person's stays, the task waits, and once it is moved aside a retry merges", async () => {
    const repo = makeRepo({ 'README.md': '# test\n', '.gitignore': 'secret.env\n' });
    writeFileSync(join(repo, 'secret.env'), 'SECRET=xyz\n');
    const { d, task, detail } = await atGate(repo, 'Add the secret example', ['.gitignore', 'secret.env']);
    const branch = `maestro/${task.id}-v1`;
    const inTheWay = `the main checkout ${repo} has git-ignored files where merging ${branch} puts its own (secret.env): git would overwrite or delete them without asking`;
    expect(await detail()).toBe(`${inTheWay}: move them aside`);

    const approved = await cliFor(d.config.home).cli(['task', 'approve', task.id, '--url', d.url]);
    expect(approved.code).toBe(0);
    expect(approved.stderr).toBe(`maestro: the merge will stop: ${inTheWay}: move them aside. Then \`maestro task retry ${task.id}\` merges it.\n`);
    const main = git(repo, 'rev-parse', 'HEAD');
    d.orchestrator.kick();
    const parked = await untilStatus(d, task.id, 'needs_attention', ['done']);
    expect(parked.lastRunError).toBe(`${inTheWay}; this merge changed nothing in main: move them aside, then run \`maestro task retry ${task.id}\` to merge it`);
    expect(readFileSync(join(repo, 'secret.env'), 'utf8')).toBe('SECRET=xyz\n');
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(main);
    expect(git(repo, 'status', '--porcelain', '--untracked-files=no')).toBe('');
    expect((await d.store.runs.list({ taskId: task.id })).map((r) => r.kind)).toEqual(['execute', 'review']);

    // Maestro's own ignored state is there (the task's knowledge session): the retry's merge goes in over it.
    const sessions = join(repo, '.workflow', 'sessions');
    const kept = contents(sessions);
    expect(Object.keys(kept).length).toBeGreaterThan(0);
    renameSync(join(repo, 'secret.env'), join(repo, 'secret.env.mine'));
    expect(await daemonRequest(d, 'POST', `/api/tasks/${task.id}/retry`)).toMatchObject({ status: 200, body: { task: { status: 'merging' } } });
    d.orchestrator.kick();
    await untilStatus(d, task.id, 'done');
    expect(readFileSync(join(repo, 'secret.env'), 'utf8')).toBe('SECRET=task\n');
    expect(readFileSync(join(repo, 'secret.env.mine'), 'utf8')).toBe('SECRET=xyz\n');
    expect(Object.keys(contents(sessions))).toEqual(expect.arrayContaining(Object.keys(kept)));
  });

  it("a file where Maestro's sessions are: they stay, and the task waits, named as Maestro's own", async () => {
    const repo = makeRepo();
    const { d, task, detail } = await atGate(repo, 'Move the sessions away', ['.workflow/sessions']);
    // The trial's 17 folders, each ignoring itself as Maestro writes them, beside the task's own.
    for (let i = 1; i <= 17; i++) {
      mkdirSync(join(repo, '.workflow', 'sessions', `old-${i}`), { recursive: true });
      writeFileSync(join(repo, '.workflow', 'sessions', `old-${i}`, '.gitignore'), '*\n');
      writeFileSync(join(repo, '.workflow', 'sessions', `old-${i}`, 'ledger.jsonl'), `{"n":${i}}\n`);
    }
    const sessions = join(repo, '.workflow', 'sessions');
    const trial = () => Object.fromEntries(Object.entries(contents(sessions)).filter(([k]) => k.startsWith('old-')));
    const kept = trial();
    // The task's own session is in it too, and Maestro still writes there: counted as git counts them when said.
    const own = () => `puts its own (.workflow/sessions/ (a folder of ${git(repo, 'ls-files', '--others', '--ignored', '--exclude-standard', '.workflow/sessions').split('\n').length} files)): git would overwrite or delete them without asking`;
    const why = ". .workflow/sessions is Maestro's own state on this machine (its knowledge sessions with their pending candidates, its search index): a task has no business replacing it, so cancel the task; if you mean it, move them aside";
    expect(await detail()).toBe(`the main checkout ${repo} has git-ignored files where merging maestro/${task.id}-v1 ${own()}${why}`);

    expect(await daemonRequest(d, 'POST', `/api/tasks/${task.id}/approve`, {})).toMatchObject({ status: 200 });
    const main = git(repo, 'rev-parse', 'HEAD');
    d.orchestrator.kick();
    const parked = await untilStatus(d, task.id, 'needs_attention', ['done']);
    expect(parked.lastRunError).toBe(`the main checkout ${repo} has git-ignored files where merging maestro/${task.id}-v1 ${own()}; this merge changed nothing in main${why}, then run \`maestro task retry ${task.id}\` to merge it`);
    expect(trial()).toEqual(kept);
    expect(Object.keys(kept)).toHaveLength(34);
    expect(existsSync(join(sessions, `task-${task.id.replace('_', '-')}`, 'session.json'))).toBe(true);
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(main);
  });
});
