/**
 * Merge trains on real git and a real SQLite store: several approved tasks of
 * one project land together (on a shared remote, in one push), each recorded
 * exactly once; a conflicting or vetoed task in the middle drops out and the
 * others go on; work already in main (a push just before a crash) is recorded
 * without merging again; a refused push records nothing.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Project, Task } from '../core/types.js';
import { createStore, type Store } from '../store/store.js';
import { freshSqlite, removeTempDirs, tempDir } from '../../test/helpers/db.js';
import { bareRemote, git, makeRepo } from '../../test/helpers/repo.js';
import type { MergeRunKind } from './conflictRuns.js';
import { MergeCoordinator, type MergeHooks } from './mergeCoordinator.js';
import { LOCK_WAIT_MS } from './mergeLock.js';
import { ProjectRepos } from './repos.js';
import { beatDaemon, registerDaemon, releaseMergeLease, takeMergeLease } from '../store/ops/daemons.js';

let store: Store | null = null;
afterEach(async () => {
  await store?.close();
  store = null;
  removeTempDirs();
});

/** The test's clock: it moves one millisecond per reading (approvals have a strict order), and jumps when told. */
let now = 0;

async function openStore(): Promise<Store> {
  now = Date.now();
  store = createStore((await freshSqlite()).db, () => ++now);
  return store;
}

/** A task approved at exec_review whose work is on `branch`. */
/** Two projects, each its own repository with one branch ready to merge (maestro/t-a adds a.txt, maestro/t-b b.txt). */
async function twoProjects(): Promise<{ s: Store; repoA: string; repoB: string; projectA: Project; projectB: Project }> {
    const s = await openStore();
    const repoA = makeRepo({ 'README.md': '# a\n' });
    const repoB = makeRepo({ 'README.md': '# b\n' });
    branchWith(repoA, 'maestro/t-a', { 'a.txt': 'a\n' });
    branchWith(repoB, 'maestro/t-b', { 'b.txt': 'b\n' });
    const projectA = await s.projects.create({ name: 'a', repoPath: repoA, config: {} });
    const projectB = await s.projects.create({ name: 'b', repoPath: repoB, config: {} });
    return { s, repoA, repoB, projectA, projectB };
}

async function approved(s: Store, project: Project, title: string, branch: string, commitSha?: string): Promise<Task> {
  const task = await s.tasks.create({ projectId: project.id, title, complexity: 'easy' });
  for (const to of ['queued', 'executing', 'reviewing', 'exec_review'] as const) await s.tasks.transition(task.id, to);
  await s.tasks.transition(task.id, 'merging', { fields: { result: { kind: 'review', verdict: 'approve', branch, ...(commitSha ? { commitSha } : {}) } } });
  return s.tasks.get(task.id);
}

/** A branch from main in `repo` with one commit writing `files`. */
function branchWith(repo: string, branch: string, files: Record<string, string>, from = 'main'): void {
  git(repo, 'checkout', '-q', '-b', branch, from);
  for (const [path, content] of Object.entries(files)) writeFileSync(join(repo, path), content);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', `work on ${branch}`);
  git(repo, 'checkout', '-q', '-');
}

/**
 * A shared remote, and a worker host's clone of it (`work`) that made `branches` (maestro/t-<name>, each from main
 * with its files) and published them.
 */
function sharedWork(branches: Record<string, Record<string, string>>): { root: string; remote: string; work: string } {
  const root = tempDir('maestro-train-');
  const remote = bareRemote(root, { 'README.md': '# shared\n' });
  const work = join(root, 'work');
  git(root, 'clone', '-q', remote, work);
  for (const [name, files] of Object.entries(branches)) branchWith(work, `maestro/t-${name}`, files);
  for (const name of Object.keys(branches)) git(work, 'push', '-q', 'origin', `maestro/t-${name}`);
  return { root, remote, work };
}

/** From now on the remote logs each push of main: a line naming the refs it moved, sorted. */
function logPushesOfMain(root: string, remote: string): () => string[] {
  const log = join(root, 'pushes.log');
  writeFileSync(join(remote, 'hooks', 'post-receive'), `#!/bin/sh\nawk '{ print $3 }' | LC_ALL=C sort | tr '\\n' ' ' | grep -E '(^| )refs/heads/main( |$)' >> '${log}'\necho >> '${log}'\n`);
  chmodSync(join(remote, 'hooks', 'post-receive'), 0o755);
  return () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => l.trim()) : []);
}

function coordinator(s: Store, home: string, owner: string, extra: { hooks?: MergeHooks; conflictRuns?: Array<{ task: string; locks: number }>; slotFree?: () => boolean; onAgain?: () => void; beforeConflictRun?: (task: Task) => Promise<void>; repos?: ProjectRepos; lockWaitMs?: number } = {}) {
  const errors: Error[] = [];
  const running = new Map<string, MergeRunKind>(); // tasks whose conflict run (or merge check) started (and, here, never ends)
  const merges = new MergeCoordinator(s, {
    hooks: extra.hooks ?? {},
    startConflictRun: async (task, kind) => {
      if (extra.slotFree?.() === false) return false;
      await extra.beforeConflictRun?.(task); // what the run's start does first (its clone's sync)
      // Opened once the train is pushed: the lease is free again and the run could take this clone.
      const locks = await s.db.all(`SELECT project_id FROM merge_locks`);
      extra.conflictRuns?.push({ task: task.id, locks: locks.length });
      running.set(task.id, kind);
      return true;
    },
    runningRun: async (taskId) => running.get(taskId) ?? null,
    repos: extra.repos ?? new ProjectRepos(home),
    owner,
    leaseMs: 60_000,
    onChange: () => {},
    onAgain: extra.onAgain,
    onError: (err) => errors.push(err),
    lockWaitMs: extra.lockWaitMs,
  });
  return { merges, errors };
}

const beat = (s: Store, name: string) => beatDaemon(s.db, name, s.clock());

/** Commits on main that touched `path`. */
const commitsTouching = (repo: string, ref: string, path: string) => git(repo, 'log', '--format=%H', ref, '--', path).split('\n').filter(Boolean);

