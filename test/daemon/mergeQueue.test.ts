/**
 * The merge queue, end to end (daemon/mergeQueue.ts): a real daemon, real git, real checks run by real workers, the
 * scripted agent. Two changes that pass their checks alone can break main together; when main moved since a
 * branch was cut (no fast-forward), the project's checks run on the merged tree before anything lands, and only
 * the commit they passed on lands.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { TaskDetail } from '../../src/api/wire/responses.js';
import { afterEach, describe, expect, it } from 'vitest';
import { reviewedCommit } from '../../src/core/reviewed.js';
import { worktreeRoot } from '../../src/git/worktree.js';
import type { Task } from '../../src/core/types.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { bareRemote, git, makeRepo } from '../helpers/repo.js';
import { until, untilStatus } from '../helpers/wait.js';
import { cliFor } from '../cli/helpers.js';

/** Task "Add a" writes a.txt, "Add b" b.txt; a version run again from the current main (retry --fresh) writes c.txt instead. */
const SCRIPT = `steps:
  - match: { role: execute, prompt: "run the task again from the current main" }
    actions:
      - write: { path: c.txt, content: "c\\n" }
  - match: { role: execute, title: "Add a" }
    actions:
      - write: { path: a.txt, content: "a\\n" }
  - match: { role: execute, title: "Add b" }
    actions:
      - write: { path: b.txt, content: "b\\n" }
  - match: { role: review }
    actions:
      - verdict: { verdict: approve, findings: [] }
`;

/** Fails only when a.txt and b.txt are both there: each change passes it alone. */
const APART = { name: 'apart', command: 'if [ -f a.txt ] && [ -f b.txt ]; then echo "a.txt and b.txt must not both exist"; exit 1; fi' };

