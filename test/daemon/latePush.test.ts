/**
 * A daemon cut off from the database while its run goes on loses the task's lease, and another daemon runs the
 * task again, pushes its commit and has it reviewed. The cut-off daemon's run then ends and publishes its own
 * branch: that push was forced, replaced the reviewed commit on the remote, and the merge found the branch
 * moved after its review (CI, multihost: "maestro/t_…-v1 moved after its review"). Its push is now refused,
 * while the daemon that holds the task still puts its work over such a late push.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Project, Run, Task } from '../../src/core/types.js';
import { applyResultHooks, createDaemonHooks } from '../../src/daemon/projectHooks.js';
import { ProjectRepos } from '../../src/daemon/repos.js';
import type { ResultRecord } from '../../src/executor/protocol/outbox.js';
import { publishTaskBranch } from '../../src/daemon/runAftermath.js';
import { createStore, type Store } from '../../src/store/store.js';
import { freshSqlite, removeTempDirs, tempDir } from '../helpers/db.js';
import { bareRemote, git } from '../helpers/repo.js';

let store: Store | null = null;
afterEach(async () => {
  await store?.close();
  store = null;
  removeTempDirs();
});

interface Daemon {
  name: string;
  home: string;
  repos: ProjectRepos;
  clone: string;
}

async function daemon(name: string, project: Project): Promise<Daemon> {
  const home = tempDir(`maestro-${name}-`);
  const repos = new ProjectRepos(home);
  return { name, home, repos, clone: await repos.prepare(project) };
}

/** `d` claims the task and starts its execute run (the lease as given). */
async function claimAndRun(s: Store, task: Task, d: Daemon, leaseMs: number): Promise<Run> {
  const { won, attempt } = await s.tasks.claim(task.id, d.name, leaseMs);
  expect(won).toBe(true);
  expect(await s.tasks.advance({ id: task.id, owner: d.name, attempt }, 'queued', 'executing')).toBe(true);
  return s.runs.start({ taskId: task.id, kind: 'execute', model: null, traceId: `trace-${d.name}`, attempt, owner: d.name });
}

