/**
 * The merge queue's batches (daemon/mergeBatch.ts), end to end: a real daemon, real git, real checks run by real
 * workers, the scripted agent. Changes approved together on a main that moved are checked together in ONE merge check
 * run (the chain the train would build), and land as that chain; a batch whose check fails asks nobody, and each of its
 * changes is checked alone, so only the one that breaks the checks is parked; a rider that stops counting while the
 * batch is checked never lands through it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TaskDetail } from '../../src/api/wire/responses.js';
import { reviewedCommit } from '../../src/core/reviewed.js';
import type { Task } from '../../src/core/types.js';
import { worktreeRoot } from '../../src/git/worktree.js';
import { releaseMergeLease, takeMergeLease } from '../../src/store/ops/daemons.js';
import { cliFor } from '../cli/helpers.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { bareRemote, git, makeRepo } from '../helpers/repo.js';
import { until, untilStatus } from '../helpers/wait.js';
import { filePerTaskScript } from './filePerTask.js';

const NAMES = ['a', 'b', 'c'];
const SCRIPT = filePerTaskScript(NAMES);

describe('the merge queue checks approved changes together', () => {
  let daemon: TestDaemon | null = null;
  let releaseDir: string | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 2000 });
    daemon = null;
    if (releaseDir) rmSync(releaseDir, { recursive: true, force: true });
    releaseDir = null;
    removeTempDirs();
  });

  /**
   * Tasks "Add a/b/c" at exec_review, then a person commits on main (so none of them is a fast-forward any more), then
   * all three approved together.
   */
  async function approvedOnMovedMain(checks: Array<{ name: string; command: string }>, home?: string, o: { shared?: boolean } = {}) {
    const files = { 'README.md': '# p\n', '.maestro/config.json': JSON.stringify({ mergeStrategy: 'merge', checks }) };
    // A shared remote (the branches kept, to be read after the merge), or the project's own checkout.
    const repo = o.shared ? bareRemote(tempDir('maestro-remote-'), files) : makeRepo(files);
    const script = join(tempDir('maestro-script-'), 'script.yaml');
    writeFileSync(script, SCRIPT);
    const d = (daemon = await startTestDaemon({ tickMs: 100, ...(home ? { home } : {}) }));
    const shared = o.shared ? { remote: repo, keepBranches: true } : {};
    const project = await d.store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script }, ...shared } });
    const tasks: Task[] = [];
    for (const n of NAMES) tasks.push(await d.store.tasks.create({ projectId: project.id, title: `Add ${n}`, complexity: 'easy' }));
    d.orchestrator.kick();
    for (const t of tasks) await untilStatus(d, t.id, 'exec_review', ['needs_attention', 'done']);
    const checkout = o.shared ? join(tempDir('maestro-person-'), 'w') : repo;
    if (o.shared) git(tempDir('maestro-x-'), 'clone', '-q', repo, checkout);
    writeFileSync(join(checkout, 'person.txt'), 'meanwhile\n');
    git(checkout, 'add', 'person.txt');
    git(checkout, '-c', 'user.name=p', '-c', 'user.email=p@p', 'commit', '-qm', 'a person commits meanwhile');
    if (o.shared) git(checkout, 'push', '-q', 'origin', 'main');
    const approved = new Map<string, string>();
    for (const t of tasks) approved.set(t.id, reviewedCommit(await d.store.tasks.get(t.id))!);
    // Approved together: while another daemon's train holds the project's merge lease, so that the first approval is not
    // merged (and checked alone) before the others come.
    const lease = { projectId: project.id, owner: 'another-daemon', now: d.store.clock(), leaseMs: 10 * 60_000 };
    expect(await takeMergeLease(d.store.db, lease)).toBe(true);
    for (const t of tasks) expect((await daemonRequest(d, 'POST', `/api/tasks/${t.id}/approve`, { who: 'ada' })).status).toBe(200);
    await releaseMergeLease(d.store.db, project.id, lease.owner);
    d.orchestrator.kick();
    return { d, repo, project, tasks, approved };
  }

  const settled = (d: TestDaemon, tasks: Task[]) =>
    until(d.bus, async () => {
      const all = await Promise.all(tasks.map((t) => d.store.tasks.get(t.id)));
      return all.every((t) => t.status === 'done' || t.status === 'needs_attention' || t.status === 'cancelled') ? all : null;
    }, 'every task merged, parked or cancelled');
  const checkRuns = async (d: TestDaemon, tasks: Task[]) => (await Promise.all(tasks.map(async (t) => (await d.store.runs.list({ taskId: t.id })).filter((r) => r.kind === 'merge_check')))).flat();
  const recordedSha = async (d: TestDaemon, id: string) => (await d.store.db.one<{ commit_sha: string }>(`SELECT commit_sha FROM merges WHERE task_id = $1`, [id]))?.commit_sha;

  it('checks three changes in one merge check run and lands them as its chain, each recorded with its own merge commit', async () => {
    const { d, repo, tasks, approved } = await approvedOnMovedMain([{ name: 'readme', command: 'test -f README.md' }]);
    const all = await settled(d, tasks);
    expect(all.map((t) => `${t.title}: ${t.status}${t.lastRunError ? ` (${t.lastRunError})` : ''}`)).toEqual(NAMES.map((n) => `Add ${n}: done`));
    const runs = await checkRuns(d, tasks);
    expect(runs.map((r) => r.status)).toEqual(['succeeded']);

    // Main's first-parent history: the person's commit, then one merge commit per change, in the chain's order.
    const merges = git(repo, 'log', '--first-parent', '--format=%H %P', '-4', 'main').split('\n').map((l) => l.split(' '));
    expect(git(repo, 'log', '-1', '--format=%s', merges[3]![0]!)).toBe('a person commits meanwhile');
    const chain = merges.slice(0, 3).reverse();
    const byTask = new Map<string, string>();
    for (const [sha, first, second] of chain) {
      const task = tasks.find((t) => approved.get(t.id) === second);
      expect(task, `merge ${sha} merges an approved commit`).toBeDefined();
      expect(git(repo, 'log', '-1', '--format=%s', sha!)).toBe(`Merge maestro/${task!.id}-v1`);
      expect(first).toBeDefined();
      byTask.set(task!.id, sha!);
    }
    expect(byTask.size).toBe(3);
    for (const t of tasks) {
      // Each task's merge is its own commit in the chain: `task show`, its merged diff and previousSha are its own.
      expect(await recordedSha(d, t.id)).toBe(byTask.get(t.id));
      const diff = (await daemonRequest<{ files: Array<{ path: string }> }>(d, 'GET', `/api/tasks/${t.id}/diff`)).body;
      expect(diff.files.map((f) => f.path)).toEqual([t.title.replace('Add ', '') + '.txt']);
    }
    // The leader's run names the batch in its log.
    const leader = tasks.find((t) => t.id === runs[0]!.taskId)!;
    const logs = await cliFor(d.config.home).cli(['task', 'logs', leader.id, '--url', d.url]);
    expect(logs.stdout).toContain('Checking 3 changes together on main, merged in this order: ');
  });

  it('a batch whose check fails asks nobody: each change is checked alone, and only the one that breaks it is parked', async () => {
    // b.txt breaks it together with the person's commit only: each change passed its checks alone.
    const { d, repo, tasks } = await approvedOnMovedMain([{ name: 'no-b', command: 'if [ -f b.txt ] && [ -f person.txt ]; then echo "b.txt breaks it"; exit 1; fi' }]);
    const all = await settled(d, tasks);
    expect(all.map((t) => `${t.title}: ${t.status}`)).toEqual(['Add a: done', 'Add b: needs_attention', 'Add c: done']);
    const b = all[1]!;
    expect(b.lastRunError).toMatch(/^CHECK_FAILED: check no-b failed \(exit 1\) on maestro\/\S+ merged with main/);
    expect(git(repo, 'ls-tree', '--name-only', 'main').split('\n')).toEqual(expect.arrayContaining(['a.txt', 'c.txt', 'person.txt']));
    expect(git(repo, 'ls-tree', '--name-only', 'main')).not.toMatch(/b\.txt/);
    // Only b ever went to needs_attention: the batch's failure parked nobody.
    for (const t of tasks) {
      const { events } = await d.store.events.list({ taskId: t.id, type: 'task.status', limit: 100 });
      const parked = events.filter((e) => e.payload.to === 'needs_attention');
      expect(parked, t.title).toHaveLength(t.id === b.id ? 1 : 0);
    }
    // One check of the three together, then one of each alone.
    const runs = await checkRuns(d, tasks);
    expect(runs).toHaveLength(4);
    expect(runs.filter((r) => r.status === 'failed').map((r) => r.taskId)).toEqual([b.id]);
  });

  it('a rider cancelled while the batch is checked does not land through it: the others are checked again and land', async () => {
    // The check holds while two of the changes are in the tree, until the test creates the release file. Under
    // /var/tmp: a check runs in the agent sandbox, whose /tmp is its own.
    releaseDir = mkdtempSync('/var/tmp/maestro-release-');
    const release = join(releaseDir, 'release');
    const command = `n=0; for f in a.txt b.txt c.txt; do [ -f $f ] && n=$((n+1)); done; [ $n -lt 2 ] || while [ ! -f '${release}' ]; do sleep 0.1; done`;
    const { d, repo, tasks } = await approvedOnMovedMain([{ name: 'held', command }]);

    const leaderRun = await until(d.bus, async () => (await checkRuns(d, tasks)).find((r) => r.status === 'running') ?? null, 'the batch check at work');
    const riders = tasks.filter((t) => t.id !== leaderRun.taskId);
    const [gone, kept] = riders as [Task, Task];
    // The riders say they are checked together with the leader.
    const leader = tasks.find((t) => t.id === leaderRun.taskId)!;
    const detail = (await daemonRequest<TaskDetail>(d, 'GET', `/api/tasks/${kept.id}`)).body;
    expect(detail.mergeTurn).toEqual({ behind: { id: leader.id, title: leader.title }, together: 3 });
    const show = await cliFor(d.config.home).cli(['task', 'show', kept.id, '--url', d.url]);
    expect(show.stdout).toContain(`Checking the merge together with ${leader.title} (${leader.id}): 3 changes, checked in one merge check.`);

    expect((await daemonRequest(d, 'POST', `/api/tasks/${gone.id}/cancel`, { who: 'ada' })).status).toBe(200);
    writeFileSync(release, '');
    const all = await settled(d, tasks);
    expect(all.find((t) => t.id === gone.id)!.status).toBe('cancelled');
    expect(all.filter((t) => t.id !== gone.id).map((t) => t.status)).toEqual(['done', 'done']);
    const goneFile = `${gone.title.replace('Add ', '')}.txt`;
    expect(git(repo, 'ls-tree', '--name-only', 'main')).not.toContain(goneFile);
    // The leader was checked again, with the rider still due: the batch's check no longer counted.
    expect((await checkRuns(d, [leader])).map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
    expect(await recordedSha(d, kept.id)).toBe(git(repo, 'rev-parse', 'main'));
    // On the same main: the second check is no new round (only main moving counts towards the 3 before a person is
    // asked why main "moved again"), as its merge.check event and the task detail's round say.
    const rounds = (await d.store.events.list({ taskId: leader.id, type: 'merge.check' })).events.map((e) => e.payload.round);
    expect(rounds).toEqual([1, 1]);
  });

  it('a batch check killed mid-way (daemon and worker, kill -9) resumes, rebuilds the chain from the base, and lands it once', async () => {
    // The check waits for the test's word once two changes are in the tree; the word is a file in the leader's
    // worktree (the sandboxed check sees no other folder the test can write).
    const held = { name: 'held', command: 'if [ -f a.txt ] && [ -f b.txt ]; then while [ ! -f go ]; do sleep 0.1; done; fi' };
    const home = tempDir('maestro-home-');
    const { d, repo, project, tasks } = await approvedOnMovedMain([held], home);
    const run = await until(d.bus, async () => (await checkRuns(d, tasks)).find((r) => r.status === 'running' && r.workerPid !== null) ?? null, 'the batch check with its worker');
    // The chain built, its check at work (held).
    await until(d.bus, async () => (await d.store.events.list({ runId: run.id, type: 'run.phase', limit: 100 })).events.find((e) => e.payload.stage === 'check:held' && e.payload.state === 'start') ?? null, 'the chain built, its check at work');
    const worktree = join(worktreeRoot(home, project.id), `${run.taskId}-v1`);
    // As a kill -9 of both leaves it: the daemon and the worker gone. And as if the worker died while it built the
    // chain: its merge stage not said done, the branch half-way along the chain.
    await d.abandon();
    daemon = null;
    process.kill(-run.workerPid!, 'SIGKILL');
    const stagesPath = join(run.runDir!, 'stages.json');
    const stages = JSON.parse(readFileSync(stagesPath, 'utf8')) as { done: Record<string, unknown> };
    for (const name of Object.keys(stages.done)) if (name !== 'worktree') delete stages.done[name];
    writeFileSync(stagesPath, JSON.stringify(stages));
    git(worktree, 'reset', '-q', '--hard', 'HEAD^1');
    writeFileSync(join(worktree, 'go'), '');

    const second = (daemon = await startTestDaemon({ tickMs: 100, home }));
    second.orchestrator.kick();
    const all = await settled(second, tasks);
    expect(all.map((t) => `${t.title}: ${t.status}${t.lastRunError ? ` (${t.lastRunError})` : ''}`)).toEqual(NAMES.map((n) => `Add ${n}: done`));
    // The same run, resumed: one check of the three.
    expect((await checkRuns(second, tasks)).map((r) => [r.id, r.status])).toEqual([[run.id, 'succeeded']]);
    expect((await second.store.events.list({ taskId: run.taskId, type: 'run.resumed' })).events.length).toBeGreaterThan(0);
    // Main: the person's commit, then one merge commit per change, each change merged once.
    const subjects = git(repo, 'log', '--first-parent', '--format=%s', '-4', 'main').split('\n');
    expect(subjects[3]).toBe('a person commits meanwhile');
    expect(subjects.slice(0, 3).sort()).toEqual(tasks.map((t) => `Merge maestro/${t.id}-v1`).sort());
    for (const t of tasks) expect(await recordedSha(second, t.id)).toBe(git(repo, 'log', '--first-parent', '--format=%H', `--grep=^Merge maestro/${t.id}-v1$`, 'main'));
  });

  it('a chain in main but not recorded (a kill between the push and the record) records each task with its own merge commit', async () => {
    // The merge check holds (person.txt, committed on main after the reviews, is in its tree only) until the test creates
    // the release file (under /var/tmp: the check's sandbox has its own /tmp).
    releaseDir = mkdtempSync('/var/tmp/maestro-release-');
    const release = join(releaseDir, 'release');
    const { d, repo, project, tasks, approved } = await approvedOnMovedMain([{ name: 'held', command: `[ ! -f person.txt ] || while [ ! -f '${release}' ]; do sleep 0.1; done` }]);
    // Another daemon's train holds the lease from the check on: the chain passes, and nothing lands it.
    const leaderRun = await until(d.bus, async () => (await checkRuns(d, tasks))[0] ?? null, 'the batch check');
    const lease = { projectId: project.id, owner: 'another-daemon', now: d.store.clock(), leaseMs: 10 * 60_000 };
    await until(d.bus, () => takeMergeLease(d.store.db, { ...lease, now: d.store.clock() }), 'the merge lease taken');
    writeFileSync(release, '');
    const leader = await until(d.bus, async () => {
      const t = await d.store.tasks.get(leaderRun.taskId);
      return (t.result?.mergeChecked as { batch?: unknown } | undefined)?.batch ? t : null;
    }, 'the chain checked');
    // As the push left it: main is the chain (the leader's branch), and every task is still merging.
    git(repo, 'merge', '-q', '--ff-only', `maestro/${leader.id}-v1`);
    for (const t of tasks) expect((await d.store.tasks.get(t.id)).status).toBe('merging');
    await releaseMergeLease(d.store.db, project.id, lease.owner);
    d.orchestrator.kick();

    const all = await settled(d, tasks);
    expect(all.map((t) => `${t.title}: ${t.status}`)).toEqual(NAMES.map((n) => `Add ${n}: done`));
    // Nothing merged twice: main is still the chain; each task recorded with the merge commit of its own change.
    expect(git(repo, 'rev-parse', 'main')).toBe(git(repo, 'rev-parse', `maestro/${leader.id}-v1`));
    for (const t of tasks) {
      const sha = (await recordedSha(d, t.id))!;
      expect(git(repo, 'rev-parse', `${sha}^2`), t.title).toBe(approved.get(t.id));
      expect(git(repo, 'log', '-1', '--format=%s', sha)).toBe(`Merge maestro/${t.id}-v1`);
    }
    expect((await checkRuns(d, tasks)).map((r) => r.status)).toEqual(['succeeded']);
  });

  it('on a shared remote, checks three changes in one run and lands the chain in one push, through the leader\'s branch', async () => {
    const { d, repo: remote, tasks, approved } = await approvedOnMovedMain([{ name: 'readme', command: 'test -f README.md' }], undefined, { shared: true });
    const all = await settled(d, tasks);
    expect(all.map((t) => `${t.title}: ${t.status}${t.lastRunError ? ` (${t.lastRunError})` : ''}`)).toEqual(NAMES.map((n) => `Add ${n}: done`));
    const runs = await checkRuns(d, tasks);
    expect(runs.map((r) => r.status)).toEqual(['succeeded']);
    // The leader's branch on the remote is the chain the check passed on; main fast-forwarded to it.
    const leader = runs[0]!.taskId;
    expect(git(remote, 'rev-parse', 'main')).toBe(git(remote, 'rev-parse', `refs/heads/maestro/${leader}-v1`));
    expect(git(remote, 'ls-tree', '--name-only', 'main').split('\n')).toEqual(expect.arrayContaining(['a.txt', 'b.txt', 'c.txt', 'person.txt']));
    for (const t of tasks) {
      const sha = (await recordedSha(d, t.id))!;
      expect(git(remote, 'rev-parse', `${sha}^2`)).toBe(approved.get(t.id));
      expect(git(remote, 'merge-base', '--is-ancestor', sha, 'main')).toBe('');
    }
  });
});
