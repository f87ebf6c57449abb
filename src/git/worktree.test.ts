/**
 * A task worktree deleted under a run, on real git: the agent's next write makes a plain folder in its
 * place, and git still lists the worktree. The next ensure makes it again on the task's branch instead
 * of reusing the folder (where every git would fail), and keeps what stood there aside.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../../test/helpers/db.js';
import { git, makeRepo } from '../../test/helpers/repo.js';
import { observeGit } from './git.js';
import { detachedWorktree, ensureWorktree, listWorktrees, pruneOrphanWorktrees, removeWorktree, worktreeLinked } from './worktree.js';
import { loopTurnsDuring } from '../../test/helpers/loopTurns.js';

afterEach(() => removeTempDirs());

function setup() {
  const repo = makeRepo({ 'README.md': '# r\n' });
  const root = join(tempDir('maestro-wt-'), 'worktrees');
  return { repo, root, spec: { repoPath: repo, worktreeRoot: root, taskId: 'T1', version: 1, baseBranch: 'main' } };
}

/**
 * A task worktree whose folder is gone, beside another worker's `git worktree add` that has made its admin folder
 * and written nothing in it yet (a `git worktree prune` took that folder away, and that add failed).
 */
async function goneBesideOtherAdd() {
  const { repo, spec } = setup();
  const made = await ensureWorktree(spec);
  rmSync(made.path, { recursive: true, force: true });
  const other = join(repo, '.git', 'worktrees', 'other');
  mkdirSync(other);
  return { repo, spec, made, other };
}

/** A commit in the worktree, as an executor run makes one. */
function commitIn(worktree: string, file: string, content: string): string {
  writeFileSync(join(worktree, file), content);
  git(worktree, 'add', '-A');
  git(worktree, 'commit', '-q', '-m', `add ${file}`);
  return git(worktree, 'rev-parse', 'HEAD');
}

