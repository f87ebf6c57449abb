/**
 * A task worktree deleted under a run, on real git: the agent's next write makes a plain folder in its
 * place, and git still lists the worktree. The next ensure makes it again on the task's branch instead
 * of reusing the folder (where every git would fail), and keeps what stood there aside.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../../test/helpers/db.js';
import { git, makeRepo } from '../../test/helpers/repo.js';
import { observeGit } from './git.js';
import { ensureWorktree, listWorktrees, worktreeLinked } from './worktree.js';

afterEach(() => removeTempDirs());

function setup() {
  const repo = makeRepo({ 'README.md': '# r\n' });
  const root = join(tempDir('maestro-wt-'), 'worktrees');
  return { repo, root, spec: { repoPath: repo, worktreeRoot: root, taskId: 'T1', version: 1, baseBranch: 'main' } };
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
    const { repo, root, spec } = setup();
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

  it('a worktree that is whole is reused, checked with one git process', async () => {
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
    // Registered in the repository's .git (read from disk, no listing), the check (rev-parse --show-toplevel)
    // and the merge-base: nothing removed or added.
    expect(calls.map((a) => a[0])).toEqual(['rev-parse', 'merge-base']);
    expect(again.baseSha).toBe(git(repo, 'rev-parse', 'main'));
    expect(readFileSync(join(made.path, 'uncommitted.txt'), 'utf8')).toBe('left by a run\n');
    expect(git(repo, 'worktree', 'list').split('\n')).toHaveLength(2);
    // A review does not read the base: the check alone.
    calls.length = 0;
    const unobserveAgain = observeGit((c) => calls.push(c.args));
    const reviewed = await ensureWorktree({ ...spec, readBase: false });
    unobserveAgain();
    expect(reviewed).toMatchObject({ created: false, baseSha: null, path: made.path });
    expect(calls.map((a) => a[0])).toEqual(['rev-parse']);
  });

  it('a new worktree reads the base and the branch in one process, and a kept branch is checked out again', async () => {
    const { repo, spec } = setup();
    const calls: string[][] = [];
    const unobserve = observeGit((c) => calls.push(c.args));
    const made = await ensureWorktree(spec);
    expect(calls.map((a) => a[0])).toEqual(['worktree', 'for-each-ref', 'worktree']);
    expect(made).toMatchObject({ created: true, newBranch: true, baseSha: git(repo, 'rev-parse', 'main') });
    const tip = commitIn(made.path, 'w.txt', 'w\n');
    git(repo, 'worktree', 'remove', '--force', made.path);
    calls.length = 0;
    const again = await ensureWorktree(spec);
    unobserve();
    expect(calls.map((a) => a[0])).toEqual(['worktree', 'for-each-ref', 'worktree']);
    expect(again).toMatchObject({ created: true, newBranch: false });
    expect(git(again.path, 'rev-parse', 'HEAD')).toBe(tip);
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
});