describe('merge trains', () => {
  it('on a shared remote: four approved tasks land in one push, each recorded once, a conflicting one in the middle left to a conflict run', async () => {
    const s = await openStore();
    const { root, remote, work } = sharedWork({
      crashed: { 'crashed.txt': 'crashed\n' },
      a: { 'a.txt': 'a\n', 'README.md': '# shared, by a\n' },
      b: { 'README.md': '# shared, by b\n' }, // the same line as a: conflicts once a is in
      c: { 'c.txt': 'c\n' },
    });
    const pushLog = logPushesOfMain(root, remote);
    const pushCount = () => pushLog().length;
    // One task's merge reached the remote, then its daemon died before recording it.
    git(work, 'merge', '-q', '--no-ff', '-m', 'Merge maestro/t-crashed', 'maestro/t-crashed');
    git(work, 'push', '-q', 'origin', 'main');
    const before = pushCount();
    const logged = pushLog().length;

    const project = await s.projects.create({ name: 'shared', repoPath: remote, config: { remote } });
    const crashed = await approved(s, project, 'crashed', 'maestro/t-crashed');
    const a = await approved(s, project, 'a', 'maestro/t-a');
    const b = await approved(s, project, 'b', 'maestro/t-b');
    const c = await approved(s, project, 'c', 'maestro/t-c');

    // Two daemons try at once: one lease, one train.
    const conflictRuns: Array<{ task: string; locks: number }> = [];
    const d1 = coordinator(s, tempDir('maestro-home-'), 'd1', { conflictRuns });
    const d2 = coordinator(s, tempDir('maestro-home-'), 'd2', { conflictRuns });
    await Promise.all([d1.merges.tick(), d2.merges.tick()]);
    expect([...d1.errors, ...d2.errors]).toEqual([]);

    expect(pushCount() - before).toBe(1);
    const statuses = await Promise.all([crashed, a, b, c].map(async (t) => (await s.tasks.get(t.id)).status));
    expect(statuses).toEqual(['done', 'done', 'merging', 'done']);
    const ledger = await s.db.all<{ task_id: string; commit_sha: string }>(`SELECT task_id, commit_sha FROM merges ORDER BY task_id`);
    expect(ledger.map((m) => m.task_id).sort()).toEqual([crashed.id, a.id, c.id].sort());
    // The conflict run opened once the lease was free again, with the event saying why.
    expect(conflictRuns).toEqual([{ task: b.id, locks: 0 }]);
    expect((await s.events.list({ taskId: b.id, type: 'merge.conflict' })).events).toHaveLength(1);
    const how = async (t: Task) => (await s.events.list({ taskId: t.id, type: 'task.status', limit: 100 })).events.at(-1)?.payload.merged;
    expect(await how(crashed)).toMatchObject({ how: 'already in main' });
    // The merged branches are gone from the remote too, in the push of main; the conflicting one stays for its conflict run.
    expect(git(remote, 'branch', '--list', 'maestro/*').split('\n').map((l) => l.trim())).toEqual(['maestro/t-b']);
    expect(pushLog().slice(logged)).toEqual(['refs/heads/maestro/t-a refs/heads/maestro/t-c refs/heads/maestro/t-crashed refs/heads/main']);

    // The remote's main: each file brought in by exactly one commit, b's README change not in it.
    const check = join(root, 'check');
    git(root, 'clone', '-q', remote, check);
    for (const f of ['crashed.txt', 'a.txt', 'c.txt']) expect(commitsTouching(check, 'HEAD', f)).toHaveLength(1);
    expect(readFileSync(join(check, 'README.md'), 'utf8')).toBe('# shared, by a\n');
    const head = git(check, 'rev-parse', 'HEAD');
    expect(ledger.find((m) => m.task_id === c.id)?.commit_sha).toBe(head);

    // Nothing is merged or pushed twice: another round finds only b, which conflicts again.
    await d1.merges.tick();
    expect(pushCount() - before).toBe(1);
    expect(git(remote, 'rev-parse', 'main')).toBe(head);
    expect(await s.db.all(`SELECT task_id FROM merges`)).toHaveLength(3);
  });

  it('on a shared remote: work approved while the train syncs rides in it; one whose reviewed commit the sync did not bring waits for the next train, not for a person', async () => {
    const s = await openStore();
    const { root, remote, work } = sharedWork({ a: { 'a.txt': 'a\n' }, b: { 'b.txt': 'b\n' }, c: { 'c.txt': 'c\n' } });
    const pushLog = logPushesOfMain(root, remote);
    const tip = (b: string) => git(work, 'rev-parse', `maestro/t-${b}`);
    const project = await s.projects.create({ name: 'shared', repoPath: remote, config: { remote } });
    const a = await approved(s, project, 'a', 'maestro/t-a', tip('a'));
    let b: Task | null = null;
    let c: Task | null = null;
    // While the train's sync runs (once it has fetched): b is approved at the commit the remote has; c's conflict
    // run publishes a new commit and c is approved at it, after the fetch.
    const during = async () => {
      b = await approved(s, project, 'b', 'maestro/t-b', tip('b'));
      git(work, 'checkout', '-q', 'maestro/t-c');
      writeFileSync(join(work, 'c.txt'), 'c, resolved\n');
      git(work, 'commit', '-q', '-am', 'resolve c');
      git(work, 'checkout', '-q', 'main');
      git(work, 'push', '-q', 'origin', 'maestro/t-c');
      c = await approved(s, project, 'c', 'maestro/t-c', tip('c'));
    };
    let syncs = 0;
    const repos = new (class extends ProjectRepos {
      override async sync(p: Project): Promise<string> {
        const clone = await super.sync(p);
        if (++syncs === 1) await during();
        return clone;
      }
    })(tempDir('maestro-home-'));
    const errors: Error[] = [];
    const merges = new MergeCoordinator(s, { hooks: {}, startConflictRun: async () => true, runningRun: async () => null, repos, owner: 'd1', leaseMs: 60_000, onChange: () => {}, onError: (e) => errors.push(e) });
    await merges.tick();
    expect(errors).toEqual([]);
    // a and b in the first train (one push, one sync); c, its new commit not fetched, in a train of its own after it.
    expect((await s.tasks.get(a.id)).status).toBe('done');
    expect((await s.tasks.get(b!.id)).status).toBe('done');
    expect((await s.tasks.get(c!.id)).status).toBe('done');
    expect(pushLog()).toEqual([
      'refs/heads/maestro/t-a refs/heads/maestro/t-b refs/heads/main',
      'refs/heads/maestro/t-c refs/heads/main',
    ]);
    expect(syncs).toBe(2);
    const check = join(root, 'check');
    git(root, 'clone', '-q', remote, check);
    expect(readFileSync(join(check, 'c.txt'), 'utf8')).toBe('c, resolved\n');
  });

  it('on a shared remote: a train whose push took main and the branch together, its daemon gone before recording it, is recorded by the next train', async () => {
    const s = await openStore();
    const { remote, work } = sharedWork({ d: { 'd.txt': 'd\n' } });
    const reviewed = git(work, 'rev-parse', 'maestro/t-d');
    const project = await s.projects.create({ name: 'shared', repoPath: remote, config: { remote } });
    const d = await approved(s, project, 'd', 'maestro/t-d', reviewed);
    // The dead daemon's train: main with the merge, and the branch deleted, in one push.
    git(work, 'merge', '-q', '--no-ff', '-m', 'Merge maestro/t-d', 'maestro/t-d');
    git(work, 'push', '-q', '--atomic', 'origin', 'main', ':refs/heads/maestro/t-d');
    const main = git(remote, 'rev-parse', 'main');

    const next = coordinator(s, tempDir('maestro-home-'), 'd2');
    await next.merges.tick();
    expect(next.errors).toEqual([]);
    expect((await s.tasks.get(d.id)).status).toBe('done');
    const merged = (await s.events.list({ taskId: d.id, type: 'task.status', limit: 100 })).events.at(-1)?.payload.merged;
    expect(merged).toMatchObject({ how: 'already in main' });
    expect(git(remote, 'rev-parse', 'main')).toBe(main);
  });

  it('on a shared remote: a conflict one daemon found (its run waiting for a slot) is left alone by another daemon while the first lives', async () => {
    const s = await openStore();
    const { remote } = sharedWork({ a: { 'README.md': '# shared, by a\n' }, b: { 'README.md': '# shared, by b\n' } }); // b conflicts once a is in
    const project = await s.projects.create({ name: 'shared', repoPath: remote, config: { remote } });
    const a = await approved(s, project, 'a', 'maestro/t-a');
    const b = await approved(s, project, 'b', 'maestro/t-b');
    for (const name of ['d1', 'd2']) await registerDaemon(s.db, { name, host: 'h', pid: 1, home: `/homes/${name}`, now: s.clock(), staleMs: 180_000 });

    const opened: Array<{ task: string; locks: number }> = [];
    const d1 = coordinator(s, tempDir('maestro-home-'), 'd1', { conflictRuns: opened, slotFree: () => false });
    const d2 = coordinator(s, tempDir('maestro-home-'), 'd2', { conflictRuns: opened });
    await d1.merges.tick(); // a lands; b conflicts, and d1 has no free slot for its conflict run yet
    expect([(await s.tasks.get(a.id)).status, (await s.tasks.get(b.id)).status]).toEqual(['done', 'merging']);
    expect(opened).toEqual([]);
    await d2.merges.tick(); // d2 takes the lease: b is d1's to resolve, not merged again, no second conflict run
    expect(opened).toEqual([]);
    const conflicts = async () => (await s.events.list({ taskId: b.id, type: 'merge.conflict' })).events.map((e) => e.payload.owner);
    expect(await conflicts()).toEqual(['d1']);

    // d1 dies (its heartbeat goes stale): now d2 takes b over, conflicts, and opens the conflict run.
    now += 180_001;
    await d2.merges.tick();
    expect(opened).toEqual([{ task: b.id, locks: 0 }]);
    expect(await conflicts()).toEqual(['d1', 'd2']);

    // The task moves on after the conflict (a person was asked, then retried it): d2, alive, holds it no more.
    await beat(s, 'd2');
    await s.tasks.transition(b.id, 'needs_attention', { from: 'merging', reason: 'the on:conflict hook asks for a person' });
    await s.tasks.retry(b.id, 'needs_attention');
    const d3 = coordinator(s, tempDir('maestro-home-'), 'd3', { conflictRuns: opened });
    await d3.merges.tick();
    expect(opened).toEqual([{ task: b.id, locks: 0 }, { task: b.id, locks: 0 }]);
    expect([...d1.errors, ...d2.errors, ...d3.errors]).toEqual([]);
  });

  it("on a shared remote: a merge check another daemon owes (its run waiting for a slot there) keeps this daemon from landing the project's other changes meanwhile", async () => {
    // The merge queue checks one change at a time (mergeQueue.ts), across daemons too: c landing (or being checked)
    // here while d1's check of b waits would move main under that check, and it would be checked again.
    const s = await openStore();
    const root = tempDir('maestro-train-');
    const remote = bareRemote(root, { 'README.md': '# shared\n', '.maestro/config.json': JSON.stringify({ mergeStrategy: 'merge', checks: [{ name: 'ok', command: 'true' }] }) });
    const work = join(root, 'work');
    git(root, 'clone', '-q', remote, work);
    for (const n of ['a', 'b', 'c']) {
      branchWith(work, `maestro/t-${n}`, { [`${n}.txt`]: `${n}\n` });
      git(work, 'push', '-q', 'origin', `maestro/t-${n}`);
    }
    const project = await s.projects.create({ name: 'shared', repoPath: remote, config: { remote } });
    const a = await approved(s, project, 'a', 'maestro/t-a');
    const b = await approved(s, project, 'b', 'maestro/t-b');
    for (const name of ['d1', 'd2']) await registerDaemon(s.db, { name, host: 'h', pid: 1, home: `/homes/${name}`, now: s.clock(), staleMs: 180_000 });
    const opened: Array<{ task: string; locks: number }> = [];
    const d1 = coordinator(s, tempDir('maestro-home-'), 'd1', { conflictRuns: opened, slotFree: () => false });
    const d2 = coordinator(s, tempDir('maestro-home-'), 'd2', { conflictRuns: opened });
    await d1.merges.tick(); // a lands (a fast-forward); b's merge must be checked, and d1 has no slot free for its check
    expect([(await s.tasks.get(a.id)).status, (await s.tasks.get(b.id)).status]).toEqual(['done', 'merging']);
    const mainAfterA = git(remote, 'rev-parse', 'main');
    const c = await approved(s, project, 'c', 'maestro/t-c');

    await d2.merges.tick(); // b's check is d1's; c waits its turn: nothing lands, no second check opens
    expect(git(remote, 'rev-parse', 'main')).toBe(mainAfterA);
    expect(opened).toEqual([]);
    expect((await s.events.list({ taskId: c.id, type: 'merge.check' })).events).toEqual([]);
    expect((await s.tasks.get(c.id)).status).toBe('merging');
    expect([...d1.errors, ...d2.errors]).toEqual([]);
  });

  it("on a shared remote: another daemon's train under way is seen without taking this daemon's clone, which its runs' syncs need", async () => {
    const s = await openStore();
    const { remote } = sharedWork({ a: { 'a.txt': 'a\n' } });
    const project = await s.projects.create({ name: 'shared', repoPath: remote, config: { remote } });
    const a = await approved(s, project, 'a', 'maestro/t-a');
    const repos = new ProjectRepos(tempDir('maestro-home-'));
    const d2 = coordinator(s, tempDir('maestro-home-'), 'd2', { repos });
    expect(await takeMergeLease(s.db, { projectId: project.id, owner: 'd1', now: s.clock(), leaseMs: 60_000 })).toBe(true);
    // A run's sync holds the clone (here for as long as the test says): the tick does not wait for it.
    let release = () => {};
    const held = repos.exclusive(project.id, () => new Promise<void>((r) => (release = r)));
    await d2.merges.tick();
    expect((await s.tasks.get(a.id)).status).toBe('merging');
    // Once d1's lease is gone and the clone free, d2 merges it.
    release();
    await held;
    await releaseMergeLease(s.db, project.id, 'd1');
    await d2.merges.tick();
    expect((await s.tasks.get(a.id)).status).toBe('done');
    expect(d2.errors).toEqual([]);
  });

  it("in a project's own repository too, one daemon merges at a time: another holding the project's merge lease keeps it waiting", async () => {
    const s = await openStore();
    const repo = makeRepo({ 'README.md': '# own\n' });
    branchWith(repo, 'maestro/t-a', { 'a.txt': 'a\n' });
    const project = await s.projects.create({ name: 'own', repoPath: repo, config: {} });
    const a = await approved(s, project, 'a', 'maestro/t-a');
    expect(await takeMergeLease(s.db, { projectId: project.id, owner: 'd1', now: s.clock(), leaseMs: 60_000 })).toBe(true);
    const d2 = coordinator(s, tempDir('maestro-home-'), 'd2');
    await d2.merges.tick();
    expect((await s.tasks.get(a.id)).status).toBe('merging');
    await releaseMergeLease(s.db, project.id, 'd1');
    await d2.merges.tick();
    expect((await s.tasks.get(a.id)).status).toBe('done');
    expect(await s.db.all(`SELECT project_id FROM merge_locks`)).toEqual([]);
    expect(d2.errors).toEqual([]);
  });

  it("in a project's own repository: the train merges around a conflicting task and one the before:merge hook refuses", async () => {
    const s = await openStore();
    const repo = makeRepo({ 'README.md': '# own\n' });
    branchWith(repo, 'maestro/t-a', { 'a.txt': 'a\n', 'README.md': '# own, by a\n' });
    branchWith(repo, 'maestro/t-b', { 'README.md': '# own, by b\n' });
    branchWith(repo, 'maestro/t-v', { 'v.txt': 'vetoed\n' });
    branchWith(repo, 'maestro/t-c', { 'c.txt': 'c\n' });
    const project = await s.projects.create({ name: 'own', repoPath: repo, config: {} });
    const a = await approved(s, project, 'a', 'maestro/t-a');
    const b = await approved(s, project, 'b', 'maestro/t-b');
    const v = await approved(s, project, 'v', 'maestro/t-v');
    const c = await approved(s, project, 'c', 'maestro/t-c');

    const conflictRuns: Array<{ task: string; locks: number }> = [];
    const hooks: MergeHooks = { beforeMerge: async (task) => (task.id === v.id ? { cancel: 'release freeze' } : undefined) };
    const d = coordinator(s, tempDir('maestro-home-'), 'd1', { hooks, conflictRuns });
    const mainBefore = git(repo, 'rev-parse', 'main');
    await d.merges.tick();
    expect(d.errors).toEqual([]);
    // Each merge names main as it was just before it (the change the board shows once the branch is gone).
    const merged = async (t: Task) => (await s.events.list({ taskId: t.id, type: 'task.status', limit: 100 })).events.at(-1)?.payload.merged as { sha: string; previousSha: string };
    const [ma, mc] = [await merged(a), await merged(c)];
    expect(ma.previousSha).toBe(mainBefore);
    expect(mc.previousSha).toBe(ma.sha);
    expect(mc.sha).toBe(git(repo, 'rev-parse', 'main'));

    expect((await s.tasks.get(a.id)).status).toBe('done');
    expect((await s.tasks.get(c.id)).status).toBe('done');
    expect((await s.tasks.get(b.id)).status).toBe('merging');
    const vetoed = await s.tasks.get(v.id);
    expect(vetoed.status).toBe('needs_attention');
    expect(vetoed.lastRunError).toContain('release freeze');
    expect(conflictRuns.map((r) => r.task)).toEqual([b.id]);
    expect((await s.db.all<{ task_id: string }>(`SELECT task_id FROM merges`)).map((m) => m.task_id).sort()).toEqual([a.id, c.id].sort());
    // The checkout is on main, clean, with a's and c's work and neither b's nor the vetoed one's.
    expect(git(repo, 'status', '--porcelain', '--untracked-files=no')).toBe('');
    expect(readFileSync(join(repo, 'README.md'), 'utf8')).toBe('# own, by a\n');
    expect(existsSync(join(repo, 'c.txt'))).toBe(true);
    expect(existsSync(join(repo, 'v.txt'))).toBe(false);
    for (const f of ['a.txt', 'c.txt']) expect(commitsTouching(repo, 'main', f)).toHaveLength(1);
    // Merged branches are cleaned up; the others stay for their conflict run or a person.
    expect(git(repo, 'branch', '--list', 'maestro/*').split('\n').map((l) => l.trim()).sort()).toEqual(['maestro/t-b', 'maestro/t-v']);
  });

  it("main's .maestro/config.json broken (a merge strategy it does not know): each approved task says so and needs attention, nothing merged", async () => {
    const s = await openStore();
    const repo = makeRepo({ 'README.md': '# own\n', '.maestro/config.json': '{"mergeStrategy": "rebase"}\n' });
    branchWith(repo, 'maestro/t-a', { 'a.txt': 'a\n' });
    const project = await s.projects.create({ name: 'own', repoPath: repo, config: {} });
    const a = await approved(s, project, 'a', 'maestro/t-a');
    const mainBefore = git(repo, 'rev-parse', 'main');
    const d = coordinator(s, tempDir('maestro-home-'), 'd1');
    await d.merges.tick();
    // Thrown from the train, it reached only the daemon's log, every tick, and the task stayed in merging for good.
    expect(d.errors).toEqual([]);
    const task = await s.tasks.get(a.id);
    expect(task.status).toBe('needs_attention');
    expect(task.lastRunError).toContain('.maestro/config.json: mergeStrategy');
    expect(task.lastRunError).toContain(`maestro task retry ${a.id}`);
    expect(git(repo, 'rev-parse', 'main')).toBe(mainBefore);
  });

  it('a conflict found while every slot is busy is said once and not merged again; its run starts once a slot is free', async () => {
    const s = await openStore();
    const repo = makeRepo({ 'README.md': '# own\n' });
    branchWith(repo, 'maestro/t-a', { 'README.md': '# own, by a\n' });
    branchWith(repo, 'maestro/t-b', { 'README.md': '# own, by b\n' });
    branchWith(repo, 'maestro/t-c', { 'README.md': '# own, by c\n' });
    const project = await s.projects.create({ name: 'own', repoPath: repo, config: {} });
    const a = await approved(s, project, 'a', 'maestro/t-a');
    const b = await approved(s, project, 'b', 'maestro/t-b');
    const c = await approved(s, project, 'c', 'maestro/t-c');
    const merged: string[] = [];
    const conflictRuns: Array<{ task: string; locks: number }> = [];
    let free = false;
    const d = coordinator(s, tempDir('maestro-home-'), 'd1', { hooks: { beforeMerge: async (task) => void merged.push(task.id) }, conflictRuns, slotFree: () => free });
    const said = async () => (await s.events.list({ type: 'merge.conflict', limit: 1000 })).events.map((e) => e.taskId);
    await d.merges.tick();
    expect((await s.tasks.get(a.id)).status).toBe('done');
    expect(await said()).toEqual([b.id, c.id]);
    expect(d.merges.awaitingConflictRuns).toBe(2);
    // Every slot still busy: neither is merged again nor said again.
    await d.merges.tick();
    await d.merges.tick();
    expect(merged).toEqual([a.id, b.id, c.id]);
    expect(await said()).toEqual([b.id, c.id]);
    expect(conflictRuns).toEqual([]);
    // c is cancelled while it waits; a slot frees up: b's conflict run starts, c's never does.
    await s.tasks.transition(c.id, 'cancelled', { reason: 'not needed' });
    free = true;
    await d.merges.tick();
    expect(conflictRuns.map((r) => r.task)).toEqual([b.id]);
    expect(d.merges.awaitingConflictRuns).toBe(0);
    expect(merged).toEqual([a.id, b.id, c.id]);
    expect(d.errors).toEqual([]);
  });

  it("a conflict run that waited for a slot and starts slowly (its remote silent) holds no other project's merge or conflict run", { timeout: 120_000 }, async () => {
    const { s, repoA, repoB, projectA, projectB } = await twoProjects();
    // Each second branch writes its project's first branch's file: it conflicts once that is in.
    branchWith(repoA, 'maestro/t-a2', { 'a.txt': 'a, again\n' });
    branchWith(repoB, 'maestro/t-b2', { 'b.txt': 'b, again\n' });
    await approved(s, projectA, 'a', 'maestro/t-a');
    const a2 = await approved(s, projectA, 'a2', 'maestro/t-a2');
    let free = false;
    const conflictRuns: Array<{ task: string; locks: number }> = [];
    let b2: Task | null = null;
    let heldUntilB2 = false;
    // The start of a2's conflict run waits until b2's has started (or a minute has passed).
    const beforeConflictRun = async (task: Task) => {
      if (task.id !== a2.id) return;
      const deadline = Date.now() + 60_000;
      while (!conflictRuns.some((r) => r.task === b2?.id)) {
        if (Date.now() > deadline) return;
        await new Promise((r) => setTimeout(r, 20));
      }
      heldUntilB2 = true;
    };
    const d = coordinator(s, tempDir('maestro-home-'), 'd1', { conflictRuns, slotFree: () => free, beforeConflictRun });
    await d.merges.tick();
    expect(d.merges.awaitingConflictRuns).toBe(1); // a2 waits for a slot
    free = true;
    const b = await approved(s, projectB, 'b', 'maestro/t-b');
    b2 = await approved(s, projectB, 'b2', 'maestro/t-b2');
    await d.merges.tick();
    // B's train landed b, and b2's conflict run started, while a2's was still starting.
    expect(heldUntilB2).toBe(true);
    expect((await s.tasks.get(b.id)).status).toBe('done');
    expect(conflictRuns.map((r) => r.task)).toEqual([b2.id, a2.id]);
    expect(d.merges.awaitingConflictRuns).toBe(0);
    expect(d.errors).toEqual([]);
  });

  it("one project's merge does not wait for another's: a hook holding project A's train sees project B's task land", { timeout: 120_000 }, async () => {
    const { s, repoA, repoB, projectA, projectB } = await twoProjects();
    // A's approval is the older one: taken one after another, A's train would go first and hold B's back.
    const a = await approved(s, projectA, 'a', 'maestro/t-a');
    const b = await approved(s, projectB, 'b', 'maestro/t-b');
    const hooks: MergeHooks = {
      beforeMerge: async (task) => {
        if (task.id !== a.id) return;
        const deadline = Date.now() + 60_000;
        while ((await s.tasks.get(b.id)).status !== 'done') {
          if (Date.now() > deadline) return { cancel: "project B's task never landed while A's train waited" };
          await new Promise((r) => setTimeout(r, 20));
        }
      },
    };
    const d = coordinator(s, tempDir('maestro-home-'), 'd1', { hooks });
    await d.merges.tick();
    expect(d.errors).toEqual([]);
    expect((await s.tasks.get(a.id)).status).toBe('done');
    expect((await s.tasks.get(b.id)).status).toBe('done');
    expect(existsSync(join(repoA, 'a.txt')) && existsSync(join(repoB, 'b.txt'))).toBe(true);
  });

  it("work approved while another project's train is held merges in the next tick, without waiting for it", { timeout: 120_000 }, async () => {
    const { s, projectA, projectB } = await twoProjects();
    const a = await approved(s, projectA, 'a', 'maestro/t-a');
    let held!: () => void;
    const holding = new Promise<void>((r) => (held = r));
    let bId = '';
    const hooks: MergeHooks = {
      beforeMerge: async (task) => {
        if (task.id !== a.id) return;
        held();
        const deadline = Date.now() + 60_000;
        while (!bId || (await s.tasks.get(bId)).status !== 'done') {
          if (Date.now() > deadline) return { cancel: "project B's task never landed while A's train waited" };
          await new Promise((r) => setTimeout(r, 20));
        }
      },
    };
    const d = coordinator(s, tempDir('maestro-home-'), 'd1', { hooks });
    const first = d.merges.tick();
    await holding;
    bId = (await approved(s, projectB, 'b', 'maestro/t-b')).id;
    await d.merges.tick(); // A is merging already: this tick takes B alone
    expect((await s.tasks.get(bId)).status).toBe('done');
    await first;
    expect(d.errors).toEqual([]);
    expect((await s.tasks.get(a.id)).status).toBe('done');
  });

  it('work approved in a project while its train runs is merged as soon as that train ends, not at the next tick', { timeout: 120_000 }, async () => {
    const { s, repoA, projectA } = await twoProjects();
    branchWith(repoA, 'maestro/t-a2', { 'a2.txt': 'a2\n' });
    const a = await approved(s, projectA, 'a', 'maestro/t-a');
    let entered!: () => void;
    const inHook = new Promise<void>((r) => (entered = r));
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    // The hook holds the train, then refuses its only car: a train that lands nothing takes no second round.
    const hooks: MergeHooks = {
      beforeMerge: async (task) => {
        if (task.id !== a.id) return;
        entered();
        await released;
        return { cancel: 'not this one' };
      },
    };
    let again = 0;
    const d = coordinator(s, tempDir('maestro-home-'), 'd1', { hooks, onAgain: () => again++ });
    const first = d.merges.tick();
    await inHook;
    const a2 = await approved(s, projectA, 'a2', 'maestro/t-a2');
    await d.merges.tick(); // the project is merging: this tick leaves a2 to it
    expect(again).toBe(0);
    release();
    await first;
    expect((await s.tasks.get(a2.id)).status).toBe('merging');
    expect(again).toBe(1); // the daemon is asked for another tick at once
    await d.merges.tick();
    expect((await s.tasks.get(a2.id)).status).toBe('done');
    expect(existsSync(join(repoA, 'a2.txt'))).toBe(true);
    expect((await s.tasks.get(a.id)).status).toBe('needs_attention');
    expect(d.errors).toEqual([]);
    await d.merges.tick(); // nothing was asked meanwhile: no further call
    expect(again).toBe(1);
  });

  it('two projects whose merging tasks wait for their runs do not keep each other ticking (the daemon hung, its event loop starved)', async () => {
    const { s, projectA, projectB } = await twoProjects();
    await approved(s, projectA, 'a', 'maestro/t-a');
    await approved(s, projectB, 'b', 'maestro/t-b');
    const errors: Error[] = [];
    let again = 0;
    const ticks = new Set<Promise<void>>();
    // As the orchestrator asks for the tick again, at once (no timer between): each tick a chain of database reads.
    const merges: MergeCoordinator = new MergeCoordinator(s, {
      hooks: {}, startConflictRun: async () => true, runningRun: async () => 'conflict', repos: new ProjectRepos(tempDir('maestro-home-')),
      owner: 'd1', leaseMs: 60_000, onChange: () => {}, onError: (e) => errors.push(e),
      onAgain: (projectId) => {
        if (++again > 50) return; // the loop this test is about: cut, so that it fails instead of hanging
        const t = Promise.resolve().then(() => merges.tick(projectId));
        ticks.add(t);
        void t.finally(() => ticks.delete(t));
      },
    });
    await Promise.all([merges.tick(), merges.tick(), merges.tick()]);
    while (ticks.size) await Promise.all([...ticks]);
    expect(errors).toEqual([]);
    // A tick that found each project merging asks once for each, and those ask for nothing more.
    expect(again).toBeLessThanOrEqual(2);
  });

  it('a push the remote refuses records nothing; the tasks are retried later, each in a train of its own', async () => {
    const s = await openStore();
    const root = tempDir('maestro-train-');
    const remote = bareRemote(root, { 'README.md': '# shared\n' });
    const frozen = join(root, 'frozen');
    writeFileSync(frozen, '');
    writeFileSync(join(remote, 'hooks', 'pre-receive'), `#!/bin/sh\nif grep -q ' refs/heads/main$' && [ -e '${frozen}' ]; then echo "main is frozen" >&2; exit 1; fi\nexit 0\n`);
    chmodSync(join(remote, 'hooks', 'pre-receive'), 0o755);
    const pushes = join(root, 'pushes.log');
    writeFileSync(join(remote, 'hooks', 'post-receive'), `#!/bin/sh\ngrep -q ' refs/heads/main$' && echo push >> '${pushes}'\nexit 0\n`);
    chmodSync(join(remote, 'hooks', 'post-receive'), 0o755);
    const work = join(root, 'work');
    git(root, 'clone', '-q', remote, work);
    branchWith(work, 'maestro/t-a', { 'a.txt': 'a\n' });
    branchWith(work, 'maestro/t-b', { 'b.txt': 'b\n' });
    for (const b of ['a', 'b']) git(work, 'push', '-q', 'origin', `maestro/t-${b}`);
    const project = await s.projects.create({ name: 'shared', repoPath: remote, config: { remote } });
    const a = await approved(s, project, 'a', 'maestro/t-a');
    const b = await approved(s, project, 'b', 'maestro/t-b');
    const main = git(remote, 'rev-parse', 'main');

    const d = coordinator(s, tempDir('maestro-home-'), 'd1');
    await d.merges.tick();
    expect(d.errors.map((e) => e.message)).toEqual([expect.stringContaining('main is frozen')]);
    expect(git(remote, 'rev-parse', 'main')).toBe(main);
    expect(await s.db.all(`SELECT task_id FROM merges`)).toEqual([]);
    for (const t of [a, b]) {
      expect((await s.tasks.get(t.id)).status).toBe('merging');
      expect((await s.events.list({ taskId: t.id, type: 'git.push_failed' })).events.map((e) => e.payload.retryInMs)).toEqual([1000]);
    }
    // Before the wait is over nothing is tried; after it, each goes alone (one push each) and is recorded once.
    await d.merges.tick();
    expect(d.errors).toHaveLength(1);
    rmSync(frozen);
    now += 1000;
    await d.merges.tick();
    expect(d.errors).toHaveLength(1);
    for (const t of [a, b]) expect((await s.tasks.get(t.id)).status).toBe('done');
    expect(await s.db.all(`SELECT task_id FROM merges`)).toHaveLength(2);
    expect(readFileSync(pushes, 'utf8')).toBe('push\npush\n');
    // a fast-forwarded main; b, made from the same main, came in by a merge commit.
    expect(git(remote, 'log', '--format=%s', '--first-parent', `${main}..main`).split('\n')).toEqual(['Merge maestro/t-b', 'work on maestro/t-a']);
  });

  it('a merge names every steering file it brings, a name past ASCII or with control characters in it as it is', async () => {
    const s = await openStore();
    const repo = makeRepo({ 'README.md': '# own\n' });
    // Names git quotes without -z ("sp\303\251c.md"): they were left out of the event.
    const steering = ['.maestro/hooks/before-merge\x1b]0;X\x07.sh', '.workflow/knowhow/tip-\x1b[2J.md', '.workflow/specs/spéc-ünïcode.md'];
    for (const dir of ['.maestro/hooks', '.workflow/knowhow', '.workflow/specs']) mkdirSync(join(repo, dir), { recursive: true });
    branchWith(repo, 'maestro/t-a', { ...Object.fromEntries(steering.map((f) => [f, 'x\n'])), 'a.txt': 'a\n' });
    const project = await s.projects.create({ name: 'own', repoPath: repo, config: {} });
    const a = await approved(s, project, 'a', 'maestro/t-a');
    const d = coordinator(s, tempDir('maestro-home-'), 'd1');
    await d.merges.tick();
    expect(d.errors).toEqual([]);
    expect((await s.tasks.get(a.id)).status).toBe('done');
    const events = (await s.events.list({ taskId: a.id, type: 'project.settings_files' })).events;
    expect(events.map((e) => e.payload.files)).toEqual([steering]);
  });

  it('a merge names steering files whose names are not UTF-8 apart, as the gate and the diff show them', async () => {
    const s = await openStore();
    const repo = makeRepo({ 'README.md': '# own\n' });
    git(repo, 'checkout', '-q', '-b', 'maestro/t-a');
    mkdirSync(join(repo, '.maestro/hooks'), { recursive: true });
    // Two names one byte apart, neither byte UTF-8: read as UTF-8, both were `.maestro/hooks/a\uFFFD.sh`.
    for (const byte of [0xfe, 0xff]) writeFileSync(Buffer.from([...Buffer.from(`${repo}/.maestro/hooks/a`), byte, ...Buffer.from('.sh')]), 'x\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'work on maestro/t-a');
    git(repo, 'checkout', '-q', 'main');
    const project = await s.projects.create({ name: 'own', repoPath: repo, config: {} });
    const a = await approved(s, project, 'a', 'maestro/t-a');
    const d = coordinator(s, tempDir('maestro-home-'), 'd1');
    await d.merges.tick();
    expect(d.errors).toEqual([]);
    const events = (await s.events.list({ taskId: a.id, type: 'project.settings_files' })).events;
    expect(events.map((e) => e.payload.files)).toEqual([['".maestro/hooks/a\\376.sh"', '".maestro/hooks/a\\377.sh"']]);
  });
});

describe('a locked checkout (an index.lock left by a git running or crashed there)', () => {
  /** What each task needs attention for, as `task show` says it. */
  const lockedMessage = (repo: string, task: Task, unchanged: string) =>
    `the main checkout ${repo} is locked: ${join(repo, '.git', 'index.lock')} exists (a git process is running there, or one that crashed left it), so git cannot write its index${unchanged}: make sure no git process is running in ${repo}, then remove ${join(repo, '.git', 'index.lock')}, then run \`maestro task retry ${task.id}\` to merge it`;

  /** A lock file a crashed git left: older than a merge waits for one (mergeLock.ts). */
  const staleLock = (repo: string) => {
    const lock = join(repo, '.git', 'index.lock');
    writeFileSync(lock, '');
    const old = new Date(Date.now() - LOCK_WAIT_MS - 60_000);
    utimesSync(lock, old, old);
  };
  const lockEvents = async (task: Task) => (await store!.events.list({ taskId: task.id, type: 'merge.locked' })).events.map((e) => e.payload.lock);
  /** The project's own checkout, with an approved task per branch (maestro/t-<name>, each adding its files to main's). */
  const approvedInOwnCheckout = async <K extends string>(s: Store, branches: Record<K, Record<string, string>>) => {
    const repo = makeRepo({ 'README.md': '# own\n' });
    const names = Object.keys(branches) as K[];
    for (const name of names) branchWith(repo, `maestro/t-${name}`, branches[name]);
    const project = await s.projects.create({ name: 'own', repoPath: repo, config: {} });
    const tasks = {} as Record<K, Task>;
    for (const name of names) tasks[name] = await approved(s, project, name, `maestro/t-${name}`);
    return { repo, project, tasks };
  };

  it('left by a crashed git (older than the wait) parks the tasks for the person at once, naming the lock file, with no conflict run; a retry once it is gone merges', async () => {
    const s = await openStore();
    const { repo, project, tasks: { a, b } } = await approvedInOwnCheckout(s, { a: { 'a.txt': 'a\n' }, b: { 'README.md': '# own, by b\n' } });
    staleLock(repo);
    const main = git(repo, 'rev-parse', 'main');
    const conflictRuns: Array<{ task: string; locks: number }> = [];
    const d = coordinator(s, tempDir('maestro-home-'), 'd1', { conflictRuns });
    await d.merges.tick();
    for (const t of [a, b]) expect(await s.tasks.get(t.id)).toMatchObject({ status: 'needs_attention', lastRunError: lockedMessage(repo, t, '') });
    expect(conflictRuns).toEqual([]);
    expect((await s.events.list({ projectId: project.id, type: 'merge.conflict' })).events).toEqual([]);
    expect(git(repo, 'rev-parse', 'main')).toBe(main);

    rmSync(join(repo, '.git', 'index.lock'));
    for (const t of [a, b]) expect((await s.tasks.retry(t.id, 'needs_attention')).status).toBe('merging');
    await d.merges.tick();
    for (const t of [a, b]) expect((await s.tasks.get(t.id)).status).toBe('done');
    expect(readFileSync(join(repo, 'README.md'), 'utf8')).toBe('# own, by b\n');
    expect(d.errors).toEqual([]);
  });

  it('held for a moment (a person\'s git, an editor\'s) keeps the tasks approved, said once each, and they merge by themselves once it is gone', async () => {
    const s = await openStore();
    const { repo, tasks: { a, b } } = await approvedInOwnCheckout(s, { a: { 'a.txt': 'a\n' }, b: { 'b.txt': 'b\n' } });
    const lock = join(repo, '.git', 'index.lock');
    writeFileSync(lock, '');
    const d = coordinator(s, tempDir('maestro-home-'), 'd1');
    await d.merges.tick();
    await d.merges.tick();
    for (const t of [a, b]) {
      expect((await s.tasks.get(t.id)).status).toBe('merging');
      expect(await lockEvents(t)).toEqual([lock]);
    }
    rmSync(lock);
    await d.merges.tick();
    for (const t of [a, b]) expect((await s.tasks.get(t.id)).status).toBe('done');
    expect(readFileSync(join(repo, 'b.txt'), 'utf8')).toBe('b\n');
    expect(d.errors).toEqual([]);
  });

  it('still there when the wait is over, however fresh it looks (an editor taking it again and again), parks the task for the person', async () => {
    const s = await openStore();
    const { repo, tasks: { a } } = await approvedInOwnCheckout(s, { a: { 'a.txt': 'a\n' } });
    const lock = join(repo, '.git', 'index.lock');
    writeFileSync(lock, '');
    // Taken "just now" at every look, however long the busy machine takes to get there: a minute ahead of the clock
    // (a lock written at the start and looked at after the wait, 300 ms here, read as one a crashed git left).
    const fresh = () => new Date(Date.now() + 60_000);
    utimesSync(lock, fresh(), fresh());
    const d = coordinator(s, tempDir('maestro-home-'), 'd1', { lockWaitMs: 300 });
    await d.merges.tick();
    const first = Date.now(); // after the tick that began the wait
    expect((await s.tasks.get(a.id)).status).toBe('merging');
    while (Date.now() - first <= 300) await new Promise((r) => setTimeout(r, 20)); // the wait's own length, not a guess at the machine
    utimesSync(lock, fresh(), fresh()); // taken again just now
    await d.merges.tick();
    expect(await s.tasks.get(a.id)).toMatchObject({ status: 'needs_attention', lastRunError: lockedMessage(repo, a, '') });
    expect(await lockEvents(a)).toEqual([lock]);
  });

  it('taken during a train (after the checkout was checked) ends it at that car, said as a lock, not a conflict, and leaves no merge under way; the car goes once it is gone', async () => {
    const s = await openStore();
    const { repo, project, tasks: { a, b } } = await approvedInOwnCheckout(s, { a: { 'a.txt': 'a\n' }, b: { 'b.txt': 'b\n' } });
    // main moves: a's merge is a merge commit, whose git leaves MERGE_HEAD behind when it cannot write the index.
    writeFileSync(join(repo, 'main.txt'), 'main\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'main moves');
    const main = git(repo, 'rev-parse', 'main');
    // The person's git starts in the checkout just as a's merge is about to begin.
    let lockTaken = false;
    const hooks: MergeHooks = {
      beforeMerge: async (task) => {
        if (task.id !== a.id || lockTaken) return;
        lockTaken = true;
        writeFileSync(join(repo, '.git', 'index.lock'), '');
      },
    };
    const conflictRuns: Array<{ task: string; locks: number }> = [];
    const d = coordinator(s, tempDir('maestro-home-'), 'd1', { hooks, conflictRuns });
    await d.merges.tick();
    // The train ended at a, which waits for the lock; b was not tried (it would meet the same lock).
    for (const t of [a, b]) expect((await s.tasks.get(t.id)).status).toBe('merging');
    expect(await lockEvents(a)).toEqual([join(repo, '.git', 'index.lock')]);
    expect(conflictRuns).toEqual([]);
    expect((await s.events.list({ projectId: project.id, type: 'merge.conflict' })).events).toEqual([]);
    expect(git(repo, 'rev-parse', 'main')).toBe(main);
    expect(existsSync(join(repo, '.git', 'MERGE_HEAD'))).toBe(false);

    rmSync(join(repo, '.git', 'index.lock'));
    await d.merges.tick();
    for (const t of [a, b]) expect((await s.tasks.get(t.id)).status).toBe('done');
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('a\n');
    expect(d.errors).toEqual([]);
  });
});

describe('a merge parked for a person', () => {
  it('a retry after the checkout is cleaned merges the approved change again: back to merging, not to a new run', async () => {
    const s = await openStore();
    const repo = makeRepo({ 'README.md': '# own\n', 'notes.txt': 'mine\n' });
    branchWith(repo, 'maestro/t-a', { 'a.txt': 'by a\n' });
    const project = await s.projects.create({ name: 'own', repoPath: repo, config: {} });
    const a = await approved(s, project, 'a', 'maestro/t-a');
    // The person's own edit, uncommitted: nothing may be merged into that checkout.
    writeFileSync(join(repo, 'notes.txt'), 'mine, edited\n');
    const d = coordinator(s, tempDir('maestro-home-'), 'd1');
    await d.merges.tick();
    const parked = await s.tasks.get(a.id);
    expect(parked).toMatchObject({ status: 'needs_attention', lastRunError: expect.stringContaining('uncommitted changes (notes.txt)') });
    expect(readFileSync(join(repo, 'notes.txt'), 'utf8')).toBe('mine, edited\n');

    git(repo, 'commit', '-q', '-am', 'my notes');
    // Still marked as its executing daemon's, with that daemon's lease long past (as a claimed task keeps them).
    await s.db.run(`UPDATE tasks SET claimed_by = 'd1', claimed_at = 1, lease_expires_at = 2 WHERE id = $1`, [a.id]);
    const retried = await s.tasks.retry(a.id, 'needs_attention');
    expect(retried.status).toBe('merging');
    expect(retried.approvals).toEqual(parked.approvals);
    const [event] = (await s.events.list({ taskId: a.id, type: 'task.status' })).events.slice(-1);
    expect(event!.payload).toMatchObject({ from: 'needs_attention', to: 'merging', reason: 'retry the merge' });
    // Its old claimer's lease, renewed by that daemon and then left to lapse (the daemon died), does not send it
    // back to ready (a new execution) meanwhile.
    await s.tasks.renewOwnedLeases('d1', 60_000);
    now += 10 * 60_000;
    expect(await s.tasks.expireClaims()).toEqual([]);
    await d.merges.tick();
    expect((await s.tasks.get(a.id)).status).toBe('done');
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('by a\n');
    expect(await s.runs.list({ taskId: a.id })).toEqual([]);
    expect(d.errors).toEqual([]);

    // Work parked anywhere else still goes back to ready for a new run; so does parked work a person edited since.
    const b = await s.tasks.create({ projectId: project.id, title: 'b', complexity: 'easy' });
    await s.tasks.transition(b.id, 'needs_attention', { reason: 'the agent gave up' });
    expect((await s.tasks.retry(b.id, 'needs_attention')).status).toBe('ready');
    branchWith(repo, 'maestro/t-c', { 'c.txt': 'by c\n' });
    const c = await approved(s, project, 'c', 'maestro/t-c');
    await s.tasks.transition(c.id, 'needs_attention', { from: 'merging', reason: 'a hook said no' });
    await s.tasks.edit(c.id, { title: 'c, but differently' });
    expect((await s.tasks.retry(c.id, 'needs_attention')).status).toBe('ready');
  });
});
