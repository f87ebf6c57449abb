import { existsSync, mkdirSync, readFileSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { MaestroError } from '../core/errors.js';
import type { Project } from '../core/types.js';
import { tempDir } from '../../test/helpers/db.js';
import { git, makeRepo } from '../../test/helpers/repo.js';
import { silentServer } from '../../test/helpers/silentServer.js';
import { poll } from '../../test/helpers/wait.js';
import { observeGit } from '../git/git.js';
import { ABANDONED_WORKTREE_MS } from './remoteFetch.js';
import { ProjectRepos } from './repos.js';

function sharedProject(): { project: Project; home: string } {
  const work = makeRepo();
  const remote = join(tempDir('maestro-remote-'), 'remote.git');
  git(work, 'clone', '-q', '--bare', work, remote);
  const project: Project = { id: 'p_repos', name: 'repos', repoPath: work, config: { remote }, createdAt: 0, updatedAt: 0, archivedAt: null };
  return { project, home: tempDir('maestro-home-') };
}

/** A run's daemon that still holds its task. */
const holding = async () => true;

function commitFile(dir: string, name: string): void {
  writeFileSync(join(dir, name), `${name}\n`);
  git(dir, 'add', name);
  git(dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', name);
}

/**
 * Daemon a runs a task in its worktree (`inWorktree` commits there) and publishes the branch; daemon b takes the task
 * over, commits b.txt on top and publishes that.
 */
async function takenOver(branch: string, inWorktree: (wt: string) => void) {
  const { project, home } = sharedProject();
  const a = new ProjectRepos(home);
  const b = new ProjectRepos(tempDir('maestro-home-'));
  const cloneA = await a.prepare(project);
  const wt = join(tempDir('maestro-wt-'), 'wt');
  git(cloneA, 'worktree', 'add', '-q', '-b', branch, wt);
  inWorktree(wt);
  await a.pushBranch(project, cloneA, branch, holding);
  const cloneB = await b.prepare(project);
  await b.fetchBranch(project, cloneB, branch);
  git(cloneB, 'checkout', '-q', branch);
  commitFile(cloneB, 'b.txt');
  await b.pushBranch(project, cloneB, branch, holding);
  return { project, remote: project.config.remote as string, a, b, cloneA, cloneB, wt };
}

/**
 * Counts the clone's connections to its remote that start `program` there (receive-pack: pushes; upload-pack:
 * fetches). `first`: shell lines the remote runs before it (a wait, a refusal).
 */
function countRemoteCalls(clone: string, program: 'receive-pack' | 'upload-pack', first = ''): () => number {
  const log = join(tempDir('maestro-calls-'), 'calls');
  const wrapper = join(tempDir('maestro-counter-'), program);
  writeFileSync(wrapper, `#!/bin/sh\necho call >> '${log}'\n${first}\nexec git-${program} "$@"\n`, { mode: 0o755 });
  git(clone, 'config', `remote.origin.${program.replace('-', '')}`, wrapper);
  return () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').length : 0);
}

/**
 * What `git worktree add` leaves for an instant, in git's order: its record with commondir still empty
 * (before HEAD is written), or with HEAD still the null id. Returns the unfinished file and what finishes it.
 */
const HALF_ADDED = {
  'its commondir still empty': (admin: string) => {
    writeFileSync(join(admin, 'commondir'), '');
    return { file: join(admin, 'commondir'), finish: () => writeFileSync(join(admin, 'commondir'), '../..\n') };
  },
  'its HEAD still the null id': (admin: string) => {
    writeFileSync(join(admin, 'commondir'), '../..\n');
    writeFileSync(join(admin, 'HEAD'), `${'0'.repeat(40)}\n`);
    return { file: join(admin, 'HEAD'), finish: () => writeFileSync(join(admin, 'HEAD'), `${git(join(admin, '..', '..', '..'), 'rev-parse', 'HEAD')}\n`) };
  },
};

function halfAddedWorktree(clone: string, state: keyof typeof HALF_ADDED): { file: string; finish: () => void } {
  const admin = join(clone, '.git', 'worktrees', 'x');
  mkdirSync(admin, { recursive: true });
  writeFileSync(join(admin, 'locked'), 'initializing\n');
  writeFileSync(join(admin, 'gitdir'), `${join(clone, '..', 'wt-x', '.git')}\n`);
  return HALF_ADDED[state](admin);
}

describe.each(Object.keys(HALF_ADDED) as (keyof typeof HALF_ADDED)[])('ProjectRepos on a shared remote, a worktree half-added with %s', (state) => {
  it('a fetch that meets it (a worker adding a worktree) is tried again once the worktree is there', async () => {
    const { project, home } = sharedProject();
    const repos = new ProjectRepos(home);
    const clone = await repos.prepare(project);
    const half = halfAddedWorktree(clone, state);
    // The worker's `git worktree add` goes on once the fetch has met it half-way (a fetch that failed).
    let met = 0;
    const unobserve = observeGit((c) => {
      if (c.code !== 0 && c.args.includes('fetch') && met++ === 0) half.finish();
    });
    await expect(repos.prepare(project)).resolves.toBe(clone);
    unobserve();
    expect(met).toBe(1);
    expect(existsSync(half.file)).toBe(true);
  });

  it('left so (its worker killed in the middle), it is forgotten once abandoned, and the fetch goes on', async () => {
    const { project, home } = sharedProject();
    const repos = new ProjectRepos(home);
    const clone = await repos.prepare(project);
    const half = halfAddedWorktree(clone, state);
    const past = new Date(Date.now() - ABANDONED_WORKTREE_MS - 1000);
    utimesSync(half.file, past, past);
    await expect(repos.prepare(project)).resolves.toBe(clone);
    expect(existsSync(join(clone, '.git', 'worktrees', 'x'))).toBe(false);
    expect(git(clone, 'worktree', 'list')).not.toContain('wt-x');
  });
});

describe('ProjectRepos and the remote\'s base branch', () => {
  it('a remote without the project\'s base branch (its work on master) is named, with its branches and the setting that changes it', async () => {
    const { project, home } = sharedProject();
    const remote = project.config.remote as string;
    git(remote, 'branch', '-m', 'main', 'master');
    const repos = new ProjectRepos(home);
    await expect(repos.prepare(project)).rejects.toMatchObject({
      code: 'BAD_INPUT',
      message: `the shared remote ${remote} has no branch main (its branches: master): name the branch its tasks start from and merge into (maestro project config set baseBranch <branch>)`,
    });
    await expect(repos.prepare({ ...project, config: { ...project.config, baseBranch: 'master' } })).resolves.toBe(join(home, 'clones', project.id));
  });
});

describe('ProjectRepos and the branches it fetches', () => {
  it("a sync brings the base branch and Maestro's task branches, not a colleague's branch pushed to the remote", async () => {
    const { project, home } = sharedProject();
    const remote = project.config.remote as string;
    const repos = new ProjectRepos(home);
    const clone = await repos.prepare(project);
    // Pushed by others after the clone was made: main moved, a task branch, and a branch that is nobody's task.
    const other = join(tempDir('maestro-other-'), 'work');
    git(tempDir('maestro-cwd-'), 'clone', '-q', remote, other);
    const pushed = (branch: string) => {
      git(other, 'checkout', '-q', '-B', branch, 'origin/main');
      commitFile(other, `${branch.replace(/\//g, '-')}.txt`);
      git(other, 'push', '-q', 'origin', `HEAD:refs/heads/${branch}`);
      return git(other, 'rev-parse', 'HEAD').trim();
    };
    const main = pushed('main');
    const task = pushed('maestro/t_other-v1');
    const colleague = pushed('feature/colleague');

    await expect(repos.prepare(project)).resolves.toBe(clone);
    expect(git(clone, 'rev-parse', 'refs/remotes/origin/main').trim()).toBe(main);
    expect(git(clone, 'rev-parse', 'refs/remotes/origin/maestro/t_other-v1').trim()).toBe(task);
    expect(git(clone, 'for-each-ref', '--format=%(refname)', 'refs/remotes/origin/feature')).toBe('');
    expect(() => git(clone, 'cat-file', '-e', `${colleague}^{commit}`)).toThrow(); // its commit never came down
  });
});

describe('ProjectRepos and refs that move under a fetch', () => {
  it('a fetch the remote refuses for a ref it had just listed (a push deleted it meanwhile) is made again', async () => {
    const { project, home } = sharedProject();
    const repos = new ProjectRepos(home);
    const clone = await repos.prepare(project);
    // The remote answers the first fetch as git's upload-pack does when the ref asked for went between its list
    // and the request; later fetches go through.
    const refused = join(tempDir('maestro-refused-'), 'once');
    const fetches = countRemoteCalls(clone, 'upload-pack', `if [ ! -e '${refused}' ]; then touch '${refused}'; echo 'fatal: git upload-pack: not our ref ${'0'.repeat(40)}' >&2; exit 128; fi`);
    const other = join(tempDir('maestro-other-'), 'work');
    git(tempDir('maestro-cwd-'), 'clone', '-q', project.config.remote as string, other);
    commitFile(other, 'moved.txt');
    git(other, 'push', '-q', 'origin', 'HEAD:main');

    await expect(repos.prepare(project)).resolves.toBe(clone);
    expect(git(clone, 'rev-parse', 'refs/remotes/origin/main')).toBe(git(other, 'rev-parse', 'HEAD'));
    expect(fetches()).toBe(2);
  });
});

describe('ProjectRepos syncing a clone for runs', () => {
  it('runs claimed together share one sync started after their claim; a run decided once it had begun waits for one of its own', async () => {
    const { project, home } = sharedProject();
    const repos = new ProjectRepos(home);
    const clone = await repos.prepare(project);
    // Every fetch from now on waits at the remote for the gate to open (five minutes at most: a failed test leaves
    // none waiting for good), and closes it behind itself.
    const gate = join(tempDir('maestro-gate-'), 'open');
    const wait = `i=0; while [ ! -e '${gate}' ] && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done`;
    const fetches = countRemoteCalls(clone, 'upload-pack', `${wait}\nrm -f '${gate}'`);
    const done: string[] = [];

    const claimed = repos.mark();
    const first = repos.prepare(project, claimed);
    await poll(() => fetches() === 1, "the first run's fetch under way");
    const second = repos.prepare(project, claimed).then((c) => (done.push('second'), c)); // claimed with the first
    const later = repos.prepare(project).then((c) => (done.push('later'), c)); // decided once that fetch had begun: it may lack a push made since
    writeFileSync(gate, '');
    await expect(first).resolves.toBe(clone);
    await poll(() => fetches() === 2, "the later run's fetch under way");
    expect(done).toEqual(['second']);
    writeFileSync(gate, '');
    await expect(Promise.all([second, later])).resolves.toEqual([clone, clone]);
    expect(done).toEqual(['second', 'later']);
    expect(fetches()).toBe(2);
  });
});

describe('ProjectRepos keeping its clone', () => {
  it('fetches without git\'s auto-maintenance (a process per fetch) and maintains the clone itself once per MAINTENANCE_EVERY_MS', async () => {
    const { project, home } = sharedProject();
    const repos = new ProjectRepos(home);
    const calls: string[][] = [];
    const unobserve = observeGit((c) => calls.push(c.args));
    const clone = await repos.prepare(project);
    await repos.prepare(project);
    await repos.refresh(project);
    unobserve();
    const fetches = calls.filter((a) => a.includes('fetch'));
    expect(fetches).toHaveLength(3);
    for (const f of fetches) expect(f.slice(0, 3)).toEqual(['-c', 'maintenance.auto=false', 'fetch']);
    expect(calls.filter((a) => a[0] === 'maintenance')).toEqual([['maintenance', 'run', '--auto', '--quiet']]);
    expect(git(clone, 'rev-parse', 'origin/main')).toBe(git(project.config.remote as string, 'rev-parse', 'main'));
  });
});

describe('ProjectRepos and a remote that does not answer', () => {
  it('says REMOTE_UNREACHABLE once, fails at once (no git) until the retry is due, then unready() tries again in the background and says it answers', async () => {
    const { project, home } = sharedProject();
    const remote = project.config.remote as string;
    renameSync(remote, `${remote}.away`);
    const heard: (string | null)[] = [];
    let clock = 1_000;
    let ready = 0;
    const errors: Error[] = [];
    const repos = new ProjectRepos(home, { retryMs: 10_000, now: () => clock, onReachability: (_p, err) => heard.push(err ? err.code : null) });
    const first = await repos.prepare(project).catch((e: MaestroError) => e);
    expect(first).toMatchObject({ code: 'REMOTE_UNREACHABLE', message: expect.stringContaining(`The shared remote ${remote} of project repos cannot be reached`) });
    expect(existsSync(join(home, 'clones', project.id))).toBe(false);
    renameSync(`${remote}.away`, remote);
    // Back, but not tried before its retry is due: the same error, without a git process, and no retry started.
    expect(await repos.prepare(project).catch((e: unknown) => e)).toBe(first);
    expect(repos.unready([project], () => ready++, (err) => errors.push(err))).toEqual(new Set([project.id]));
    await repos.idle();
    expect({ ready, heard }).toEqual({ ready: 0, heard: ['REMOTE_UNREACHABLE'] });
    // Due: the background retry clones, says the remote answers again, and the project may be claimed from.
    clock += 10_000;
    expect(repos.unready([project], () => ready++, (err) => errors.push(err))).toEqual(new Set([project.id]));
    await repos.idle();
    expect({ ready, heard, errors }).toEqual({ ready: 1, heard: ['REMOTE_UNREACHABLE', null], errors: [] });
    expect(repos.unready([project], () => ready++, (err) => errors.push(err))).toEqual(new Set());
    expect(git(join(home, 'clones', project.id), 'rev-parse', 'HEAD')).toBe(git(remote, 'rev-parse', 'main'));
  });

  it('a failure that is not the remote\'s (a damaged clone) stays a git error: no health condition, a person sees it', async () => {
    const { project, home } = sharedProject();
    const heard: unknown[] = [];
    const repos = new ProjectRepos(home, { onReachability: (_p, err) => heard.push(err) });
    const clone = await repos.prepare(project);
    writeFileSync(join(clone, '.git', 'HEAD'), 'garbage\n');
    const err = await repos.prepare(project).catch((e: MaestroError) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as MaestroError).code).not.toBe('REMOTE_UNREACHABLE');
    expect(heard).toEqual([]);
    expect(repos.reach.failed(project.id)).toBe(false);
  });

  it('forgets the failure of a project no longer on a shared remote, and says so', async () => {
    const { project, home } = sharedProject();
    renameSync(project.config.remote as string, `${project.config.remote as string}.away`);
    const heard: (string | null)[] = [];
    const repos = new ProjectRepos(home, { onReachability: (_p, err) => heard.push(err ? err.code : null) });
    await repos.prepare(project).catch(() => undefined);
    repos.unready([{ ...project, config: {} }], () => undefined, () => undefined);
    expect(heard).toEqual(['REMOTE_UNREACHABLE', null]);
    expect(repos.reach.failed(project.id)).toBe(false);
  });

  it('a clone cut short (left as .partial by a kill) is cleared and made again whole', async () => {
    const { project, home } = sharedProject();
    mkdirSync(join(home, 'clones', `${project.id}.partial`, '.git'), { recursive: true });
    writeFileSync(join(home, 'clones', `${project.id}.partial`, '.git', 'HEAD'), 'garbage');
    const repos = new ProjectRepos(home);
    const clone = await repos.prepare(project);
    expect(git(clone, 'status', '--porcelain')).toBe('');
    expect(existsSync(`${clone}.partial`)).toBe(false);
  });

  it('a remote that takes the connection and never says a word: the clone and the push are stopped after stallMs, and their connections closed', async () => {
    const silent = await silentServer();
    try {
      const remote = `http://127.0.0.1:${silent.port}/shared.git`;
      const home = tempDir('maestro-home-');
      const project: Project = { id: 'p_silent', name: 'silent', repoPath: remote, config: { remote }, createdAt: 0, updatedAt: 0, archivedAt: null };
      const repos = new ProjectRepos(home, { stallMs: 500 });
      const err = await repos.prepare(project).catch((e: MaestroError) => e);
      expect(err).toMatchObject({ code: 'REMOTE_UNREACHABLE', message: expect.stringContaining('no answer from the remote: nothing from it for 0.5 s, stopped') });
      expect(silent.accepted()).toBeGreaterThan(0);
      await poll(() => silent.open() === 0, 'the stopped clone’s connection closed', 30_000);
      expect(existsSync(join(home, 'clones', project.id))).toBe(false);

      // A clone made while the remote answered; then the remote falls silent under a push.
      const shared = sharedProject();
      // The clone from a local remote with the default stall time: git says nothing until it is done, however slow the machine.
      const clone = await new ProjectRepos(shared.home).prepare(shared.project);
      git(clone, 'remote', 'set-url', 'origin', remote);
      const before = silent.accepted();
      const push = await new ProjectRepos(shared.home, { stallMs: 500 }).pushMain(shared.project, clone).catch((e: MaestroError) => e);
      expect(push).toMatchObject({ code: 'GIT_FAILED', message: expect.stringMatching(/^The push of main to the remote failed: .*no answer from the remote: nothing from it for 0\.5 s, stopped/) });
      expect(silent.accepted()).toBeGreaterThan(before);
      await poll(() => silent.open() === 0, 'the stopped push’s connection closed', 30_000);
    } finally {
      await silent.close();
    }
  });
});

describe('ProjectRepos publishing a task branch', () => {
  it('pushes a branch the remote lacks or has older, and not again when the remote has its commit (after a review run: without waiting for the clone)', async () => {
    const { project, home } = sharedProject();
    const remote = project.config.remote as string;
    const repos = new ProjectRepos(home);
    const clone = await repos.prepare(project);
    // Every connection a push makes to the remote, counted (git starts receive-pack on the remote's side for each).
    const pushes = countRemoteCalls(clone, 'receive-pack');
    const branch = 'maestro/t_x-v1';
    const commit = (name: string) => commitFile(clone, name);
    git(clone, 'checkout', '-q', '-b', branch);
    commit('a.txt');
    await repos.pushBranch(project, clone, branch, holding); // after the execute run
    expect(pushes()).toBe(1);
    expect(git(remote, 'rev-parse', branch)).toBe(git(clone, 'rev-parse', branch));
    // After the review run: nothing new, and nothing to wait for while a merge train holds the clone.
    let release = () => {};
    let held = true;
    const train = repos.exclusive(project.id, () => new Promise<void>((r) => (release = () => ((held = false), r()))));
    const published = repos.pushBranch(project, clone, branch, holding).then(() => held);
    const ends = setTimeout(() => release(), 10_000); // what a wait for the clone would take
    expect(await published).toBe(true);
    clearTimeout(ends);
    release();
    await train;
    expect(pushes()).toBe(1);
    commit('b.txt');
    await repos.pushBranch(project, clone, branch, holding); // after a conflict run's commit
    expect(pushes()).toBe(2);
    expect(git(remote, 'rev-parse', branch)).toBe(git(clone, 'rev-parse', branch));
  });

  it('a clone with an older copy of a task branch (another daemon ran the task since) moves it forward, its worktree too, and never pushes the old copy back', async () => {
    const branch = 'maestro/t_y-v1';
    const { project, remote, a, cloneA, wt } = await takenOver(branch, (wt) => commitFile(wt, 'a.txt'));
    const newer = git(remote, 'rev-parse', branch);
    // a's push after a run of its own that changed nothing leaves the remote's branch where b put it, whether
    // a has fetched since or not.
    await a.pushBranch(project, cloneA, branch, holding);
    expect(git(remote, 'rev-parse', branch)).toBe(newer);
    await a.prepare(project);
    await a.pushBranch(project, cloneA, branch, holding);
    expect(git(remote, 'rev-parse', branch)).toBe(newer);
    // a's next run starts from b's commit, in the worktree it had: files, index and branch together.
    await a.fetchBranch(project, cloneA, branch);
    expect(git(cloneA, 'rev-parse', branch)).toBe(newer);
    expect(readFileSync(join(wt, 'b.txt'), 'utf8')).toBe('b.txt\n');
    expect(git(wt, 'status', '--porcelain')).toBe('');
  });

  it("replaces a discarded run's branch in its worktree without running what a repository an agent made there names (core.fsmonitor)", async () => {
    const branch = 'maestro/t_n-v1';
    // The branch holds a gitlink (a repository committed by mistake once): git looks into whatever is in its folder.
    const { project, a, cloneA, wt } = await takenOver(branch, (wt) => {
      git(wt, 'update-index', '--add', '--cacheinfo', `160000,${git(wt, 'rev-parse', 'HEAD')},lib`);
      git(wt, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'a gitlink');
    });
    // In a's worktree, an agent made a repository in that folder and armed it.
    const ran = join(tempDir('maestro-ran-'), 'ran');
    mkdirSync(join(wt, 'lib'), { recursive: true });
    git(join(wt, 'lib'), 'init', '-q');
    commitFile(join(wt, 'lib'), 'l.txt');
    git(join(wt, 'lib'), 'config', 'core.fsmonitor', `echo fsmonitor >> ${ran}; false`);
    writeFileSync(join(wt, 'lib', 'l.txt'), 'changed\n');
    // a's run whose outcome was discarded committed apart from b's: the remote's branch replaces it, and what that
    // run left uncommitted is set aside first (git status and add over the worktree).
    commitFile(wt, 'discarded.txt');
    writeFileSync(join(wt, 'left.txt'), 'left\n');
    const newer = git(project.config.remote as string, 'rev-parse', branch);
    await a.prepare(project);
    await a.fetchBranch(project, cloneA, branch, newer);
    expect(git(cloneA, 'rev-parse', branch)).toBe(newer);
    expect(existsSync(ran) ? readFileSync(ran, 'utf8') : 'nothing ran').toBe('nothing ran');
  });

  it('a run asks the remote only for what this clone may lack: a review of the commit it holds and the remote took fetches nothing, a first run looks for no branch', async () => {
    const { project, home } = sharedProject();
    const remote = project.config.remote as string;
    const repos = new ProjectRepos(home);
    const clone = await repos.prepare(project);
    // Every fetch and ls-remote, counted (upload-pack on the remote's side for each).
    const fetches = countRemoteCalls(clone, 'upload-pack');
    const branch = 'maestro/t_z-v1';
    // A first execute: main is fetched, and nobody asks the remote for a branch no run has pushed.
    await expect(repos.prepareRun(project, branch, { commit: null, counted: null, published: false, holds: holding })).resolves.toBe(clone);
    expect(fetches()).toBe(1);
    const wt = join(tempDir('maestro-wt-'), 'wt');
    git(clone, 'worktree', 'add', '-q', '-b', branch, wt, 'origin/main');
    commitFile(wt, 'a.txt');
    const executed = git(wt, 'rev-parse', 'HEAD');
    // The push after the execute run has not happened yet: the review publishes its commit before it starts
    // (another daemon may merge what it approves).
    await repos.prepareRun(project, branch, { commit: executed, counted: executed, published: true, holds: holding });
    expect(git(remote, 'rev-parse', branch)).toBe(executed);
    expect(fetches()).toBe(2);
    // Main moves on the remote meanwhile (another daemon merged): the review of this clone's commit needs none of it.
    const other = join(tempDir('maestro-other-'), 'other');
    git(tempDir('maestro-x-'), 'clone', '-q', remote, other);
    commitFile(other, 'main.txt');
    git(other, 'push', '-q', 'origin', 'HEAD:main');
    const before = git(clone, 'rev-parse', 'origin/main');
    const calls: string[][] = [];
    const unobserve = observeGit((c) => calls.push(c.args));
    await expect(repos.prepareRun(project, branch, { commit: executed, counted: executed, published: true, holds: holding })).resolves.toBe(clone);
    unobserve();
    expect(calls).toEqual([]); // the branch and where the remote has it, read from the clone's ref files
    expect(fetches()).toBe(2);
    expect(git(clone, 'rev-parse', 'origin/main')).toBe(before);
    // Another daemon ran the task again and recorded its commit: this clone's is not it, so the remote is asked.
    const cloneB = await new ProjectRepos(tempDir('maestro-home-')).prepare(project);
    git(cloneB, 'fetch', '-q', 'origin', `${branch}:${branch}`);
    git(cloneB, 'checkout', '-q', branch);
    commitFile(cloneB, 'b.txt');
    git(cloneB, 'push', '-q', 'origin', branch);
    const newer = git(cloneB, 'rev-parse', 'HEAD');
    await repos.prepareRun(project, branch, { commit: newer, counted: newer, published: true, holds: holding });
    expect(fetches()).toBe(3);
    expect(git(clone, 'rev-parse', branch)).toBe(newer);
    expect(git(clone, 'rev-parse', 'origin/main')).toBe(git(remote, 'rev-parse', 'main'));
  });

  it('pushes main and deletes merged branches in one atomic push; a remote without atomic pushes gets main alone', async () => {
    for (const atomic of [true, false]) {
      const { project, home } = sharedProject();
      const remote = project.config.remote as string;
      git(remote, 'config', 'receive.advertiseAtomic', String(atomic));
      const repos = new ProjectRepos(home);
      const clone = await repos.prepare(project);
      git(clone, 'checkout', '-q', '-b', 'maestro/t_m-v1');
      commitFile(clone, 'm.txt');
      git(clone, 'push', '-q', 'origin', 'maestro/t_m-v1');
      git(clone, 'checkout', '-q', 'main');
      git(clone, 'merge', '-q', '--ff-only', 'maestro/t_m-v1');
      await expect(repos.pushMain(project, clone, ['maestro/t_m-v1'])).resolves.toEqual(atomic ? ['maestro/t_m-v1'] : []);
      expect(git(remote, 'rev-parse', 'main')).toBe(git(clone, 'rev-parse', 'main'));
      expect(git(remote, 'branch', '--list', 'maestro/*')).toBe(atomic ? '' : 'maestro/t_m-v1');
    }
  });
});