/** The run's commit on the task branch in `d`'s clone, made from the remote's main as the run would. */
function commitOnBranch(d: Daemon, branch: string, file: string): string {
  const wt = join(tempDir('maestro-wt-'), 'wt');
  git(d.clone, 'worktree', 'add', '-q', '-b', branch, wt, 'origin/main');
  writeFileSync(join(wt, file), `${d.name}\n`);
  git(wt, 'add', file);
  git(wt, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', `${file} by ${d.name}`);
  return git(wt, 'rev-parse', 'HEAD');
}

function worktreeOf(clone: string, branch: string): string {
  const listing = git(clone, 'worktree', 'list', '--porcelain').split('\n\n');
  return listing.find((w) => w.includes(`branch refs/heads/${branch}`))!.split('\n')[0]!.replace('worktree ', '');
}

async function setUp() {
  // The store's clock, moved on by hand: d2's lease runs out when the test says, never between two of its steps.
  let now = Date.now();
  store = createStore((await freshSqlite()).db, () => now);
  const s = store;
  const remote = bareRemote(tempDir('maestro-remote-'));
  const project = await s.projects.create({ name: 'shared', repoPath: remote, config: { remote } });
  const task = await s.tasks.create({ projectId: project.id, title: 'a', complexity: 'easy' });
  const branch = `maestro/${task.id}-v${task.version}`;
  const [late, holder] = [await daemon('d2', project), await daemon('d1', project)];
  // d2 runs the task; its lease passes (it heartbeats no more: cut off) and d1 takes the task over.
  const lateRun = await claimAndRun(s, task, late, 60_000);
  now += 61_000;
  expect(await s.tasks.expireClaims()).toEqual([task.id]);
  const holderRun = await claimAndRun(s, task, holder, 60_000);
  return { s, remote, project, task, branch, late, holder, lateRun, holderRun };
}

function publisher(s: Store, d: Daemon, run: Run) {
  const errors: Error[] = [];
  return { errors, publish: () => publishTaskBranch(s, d.repos, d.home, run, (err) => errors.push(err)) };
}

describe('the result of a run whose daemon lost the task', () => {
  it('asks no result hook: the hook would run for nothing, and its cancel would be said on the task another daemon holds', async () => {
    const { s, task, late, lateRun, holderRun } = await setUp();
    mkdirSync(join(late.clone, '.maestro'), { recursive: true });
    const ran = join(tempDir('maestro-hook-'), 'ran');
    writeFileSync(join(late.clone, '.maestro', 'hooks.mjs'), `import { appendFileSync } from 'node:fs';\nexport default { 'before:exec-review': () => { appendFileSync(${JSON.stringify(ran)}, 'ran\\n'); return { cancel: 'not today' }; } };\n`);
    const hooks = createDaemonHooks(s, { home: late.home, agentSandbox: null });
    const reviewed: ResultRecord = { type: 'result', kind: 'review', seq: 1, traceId: 'trace-d2', runId: lateRun.id, at: 0, data: { next: 'exec_review', verdict: 'approve' }, usage: { inputTokens: 0, outputTokens: 0, costUsd: 0, models: [], agentCalls: 0 } };
    expect(await applyResultHooks(s, hooks, { ...lateRun, kind: 'review' }, reviewed)).toBe(reviewed);
    expect(existsSync(ran)).toBe(false);
    const said = (await s.events.list({ taskId: task.id, limit: 100 })).events.filter((e) => e.type === 'hook.cancelled');
    expect(said).toEqual([]);
    // The holder's run is asked as before (the same hook, in the same clone).
    const held = await applyResultHooks(s, hooks, { ...holderRun, kind: 'review' }, reviewed);
    expect(held).toMatchObject({ needsAttention: { reason: 'hook', details: { hook: 'before:exec-review', message: 'not today' } } });
    expect(readFileSync(ran, 'utf8')).toBe('ran\n');
  });
});

describe('the push of a task branch by a daemon that lost the task', () => {
  it('is refused after the holder pushed: the reviewed commit stays on the remote, and the refusal is said', async () => {
    const { s, remote, task, branch, late, holder, lateRun, holderRun } = await setUp();
    const reviewed = commitOnBranch(holder, branch, 'holder.txt');
    await publisher(s, holder, holderRun).publish();
    expect(git(remote, 'rev-parse', branch)).toBe(reviewed);

    // d2's run ends after all, on a commit of its own.
    commitOnBranch(late, branch, 'late.txt');
    const { errors, publish } = publisher(s, late, lateRun);
    await publish();
    expect(git(remote, 'rev-parse', branch)).toBe(reviewed);
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(new RegExp(`^The push of ${branch} to the remote failed: .*this daemon no longer holds the task`))]);
    const said = (await s.events.list({ taskId: task.id, limit: 100 })).events.filter((e) => e.type === 'git.push_failed');
    expect(said).toMatchObject([{ runId: lateRun.id, payload: { message: errors[0]!.message } }]);
  });

  it('leaves no trace in the next run of the task there: the daemon given the task again starts from the work that counted', async () => {
    const { s, project, remote, branch, late, holder, lateRun, holderRun } = await setUp();
    const reviewed = commitOnBranch(holder, branch, 'holder.txt');
    await publisher(s, holder, holderRun).publish();
    commitOnBranch(late, branch, 'late.txt');
    const lateWorktree = worktreeOf(late.clone, branch);
    await publisher(s, late, lateRun).publish();
    // Its run was cut short after one more write, left uncommitted (and in the way of holder.txt).
    writeFileSync(join(lateWorktree, 'holder.txt'), 'written by the discarded run\n');
    // The reviewers asked for changes to the holder's commit (it is what the task's result names), and the task
    // comes back to d2: its clone still has its own discarded commit on the branch.
    const run = await late.repos.prepareRun(project, branch, { commit: null, counted: reviewed, published: true, holds: async () => true });
    expect(git(run, 'rev-parse', branch)).toBe(reviewed);
    expect(readFileSync(join(lateWorktree, 'holder.txt'), 'utf8')).toBe('d1\n');
    expect(existsSync(join(lateWorktree, 'late.txt'))).toBe(false);
    expect(git(lateWorktree, 'status', '--porcelain')).toBe('');
    // Nothing was deleted: the uncommitted file is set aside, the discarded commit is in the branch's reflog.
    const [setAside] = git(late.clone, 'for-each-ref', '--format=%(refname)', 'refs/maestro/set-aside/').split('\n');
    expect(git(late.clone, 'show', `${setAside}:holder.txt`)).toBe('written by the discarded run');
    expect(git(late.clone, 'log', '-g', '--format=%s', branch)).toContain('late.txt by d2');
    expect(git(remote, 'rev-parse', branch)).toBe(reviewed);
  });

  it('lands first and is then replaced by the holder’s push', async () => {
    const { s, remote, branch, late, holder, holderRun } = await setUp();
    const lateCommit = commitOnBranch(late, branch, 'late.txt');
    // Before the lease passed on, d2 still held the task: its push had nothing to refuse.
    git(late.clone, 'push', '-q', 'origin', `${branch}:${branch}`);
    expect(git(remote, 'rev-parse', branch)).toBe(lateCommit);

    const ours = commitOnBranch(holder, branch, 'holder.txt');
    const { errors, publish } = publisher(s, holder, holderRun);
    await publish();
    expect(errors).toEqual([]);
    expect(git(remote, 'rev-parse', branch)).toBe(ours);
  });
});