describe('a worktree deleted under its task', () => {
  it('is made again on its branch when a plain folder took its place, the branch\'s commits intact, the folder kept aside', async () => {
    const { repo, spec } = setup();
    const first = await ensureWorktree(spec);
    const tip = commitIn(first.path, 'work.txt', 'committed work\n');
    // `rm -rf` while the agent works; its next write recreates the folder, with no .git in it.
    rmSync(first.path, { recursive: true, force: true });
    mkdirSync(join(first.path, 'src'), { recursive: true });
    writeFileSync(join(first.path, 'src', 'stray.ts'), 'written after the delete\n');
    expect(worktreeLinked(first.path)).toBe(false);
    expect((await listWorktrees(repo)).some((w) => w.path === first.path)).toBe(true);

    const again = await ensureWorktree(spec);
    expect(again).toMatchObject({ path: first.path, branch: 'maestro/T1-v1', created: true, newBranch: false });
    expect(worktreeLinked(again.path)).toBe(true);
    expect(git(again.path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('maestro/T1-v1');
    expect(git(again.path, 'rev-parse', 'HEAD')).toBe(tip);
    expect(readFileSync(join(again.path, 'work.txt'), 'utf8')).toBe('committed work\n');
    expect(git(again.path, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    // What stood there is kept beside it, for the person to look at; git knows the worktree once.
    expect(again.movedAside).toMatch(/\/T1-v1\.broken-\d+$/);
    expect(readFileSync(join(again.movedAside!, 'src', 'stray.ts'), 'utf8')).toBe('written after the delete\n');
    expect((await listWorktrees(repo)).filter((w) => w.branch === 'maestro/T1-v1')).toHaveLength(1);
    // A run of it now works there: the next ensure reuses it.
    commitIn(again.path, 'more.txt', 'more\n');
    expect(await ensureWorktree(spec)).toMatchObject({ created: false, baseSha: git(repo, 'rev-parse', 'main') });
  });

  it('an empty folder in its place is removed, nothing kept', async () => {
    const { root, spec } = setup();
    const first = await ensureWorktree(spec);
    rmSync(first.path, { recursive: true, force: true });
    mkdirSync(first.path);
    const again = await ensureWorktree(spec);
    expect(again).toMatchObject({ created: true, newBranch: false });
    expect(again.movedAside).toBeUndefined();
    expect(readdirSync(root)).toEqual(['T1-v1']);
  });

  it('a worktree that is whole is reused, checked from disk', async () => {
    const { repo, spec } = setup();
    const made = await ensureWorktree(spec);
    commitIn(made.path, 'w.txt', 'w\n');
    writeFileSync(join(made.path, 'uncommitted.txt'), 'left by a run\n');
    const calls: string[][] = [];
    const unobserve = observeGit((c) => calls.push(c.args));
    const again = await ensureWorktree(spec);
    unobserve();
    expect(again).toMatchObject({ created: false, newBranch: false });
    expect(again.movedAside).toBeUndefined();
    // Registered in the repository's .git, linked back and whole (read from disk), and the merge-base:
    // nothing removed or added.
    expect(calls.map((a) => a[0])).toEqual(['merge-base']);
    expect(again.baseSha).toBe(git(repo, 'rev-parse', 'main'));
    expect(readFileSync(join(made.path, 'uncommitted.txt'), 'utf8')).toBe('left by a run\n');
    expect(git(repo, 'worktree', 'list').split('\n')).toHaveLength(2);
    // A review does not read the base: no git process at all.
    calls.length = 0;
    const unobserveAgain = observeGit((c) => calls.push(c.args));
    const reviewed = await ensureWorktree({ ...spec, readBase: false });
    unobserveAgain();
    expect(reviewed).toMatchObject({ created: false, baseSha: null, path: made.path });
    expect(calls).toEqual([]);
  });

  it('a new worktree costs the add alone, and a kept branch is checked out again', async () => {
    const { repo, spec } = setup();
    const calls: string[][] = [];
    const unobserve = observeGit((c) => calls.push(c.args));
    const made = await ensureWorktree(spec);
    // No registration of the path (read from the repository's .git/worktrees), the base and the branch (read from
    // their ref files): the add alone.
    expect(calls.map((a) => a[0])).toEqual(['worktree']);
    expect(made).toMatchObject({ created: true, newBranch: true, baseSha: git(repo, 'rev-parse', 'main') });
    const tip = commitIn(made.path, 'w.txt', 'w\n');
    git(repo, 'worktree', 'remove', '--force', made.path);
    calls.length = 0;
    const again = await ensureWorktree(spec);
    unobserve();
    expect(calls.map((a) => a[0])).toEqual(['worktree']);
    expect(again).toMatchObject({ created: true, newBranch: false });
    expect(git(again.path, 'rev-parse', 'HEAD')).toBe(tip);
  });

  it('a clone\'s remote-tracking base (origin/main) is read from its ref file; a tag of the base\'s name is git\'s to resolve, as git would', async () => {
    const { repo, spec } = setup();
    const first = git(repo, 'rev-parse', 'main');
    git(repo, 'update-ref', 'refs/remotes/origin/main', first);
    commitIn(repo, 'later.txt', 'later\n');
    const calls: string[][] = [];
    const unobserve = observeGit((c) => calls.push(c.args));
    const made = await ensureWorktree({ ...spec, baseBranch: 'origin/main' });
    expect(calls.map((a) => a[0])).toEqual(['worktree']);
    expect(made).toMatchObject({ created: true, newBranch: true, baseSha: first });
    // A tag named `main` on the first commit: `git rev-parse main` takes the tag (refs/tags before refs/heads).
    git(repo, 'tag', 'main', first);
    calls.length = 0;
    const tagged = await ensureWorktree({ ...spec, taskId: 'T2' });
    unobserve();
    expect(calls.map((a) => a[0])).toEqual(['rev-parse', 'worktree']);
    expect(tagged.baseSha).toBe(first);
    expect(git(tagged.path, 'rev-parse', 'HEAD')).toBe(first);
  });

  it('a base branch the repository does not have is named, with the setting that changes it', async () => {
    const { repo, spec } = setup();
    await expect(ensureWorktree({ ...spec, baseBranch: 'master' })).rejects.toMatchObject({
      code: 'BAD_INPUT',
      message: `the project's base branch master is not in ${repo}: name the branch its tasks start from and merge into (maestro project config set baseBranch <branch>)`,
    });
  });

  it('a base that is no branch (a tag) is still resolved', async () => {
    const { repo, spec } = setup();
    git(repo, 'tag', 'v1');
    const made = await ensureWorktree({ ...spec, baseBranch: 'v1' });
    expect(made).toMatchObject({ created: true, newBranch: true, baseSha: git(repo, 'rev-parse', 'v1^{commit}') });
  });

  it('a worktree reached through a symlinked root (a home under a linked folder) is reused, not taken for a stray one', async () => {
    const { repo, spec } = setup();
    const real = tempDir('maestro-wt-real-');
    const linked = join(tempDir('maestro-wt-link-'), 'root');
    symlinkSync(real, linked);
    const made = await ensureWorktree({ ...spec, worktreeRoot: linked });
    writeFileSync(join(made.path, 'uncommitted.txt'), 'left by a run\n');
    const again = await ensureWorktree({ ...spec, worktreeRoot: linked });
    expect(again).toMatchObject({ created: false, newBranch: false });
    expect(again.movedAside).toBeUndefined();
    expect(readFileSync(join(again.path, 'uncommitted.txt'), 'utf8')).toBe('left by a run\n');
    expect(readdirSync(real)).toEqual(['T1-v1']);
    expect(git(repo, 'worktree', 'list').split('\n')).toHaveLength(2);
  });

  it('a registration whose folder is gone is found on disk and forgotten, alone; a half-made admin folder is not reused', async () => {
    const { repo, spec, other } = await goneBesideOtherAdd();
    const calls: string[][] = [];
    const unobserve = observeGit((c) => calls.push(c.args));
    const again = await ensureWorktree(spec);
    unobserve();
    expect(calls.map((a) => a.slice(0, 2).join(' '))).toEqual(['worktree add']);
    expect(existsSync(other)).toBe(true);
    rmSync(other, { recursive: true });
    expect(again).toMatchObject({ created: true, newBranch: false });
    // An add another worker has half done: git has not written commondir yet. Not taken as whole from disk.
    const admin = readFileSync(join(again.path, '.git'), 'utf8').replace(/^gitdir: /, '').trim();
    rmSync(join(admin, 'commondir'));
    calls.length = 0;
    const unobserveAgain = observeGit((c) => calls.push(c.args));
    await expect(ensureWorktree({ ...spec, readBase: false })).resolves.toMatchObject({ created: true });
    unobserveAgain();
    expect(calls[0]).toEqual(['rev-parse', '--show-toplevel']);
    expect(git(repo, 'worktree', 'list').split('\n')).toHaveLength(2);
  });
});

/** Another worker's `git worktree add` half-way: its record made, its commondir not yet written. Returns what finishes it. */
function otherAddHalfWay(repo: string): () => void {
  const admin = join(repo, '.git', 'worktrees', 'other');
  mkdirSync(admin, { recursive: true });
  writeFileSync(join(admin, 'locked'), 'initializing\n');
  writeFileSync(join(admin, 'gitdir'), `${join(repo, '..', 'other', '.git')}\n`);
  writeFileSync(join(admin, 'commondir'), '');
  return () => {
    writeFileSync(join(admin, 'commondir'), '../..\n');
    writeFileSync(join(admin, 'HEAD'), `${git(repo, 'rev-parse', 'HEAD')}\n`);
  };
}

describe('worktrees while another worker adds one', () => {
  it('listing, adding a task worktree or a planner checkout, and removing stale ones wait the other add out', async () => {
    const { repo, root, spec } = setup();
    const made = await ensureWorktree({ ...spec, taskId: 'T0' });
    // [what, the step, whether the other add starts only once the step has listed the worktrees (its add or remove meets it)]
    const steps: Array<[string, () => Promise<unknown>, boolean]> = [
      ['list', () => listWorktrees(repo), false],
      ['task worktree', () => ensureWorktree(spec), false],
      ['planner checkout', () => detachedWorktree(repo, root, 'T1-plan', 'main'), true],
      ['removal', () => pruneOrphanWorktrees(repo, root, async () => ['T1-v1', 'T1-plan']), true],
    ];
    for (const [what, step, afterListing] of steps) {
      // The other add goes on once the step has met it half-way (a git call of the step failed).
      let finish: (() => void) | null = afterListing ? null : otherAddHalfWay(repo);
      let met = false;
      const unobserve = observeGit((c) => {
        if (finish && !met && c.code !== 0) {
          met = true;
          finish();
        } else if (!finish && c.args.join(' ') === 'worktree list --porcelain') finish = otherAddHalfWay(repo);
      });
      await expect(step(), what).resolves.toBeDefined();
      unobserve();
      expect(met, `${what}: the step met the other add half-way`).toBe(true);
    }
    expect(existsSync(made.path)).toBe(false);
    const listed = (await listWorktrees(repo)).map((w) => w.path);
    expect(listed).toContain(join(root, 'T1-v1'));
    expect(listed).toContain(join(root, 'T1-plan'));
  });
});

describe('removing a task worktree', () => {
  it('removes the folder and git\'s record of it without a git process', async () => {
    const { repo, spec } = setup();
    const made = await ensureWorktree(spec);
    writeFileSync(join(made.path, 'left.txt'), 'uncommitted\n');
    const calls: string[][] = [];
    const unobserve = observeGit((c) => calls.push(c.args));
    await removeWorktree(repo, made.path);
    unobserve();
    expect(calls).toEqual([]);
    expect(existsSync(made.path)).toBe(false);
    expect(git(repo, 'worktree', 'list', '--porcelain')).not.toContain('T1-v1');
    git(repo, 'branch', '-D', made.branch); // no longer checked out anywhere
    expect(git(repo, 'worktree', 'prune', '--dry-run', '-v')).toBe('');
  });

  it('a worktree whose folder is already gone: its registration alone is forgotten, another add half-way kept', async () => {
    const { repo, made, other } = await goneBesideOtherAdd();
    await removeWorktree(repo, made.path);
    expect(existsSync(other)).toBe(true);
    rmSync(other, { recursive: true });
    expect(git(repo, 'worktree', 'list', '--porcelain')).not.toContain('T1-v1');
  });

  it('lets the daemon go on while it removes a worktree of many files (an agent\'s npm install)', async () => {
    const { repo, spec } = setup();
    const made = await ensureWorktree(spec);
    for (let d = 0; d < 20; d++) {
      const dir = join(made.path, 'node_modules', `pkg-${d}`);
      mkdirSync(dir, { recursive: true });
      for (let f = 0; f < 100; f++) writeFileSync(join(dir, `f${f}.js`), 'module.exports = 1;\n');
    }
    // Turns of the event loop while the removal runs: a daemon's timers, sockets and ticks get them.
    const turns = await loopTurnsDuring(() => removeWorktree(repo, made.path));
    expect(existsSync(made.path)).toBe(false);
    expect(turns).toBeGreaterThan(0);
  });

  it('a locked worktree is left to git, which refuses it; both stay', async () => {
    const { repo, spec } = setup();
    const made = await ensureWorktree(spec);
    git(repo, 'worktree', 'lock', '--reason', 'a person is looking', made.path);
    await expect(removeWorktree(repo, made.path)).rejects.toMatchObject({ code: 'GIT_FAILED', message: expect.stringMatching(/locked/) });
    expect(worktreeLinked(made.path)).toBe(true);
    expect(git(repo, 'worktree', 'list', '--porcelain')).toContain('locked a person is looking');
  });
});