describe('the merge queue: checks on the merged tree before a merge lands', () => {
  let daemon: TestDaemon | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 2000 });
    daemon = null;
    removeTempDirs();
  });

  /** Tasks "Add a" and "Add b" cut from the same main, both at exec_review. */
  async function twoReviewed(config: Record<string, unknown>, o: { shared?: boolean; home?: string; gateRepo?: string } = {}) {
    const files = { 'README.md': '# p\n', '.maestro/config.json': JSON.stringify(config) };
    // A shared remote (the branches kept, to be read after the merge), or the project's own checkout.
    const repo = o.shared ? bareRemote(tempDir('maestro-remote-'), files) : o.gateRepo ? withFiles(o.gateRepo, files) : makeRepo(files);
    const script = join(tempDir('maestro-script-'), 'script.yaml');
    writeFileSync(script, SCRIPT);
    const d = (daemon = await startTestDaemon({ tickMs: 100, ...(o.home ? { home: o.home } : {}) }));
    const shared = o.shared ? { remote: repo, keepBranches: true } : {};
    const project = await d.store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script }, ...shared } });
    const a = await d.store.tasks.create({ projectId: project.id, title: 'Add a', complexity: 'easy' });
    const b = await d.store.tasks.create({ projectId: project.id, title: 'Add b', complexity: 'easy' });
    d.orchestrator.kick();
    await untilStatus(d, a.id, 'exec_review', ['needs_attention', 'done']);
    await untilStatus(d, b.id, 'exec_review', ['needs_attention', 'done']);
    return { d, repo, a, b };
  }

  async function approveAndWait(d: TestDaemon, id: string, status: Task['status']): Promise<Task> {
    expect((await daemonRequest(d, 'POST', `/api/tasks/${id}/approve`, { who: 'ada' })).status).toBe(200);
    d.orchestrator.kick();
    return until(d.bus, async () => {
      const t = await d.store.tasks.get(id);
      if (t.status !== status && (t.status === 'done' || t.status === 'needs_attention')) throw new Error(`${t.status} instead of ${status}: ${t.lastRunError}`);
      return t.status === status ? t : null;
    }, `${id} ${status}`);
  }

  /** `repo` with `files` committed on main. */
  const withFiles = (repo: string, files: Record<string, string>) => {
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(repo, path)), { recursive: true });
      writeFileSync(join(repo, path), content);
    }
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'the project');
    return repo;
  };

  const kinds = async (d: TestDaemon, id: string) => (await d.store.runs.list({ taskId: id })).map((r) => `${r.kind}:${r.status}`);

  it('lands nothing when the checks fail on the merge, names the check and what main brought in, and a fresh retry lands', async () => {
    const { d, repo, a, b } = await twoReviewed({ checks: [APART] });
    // The first lands as today: a fast-forward, no check run.
    await approveAndWait(d, a.id, 'done');
    expect(await kinds(d, a.id)).toEqual(['execute:succeeded', 'review:succeeded']);
    const mainAfterA = git(repo, 'rev-parse', 'main');
    const reviewedB = reviewedCommit(await d.store.tasks.get(b.id));

    const parked = await approveAndWait(d, b.id, 'needs_attention');
    // Main stays at the first: b.txt never reached it.
    expect(git(repo, 'rev-parse', 'main')).toBe(mainAfterA);
    expect(git(repo, 'ls-tree', '--name-only', 'main')).not.toMatch(/b\.txt/);
    expect(parked.lastRunError).toMatch(/^CHECK_FAILED: check apart failed \(exit 1\) on maestro\/\S+ merged with main/);
    expect(parked.lastRunError).toMatch(/main brought in 1 commit since the branch was cut: [0-9a-f]+ Add a/);
    expect(parked.lastRunError).toContain(`maestro task retry ${b.id} --fresh`);
    expect(await kinds(d, b.id)).toEqual(['execute:succeeded', 'review:succeeded', 'merge_check:failed']);
    // Nothing unchecked is left on the branch: it is the approved commit still.
    expect(git(repo, 'rev-parse', `maestro/${b.id}-v1`)).toBe(reviewedB);
    // task show names the ways out.
    const show = await cliFor(d.config.home).cli(['task', 'show', b.id, '--url', d.url]);
    expect(show.stdout).toContain(`\`maestro task retry ${b.id} --fresh\` runs the task again from the current main; \`maestro task retry ${b.id}\` checks the merge again; or \`maestro task cancel ${b.id}\``);
    // The check's output is read like any run's.
    const logs = await cliFor(d.config.home).cli(['task', 'logs', b.id, '--url', d.url]);
    expect(logs.stdout).toMatch(/^Run r_\S+ of t_\S+: merge_check, failed \(the latest of 3 runs\)\.\n\[check:apart\] notice: \$ if .*\n\s+a\.txt and b\.txt must not both exist$/m);

    // A plain retry checks the merge again: the same two changes, the same failure, nothing lands.
    expect((await daemonRequest(d, 'POST', `/api/tasks/${b.id}/retry`, { who: 'ada' })).status).toBe(200);
    d.orchestrator.kick();
    await until(d.bus, async () => (await kinds(d, b.id)).length === 4 && (await d.store.tasks.get(b.id)).status === 'needs_attention', 'the merge checked again, and failing again');
    expect(await kinds(d, b.id)).toEqual(['execute:succeeded', 'review:succeeded', 'merge_check:failed', 'merge_check:failed']);
    expect(git(repo, 'rev-parse', 'main')).toBe(mainAfterA);

    // Run again from the current main: the new version's change passes with main, and lands.
    const fresh = await daemonRequest<{ task: Task }>(d, 'POST', `/api/tasks/${b.id}/retry`, { fresh: true, who: 'ada' });
    expect(fresh.status).toBe(200);
    const next = (await d.store.tasks.list({ projectId: a.projectId, limit: 100 })).find((t) => t.version === 2)!;
    d.orchestrator.kick();
    await untilStatus(d, next.id, 'exec_review', ['needs_attention', 'done']);
    await approveAndWait(d, next.id, 'done');
    expect(git(repo, 'ls-tree', '--name-only', 'main').split('\n')).toEqual(expect.arrayContaining(['a.txt', 'c.txt']));
    expect(git(repo, 'ls-tree', '--name-only', 'main')).not.toMatch(/b\.txt/);
    // Cut from main as it is now: a fast-forward, no check run.
    expect(await kinds(d, next.id)).toEqual(['execute:succeeded', 'review:succeeded']);
  });

  for (const strategy of ['merge', 'no-ff'] as const) {
    it(`lands exactly the commit the checks passed on when they pass on the merge (${strategy})`, async () => {
      const { d, repo, a, b } = await twoReviewed({ mergeStrategy: strategy, checks: [{ name: 'readme', command: 'test -f README.md' }] });
      await approveAndWait(d, a.id, 'done');
      expect(await kinds(d, a.id)).toEqual(['execute:succeeded', 'review:succeeded']);
      const mainAfterA = git(repo, 'rev-parse', 'main');
      const done = await approveAndWait(d, b.id, 'done');
      expect(await kinds(d, b.id)).toEqual(['execute:succeeded', 'review:succeeded', 'merge_check:succeeded']);
      const checked = reviewedCommit(done)!;
      // The checked commit is main merged into the branch; main's tree is its tree.
      expect(git(repo, 'merge-base', '--is-ancestor', mainAfterA, checked)).toBe('');
      expect(git(repo, 'rev-parse', 'main^{tree}')).toBe(git(repo, 'rev-parse', `${checked}^{tree}`));
      if (strategy === 'merge') expect(git(repo, 'rev-parse', 'main')).toBe(checked);
      else expect(git(repo, 'rev-parse', 'main^2')).toBe(checked);
    });
  }

  it('on a shared remote, pushes the checked commit to the task branch before it lands, and lands that commit', async () => {
    const { d, repo: remote, a, b } = await twoReviewed({ checks: [{ name: 'readme', command: 'test -f README.md' }] }, { shared: true });
    await approveAndWait(d, a.id, 'done');
    const done = await approveAndWait(d, b.id, 'done');
    expect(await kinds(d, b.id)).toEqual(['execute:succeeded', 'review:succeeded', 'merge_check:succeeded']);
    const checked = reviewedCommit(done)!;
    // Whichever daemon lands it finds the checked commit on the remote's task branch: main is that very commit.
    expect(git(remote, 'rev-parse', `refs/heads/maestro/${b.id}-v1`)).toBe(checked);
    expect(git(remote, 'rev-parse', 'main')).toBe(checked);
    expect(git(remote, 'ls-tree', '--name-only', 'main').split('\n')).toEqual(expect.arrayContaining(['a.txt', 'b.txt']));
  });

  it('on a shared remote, a push of the checked commit refused once: the next train pushes it and lands it', async () => {
    const { d, repo: remote, a, b } = await twoReviewed({ checks: [{ name: 'readme', command: 'test -f README.md' }] }, { shared: true });
    await approveAndWait(d, a.id, 'done');
    // The remote refuses the first push of b's branch after this (the merge check's), then takes them again.
    const once = join(remote, 'refuse-once');
    writeFileSync(once, '');
    const hook = join(remote, 'hooks', 'pre-receive');
    writeFileSync(hook, `#!/bin/sh\nwhile read old new ref; do\n  if [ "$ref" = "refs/heads/maestro/${b.id}-v1" ] && [ -f '${once}' ]; then rm -f '${once}'; echo "not now" >&2; exit 1; fi\ndone\n`, { mode: 0o755 });
    const done = await approveAndWait(d, b.id, 'done');
    expect(await kinds(d, b.id)).toEqual(['execute:succeeded', 'review:succeeded', 'merge_check:succeeded']);
    const failed = (await d.store.events.list({ taskId: b.id, type: 'git.push_failed' })).events;
    expect(failed.length).toBeGreaterThan(0);
    expect(String(failed[0]!.payload.message)).toContain('not now');
    const checked = reviewedCommit(done)!;
    expect(git(remote, 'rev-parse', `refs/heads/maestro/${b.id}-v1`)).toBe(checked);
    expect(git(remote, 'rev-parse', 'main')).toBe(checked);
    expect(git(remote, 'ls-tree', '--name-only', 'main').split('\n')).toEqual(expect.arrayContaining(['a.txt', 'b.txt']));
  });

  it('on a shared remote, a checked commit whose push failed and that the clone lacks: checked again, never parked as moved', async () => {
    // One daemon stands for two: stopped after its check's push failed, its clone's branch put back on the approved
    // commit as another daemon's clone has it (it never fetched the checked merge), then started again on that clone.
    const home = tempDir('maestro-home-');
    const { d, repo: remote, a, b } = await twoReviewed({ checks: [{ name: 'readme', command: 'test -f README.md' }] }, { shared: true, home });
    await approveAndWait(d, a.id, 'done');
    const refuse = join(remote, 'refuse');
    writeFileSync(refuse, '');
    writeFileSync(join(remote, 'hooks', 'pre-receive'), `#!/bin/sh\nwhile read old new ref; do\n  if [ "$ref" = "refs/heads/maestro/${b.id}-v1" ] && [ -f '${refuse}' ]; then echo "not now" >&2; exit 1; fi\ndone\n`, { mode: 0o755 });
    const approved = reviewedCommit(await d.store.tasks.get(b.id))!;
    expect((await daemonRequest(d, 'POST', `/api/tasks/${b.id}/approve`, { who: 'ada' })).status).toBe(200);
    d.orchestrator.kick();
    const lost = await until(d.bus, async () => {
      const t = await d.store.tasks.get(b.id);
      const pushFailed = (await d.store.events.list({ taskId: b.id, type: 'git.push_failed' })).events.length > 0;
      return pushFailed && reviewedCommit(t) !== approved ? reviewedCommit(t) : null;
    }, 'a passed merge check whose push failed');
    await d.stop({ graceMs: 2000 });
    daemon = null;
    const clone = join(home, 'clones', b.projectId);
    git(clone, 'update-ref', `refs/heads/maestro/${b.id}-v1`, approved);
    rmSync(refuse);
    const other = (daemon = await startTestDaemon({ tickMs: 100, home }));
    other.orchestrator.kick();
    const done = await until(other.bus, async () => {
      const t = await other.store.tasks.get(b.id);
      if (t.status === 'needs_attention') throw new Error(t.lastRunError ?? 'needs_attention');
      return t.status === 'done' ? t : null;
    }, 'done after a second merge check');
    expect(await kinds(other, b.id)).toEqual(['execute:succeeded', 'review:succeeded', 'merge_check:succeeded', 'merge_check:succeeded']);
    const forgotten = (await other.store.events.list({ taskId: b.id, type: 'merge.check_lost' })).events;
    expect(forgotten.map((e) => e.payload.commit)).toEqual([lost]);
    // The commit the second check passed on lands (the same merge made again may be the very same commit).
    const checked = reviewedCommit(done)!;
    expect(git(remote, 'rev-parse', 'main')).toBe(checked);
    expect(git(remote, 'merge-base', '--is-ancestor', approved, 'main')).toBe('');
    expect(git(remote, 'ls-tree', '--name-only', 'main').split('\n')).toEqual(expect.arrayContaining(['a.txt', 'b.txt']));
  });

  it('on a shared remote, a task branch someone pushed commits onto after the review: parked naming those commits and the ways out', async () => {
    const { d, repo: remote, a, b } = await twoReviewed({ checks: [{ name: 'readme', command: 'test -f README.md' }] }, { shared: true });
    await approveAndWait(d, a.id, 'done');
    const branch = `maestro/${b.id}-v1`;
    const reviewed = reviewedCommit(await d.store.tasks.get(b.id))!;
    // Another host's clone commits on the task's branch and pushes it: a descendant of the approved commit.
    const other = join(tempDir('maestro-other-'), 'c');
    git(tempDir('maestro-x-'), 'clone', '-q', '--branch', branch, remote, other);
    writeFileSync(join(other, 'extra.txt'), 'x\n');
    git(other, 'add', 'extra.txt');
    git(other, '-c', 'user.name=x', '-c', 'user.email=x@x', 'commit', '-qm', 'an unreviewed fix');
    git(other, 'push', '-q', 'origin', branch);
    const extra = git(other, 'rev-parse', 'HEAD');
    const mainBefore = git(remote, 'rev-parse', 'main');
    const clone = join(d.config.home, 'clones', b.projectId);
    // The gate says so before the approval, from the branch as the daemon's clone fetched it (its next sync does).
    git(clone, 'fetch', '-q', 'origin', `+refs/heads/${branch}:refs/remotes/origin/${branch}`);
    const gate = (await daemonRequest<TaskDetail>(d, 'GET', `/api/tasks/${b.id}`)).body;
    expect(gate.task.status).toBe('exec_review');
    expect(gate.mergeBlocked).toBe(
      `${branch} on the remote ${remote} holds 1 commit its review never saw, on top of the reviewed commit ${reviewed.slice(0, 12)}: ${extra.slice(0, 12)} an unreviewed fix. ` +
        `An approval would merge nothing: they would land unreviewed. To merge what was reviewed, put the remote's branch back on it: ` +
        `git -C ${clone} push --force-with-lease=refs/heads/${branch}:${extra} origin ${reviewed}:refs/heads/${branch}, then approve it; ` +
        `\`maestro task reject ${b.id} --reason "…"\` sends it back as a new version; or \`maestro task cancel ${b.id}\``,
    );
    const parked = await approveAndWait(d, b.id, 'needs_attention');
    expect(git(remote, 'rev-parse', 'main')).toBe(mainBefore);
    expect(parked.lastRunError).toBe(
      `${branch} on the remote ${remote} holds 1 commit its review never saw, on top of the approved commit ${reviewed.slice(0, 12)}: ${extra.slice(0, 12)} an unreviewed fix. ` +
        `Nothing was merged: they would land unreviewed. To merge what was reviewed, put the remote's branch back on it: ` +
        `git -C ${clone} push --force-with-lease=refs/heads/${branch}:${extra} origin ${reviewed}:refs/heads/${branch}, then run \`maestro task retry ${b.id}\` to merge it; ` +
        `\`maestro task retry ${b.id} --fresh\` runs the task again from the current main; or \`maestro task cancel ${b.id}\``,
    );
    // The first way out, as said: the reviewed commit is checked on its merge with main and lands, the extra commit does not.
    git(clone, 'push', '-q', `--force-with-lease=refs/heads/${branch}:${extra}`, 'origin', `${reviewed}:refs/heads/${branch}`);
    expect((await daemonRequest(d, 'POST', `/api/tasks/${b.id}/retry`, {})).status).toBe(200);
    d.orchestrator.kick();
    await untilStatus(d, b.id, 'done', ['needs_attention']);
    expect(git(remote, 'merge-base', '--is-ancestor', reviewed, 'main')).toBe('');
    expect(git(remote, 'ls-tree', '--name-only', 'main')).not.toMatch(/extra\.txt/);
  });

  it('a daemon killed during the merge check: the next one adopts the run, and the checked commit lands once', async () => {
    // The check waits for the test's word, only on the merge (both files there): the run is at work when the daemon
    // dies. The word is a file in the worktree: the sandboxed check sees no other folder the test can write.
    const held = { name: 'held', command: 'if [ -f a.txt ] && [ -f b.txt ]; then while [ ! -f go ]; do sleep 0.1; done; fi' };
    const home = tempDir('maestro-home-');
    const { d, repo, a, b } = await twoReviewed({ checks: [held] }, { home });
    const go = join(worktreeRoot(home, a.projectId), `${b.id}-v1`, 'go');
    await approveAndWait(d, a.id, 'done');
    expect((await daemonRequest(d, 'POST', `/api/tasks/${b.id}/approve`, { who: 'ada' })).status).toBe(200);
    d.orchestrator.kick();
    const run = await until(d.bus, async () => (await d.store.runs.list({ taskId: b.id, status: 'running' })).find((r) => r.kind === 'merge_check' && r.workerPid !== null) ?? null, 'the merge check with its worker');
    // As a kill -9 leaves it: the daemon gone, its worker running on.
    await d.abandon();
    daemon = null;
    const second = (daemon = await startTestDaemon({ tickMs: 100, home }));
    second.orchestrator.kick();
    await until(second.bus, async () => (await second.store.events.list({ taskId: b.id, type: 'run.adopted' })).events[0] ?? null, 'run.adopted');
    writeFileSync(go, '');
    const done = await until(second.bus, async () => {
      const t = await second.store.tasks.get(b.id);
      if (t.status === 'needs_attention') throw new Error(t.lastRunError ?? 'needs_attention');
      return t.status === 'done' ? t : null;
    }, 'done after the adopted merge check');
    expect(await kinds(second, b.id)).toEqual(['execute:succeeded', 'review:succeeded', 'merge_check:succeeded']);
    expect((await second.store.runs.list({ taskId: b.id })).find((r) => r.kind === 'merge_check')!.id).toBe(run.id);
    expect(git(repo, 'rev-parse', 'main')).toBe(reviewedCommit(done));
    expect(git(repo, 'log', '--format=%H', '--', 'b.txt').split('\n').filter(Boolean)).toHaveLength(1);
  });

  it('checks again when main moved during the check, and lands only the commit checked last', async () => {
    // The word is a file in the project's .git, which the sandboxed check may read (a file in the worktree would be
    // set aside by the next run, as any leftover).
    const repoOf = makeRepo();
    const go = join(repoOf, '.git', 'go');
    const held = { name: 'held', command: `if [ -f a.txt ] && [ -f b.txt ]; then while [ ! -f '${go}' ]; do sleep 0.1; done; fi` };
    const { d, repo, a, b } = await twoReviewed({ checks: [held] }, { gateRepo: repoOf });
    await approveAndWait(d, a.id, 'done');
    expect((await daemonRequest(d, 'POST', `/api/tasks/${b.id}/approve`, { who: 'ada' })).status).toBe(200);
    d.orchestrator.kick();
    // Its check at work (the merge made): main as the run merged it is behind it now.
    const checking = async () => {
      const run = (await d.store.runs.list({ taskId: b.id })).find((r) => r.kind === 'merge_check');
      return !!run && (await d.store.events.list({ taskId: b.id, type: 'run.phase', limit: 1000 })).events.some((e) => e.runId === run.id && e.payload.stage === 'check:held' && e.payload.state === 'start');
    };
    await until(d.bus, checking, 'the first merge check at its check');
    // The board says what the task in merging is doing (GET /api/tasks/:id's mergeCheck), not only its status.
    const detail = await daemonRequest<{ mergeCheck: unknown }>(d, 'GET', `/api/tasks/${b.id}`);
    const run = (await d.store.runs.list({ taskId: b.id })).find((r) => r.kind === 'merge_check')!;
    expect(detail.body.mergeCheck).toEqual({ runId: run.id, daemon: d.config.name, check: 'held', round: 1, maxRounds: 3, state: 'running' });
    // And task show says it as the board does.
    const show = await cliFor(d.config.home).cli(['task', 'show', b.id, '--url', d.url]);
    expect(show.stdout.split('\n')).toContain(`Checking the merge with main: check held runs on its branch merged with main. Nothing lands until the checks pass. Merge check 1 of at most 3, on daemon ${d.config.name}.`);
    // A person's commit lands on main while the first check runs: what it checked is not what main would be.
    writeFileSync(join(repo, 'person.txt'), 'meanwhile\n');
    git(repo, 'add', 'person.txt');
    git(repo, 'commit', '-qm', 'a person commits meanwhile');
    writeFileSync(go, '');
    const done = await until(d.bus, async () => {
      const t = await d.store.tasks.get(b.id);
      if (t.status === 'needs_attention') throw new Error(t.lastRunError ?? 'needs_attention');
      return t.status === 'done' ? t : null;
    }, 'done after a second merge check');
    expect(await kinds(d, b.id)).toEqual(['execute:succeeded', 'review:succeeded', 'merge_check:succeeded', 'merge_check:succeeded']);
    expect(git(repo, 'rev-parse', 'main')).toBe(reviewedCommit(done));
    expect(git(repo, 'ls-tree', '--name-only', 'main').split('\n')).toEqual(expect.arrayContaining(['a.txt', 'b.txt', 'person.txt']));
    const rounds = (await d.store.events.list({ taskId: b.id, type: 'merge.check' })).events.map((e) => e.payload.round);
    expect(rounds).toEqual([1, 2]);
  });

  it('asks a person when main moved under each of 3 merge checks; a retry checks again and lands', async () => {
    // Each merge's check waits for a word naming the commit it checks (a file in the project's .git, readable in the sandbox).
    const repoOf = makeRepo();
    const gate = join(repoOf, '.git');
    const held = { name: 'held', command: `if [ -f a.txt ] && [ -f b.txt ]; then h=$(git rev-parse HEAD); while [ ! -f '${gate}'/go-$h ]; do sleep 0.1; done; fi` };
    const { d, repo, a, b } = await twoReviewed({ checks: [held] }, { gateRepo: repoOf });
    const worktree = join(worktreeRoot(d.config.home, a.projectId), `${b.id}-v1`);
    await approveAndWait(d, a.id, 'done');
    /** Waits for the n-th merge check at its check, moves main (when asked), then lets the check go on. */
    const round = async (n: number, moveMain: boolean) => {
      await until(d.bus, async () => {
        const run = (await d.store.runs.list({ taskId: b.id })).filter((r) => r.kind === 'merge_check')[n - 1];
        return !!run && (await d.store.events.list({ taskId: b.id, type: 'run.phase', limit: 1000 })).events.some((e) => e.runId === run.id && e.payload.stage === 'check:held' && e.payload.state === 'start');
      }, `merge check ${n} at its check`);
      if (moveMain) {
        writeFileSync(join(repo, `person${n}.txt`), 'meanwhile\n');
        git(repo, 'add', `person${n}.txt`);
        git(repo, 'commit', '-qm', `a person commits during check ${n}`);
      }
      writeFileSync(join(gate, `go-${git(worktree, 'rev-parse', 'HEAD')}`), '');
    };
    expect((await daemonRequest(d, 'POST', `/api/tasks/${b.id}/approve`, { who: 'ada' })).status).toBe(200);
    d.orchestrator.kick();
    for (const n of [1, 2, 3]) await round(n, true);
    const parked = await untilStatus(d, b.id, 'needs_attention', ['done']);
    expect(parked.lastRunError).toBe(`main moved again during each of the 3 merge checks of this change, so nothing was merged (only a checked merge lands); run \`maestro task retry ${b.id}\` to check it again once main is quieter, or \`maestro task cancel ${b.id}\``);
    expect(git(repo, 'ls-tree', '--name-only', 'main')).not.toMatch(/b\.txt/);
    expect((await kinds(d, b.id)).filter((k) => k.startsWith('merge_check'))).toEqual(['merge_check:succeeded', 'merge_check:succeeded', 'merge_check:succeeded']);

    expect((await daemonRequest(d, 'POST', `/api/tasks/${b.id}/retry`, { who: 'ada' })).status).toBe(200);
    d.orchestrator.kick();
    await round(4, false);
    const done = await untilStatus(d, b.id, 'done');
    expect(git(repo, 'rev-parse', 'main')).toBe(reviewedCommit(done));
  });

  it('runs no check when the project has none, though main moved', async () => {
    const { d, repo, a, b } = await twoReviewed({});
    await approveAndWait(d, a.id, 'done');
    await approveAndWait(d, b.id, 'done');
    expect(await kinds(d, a.id)).toEqual(['execute:succeeded', 'review:succeeded']);
    expect(await kinds(d, b.id)).toEqual(['execute:succeeded', 'review:succeeded']);
    expect(git(repo, 'ls-tree', '--name-only', 'main').split('\n')).toEqual(expect.arrayContaining(['a.txt', 'b.txt']));
  });
});
