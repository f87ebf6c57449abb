/**
 * Files in the main checkout that git will not overwrite, on real git: an untracked file the task's
 * branch adds makes git refuse the merge before it starts. That is the person's to clear, not a
 * conflict for a conflict run: DIRTY_MAIN naming the files, main unchanged, whatever the locale.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../../test/helpers/db.js';
import { git, makeRepo } from '../../test/helpers/repo.js';
import { observeGit } from './git.js';
import { assertMergeable, commitAll, filesInTheWayOf, mergeBranch, mergeIntoMain, startMerge } from './merge.js';

afterEach(() => removeTempDirs());

/** A repository whose branch maestro/t-e adds e.txt and docs/e.md; `mainMoves`: main gets a commit of its own after. */
function repoWithBranch(mainMoves: boolean): string {
  const repo = makeRepo({ 'README.md': '# r\n' });
  git(repo, 'checkout', '-q', '-b', 'maestro/t-e');
  mkdirSync(join(repo, 'docs'));
  writeFileSync(join(repo, 'e.txt'), 'by the task\n');
  writeFileSync(join(repo, 'docs', 'e.md'), 'by the task\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'add e');
  git(repo, 'checkout', '-q', 'main');
  if (mainMoves) {
    writeFileSync(join(repo, 'main.txt'), 'main moved\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'main moves');
  }
  return repo;
}

const merge = (repo: string, strategy: 'merge' | 'no-ff' = 'merge') => mergeIntoMain({ repoPath: repo, branch: 'maestro/t-e', baseBranch: 'main', strategy });

describe('untracked files in the way of a merge', () => {
  for (const [how, mainMoves, strategy] of [['a fast-forward', false, 'merge'], ['a merge commit', true, 'merge'], ['--no-ff', false, 'no-ff']] as const) {
    it(`are refused as a dirty checkout, not a conflict, naming the files (${how})`, async () => {
      const repo = repoWithBranch(mainMoves);
      writeFileSync(join(repo, 'e.txt'), 'my notes\n');
      mkdirSync(join(repo, 'docs'));
      writeFileSync(join(repo, 'docs', 'e.md'), 'my draft\n');
      const before = git(repo, 'rev-parse', 'HEAD');
      const err = await merge(repo, strategy).catch((e: unknown) => e);
      expect(err).toMatchObject({
        code: 'DIRTY_MAIN',
        message: `the main checkout ${repo} has untracked files (docs/e.md, e.txt) that merging maestro/t-e would overwrite; this merge changed nothing in main: move or remove them`,
        details: { untracked: ['docs/e.md', 'e.txt'], changed: [] },
      });
      expect(git(repo, 'rev-parse', 'HEAD')).toBe(before);
      expect(readFileSync(join(repo, 'e.txt'), 'utf8')).toBe('my notes\n');
      expect(git(repo, 'status', '--porcelain', '--untracked-files=no')).toBe('');
      // Moved away, the same merge goes in.
      git(repo, 'clean', '-q', '-f', '-d');
      await expect(merge(repo, strategy)).resolves.toMatchObject({ previousSha: before });
      expect(readFileSync(join(repo, 'e.txt'), 'utf8')).toBe('by the task\n');
    });
  }

  it('a real conflict is still a conflict, aborted', async () => {
    const repo = repoWithBranch(false);
    git(repo, 'checkout', '-q', 'maestro/t-e');
    writeFileSync(join(repo, 'README.md'), '# by the task\n');
    git(repo, 'commit', '-q', '-am', 'readme by the task');
    git(repo, 'checkout', '-q', 'main');
    writeFileSync(join(repo, 'README.md'), '# by main\n');
    git(repo, 'commit', '-q', '-am', 'readme by main');
    await expect(merge(repo)).rejects.toMatchObject({ code: 'MERGE_CONFLICT' });
    expect(git(repo, 'status', '--porcelain')).toBe('');
  });

  it('reads the files from what git says: untracked (overwritten, removed, in folders) and uncommitted changes', () => {
    const said = [
      'error: The following untracked working tree files would be overwritten by merge:',
      '\te.txt',
      '\tdocs/a b.md',
      'Please move or remove them before you merge.',
      'error: Your local changes to the following files would be overwritten by merge:',
      '\tREADME.md',
      'Please commit your changes or stash them before you merge.',
      'error: The following untracked working tree files would be removed by merge:',
      '\tgone.txt',
      'Aborting',
    ].join('\n');
    expect(filesInTheWayOf(said)).toEqual({ untracked: ['e.txt', 'docs/a b.md', 'gone.txt'], changed: ['README.md'] });
    expect(filesInTheWayOf('CONFLICT (content): Merge conflict in README.md\n\tREADME.md\n')).toEqual({ untracked: [], changed: [] });
  });
});

describe('a locked checkout (its index.lock left by a git running or crashed there)', () => {
  for (const [how, mainMoves, strategy] of [['a fast-forward', false, 'merge'], ['a merge commit', true, 'merge'], ['--no-ff', false, 'no-ff']] as const) {
    it(`is refused as locked, naming the file, not taken for a conflict, and leaves no merge under way (${how})`, async () => {
      const repo = repoWithBranch(mainMoves);
      const lock = join(repo, '.git', 'index.lock');
      writeFileSync(lock, '');
      const before = git(repo, 'rev-parse', 'HEAD');
      // mergeBranch, as a train calls it once the checkout was checked: the lock came meanwhile.
      const err = await mergeBranch({ repoPath: repo, branch: 'maestro/t-e', baseBranch: 'main', strategy }).catch((e: unknown) => e);
      expect(err).toMatchObject({
        code: 'REPO_LOCKED',
        message: `the main checkout ${repo} is locked: ${lock} exists (a git process is running there, or one that crashed left it), so git cannot write its index; this merge changed nothing in main: make sure no git process is running in ${repo}, then remove ${lock}`,
        details: { checkout: repo, lock },
      });
      expect(git(repo, 'rev-parse', 'HEAD')).toBe(before);
      expect(existsSync(lock)).toBe(true);
      // Git left MERGE_HEAD behind although it merged nothing: forgotten, or the next merge would be refused.
      expect(existsSync(join(repo, '.git', 'MERGE_HEAD'))).toBe(false);
      // Said before merging too (a train's check of the checkout, and the task detail before an approval).
      await expect(merge(repo, strategy)).rejects.toMatchObject({ code: 'REPO_LOCKED', message: expect.stringMatching(/^the main checkout .* is locked: .*index\.lock exists .*then remove /) });
      await expect(assertMergeable(repo, 'main', 'maestro/t-e')).rejects.toMatchObject({ code: 'REPO_LOCKED' });
      rmSync(lock);
      expect(git(repo, 'status', '--porcelain', '--untracked-files=no')).toBe('');
      await expect(merge(repo, strategy)).resolves.toMatchObject({ previousSha: before });
      expect(readFileSync(join(repo, 'e.txt'), 'utf8')).toBe('by the task\n');
    });
  }
});

describe("a conflict run's merge", () => {
  it('in a locked worktree is refused as locked, not a conflict with no files to resolve', async () => {
    const repo = repoWithBranch(true);
    const wt = join(tempDir('maestro-wt-'), 'wt');
    git(repo, 'worktree', 'add', '-q', wt, 'maestro/t-e');
    // The worktree's own index, in the admin folder its .git file names.
    const admin = join(repo, '.git', 'worktrees', 'wt');
    const lock = join(admin, 'index.lock');
    writeFileSync(lock, '');
    await expect(startMerge(wt, 'main')).rejects.toMatchObject({
      code: 'REPO_LOCKED',
      message: `the worktree ${wt} is locked: ${lock} exists (a git process is running there, or one that crashed left it), so git cannot write its index; nothing of main was merged into it: make sure no git process is running in ${wt}, then remove ${lock}`,
    });
    expect(existsSync(join(admin, 'MERGE_HEAD'))).toBe(false);
    rmSync(lock);
    expect(await startMerge(wt, 'main')).toEqual({ clean: true, conflictedFiles: [] });
  });
});

describe('assertMergeable, before an approval', () => {
  it('names untracked files the branch adds, and ignored ones, and ignores the others, with two git processes when there are none', async () => {
    const repo = repoWithBranch(true);
    const calls: string[][] = [];
    const unobserve = observeGit((c) => calls.push(c.args));
    await expect(assertMergeable(repo, 'main', 'maestro/t-e')).resolves.toBeUndefined();
    unobserve();
    // The checkout's state, and what the branch adds (nothing stands there: no listing of ignored files).
    expect(calls.map((a) => a[0])).toEqual(['status', 'diff-tree']);
    // An untracked file the branch does not add is no obstacle; an ignored one it does is (git would overwrite it).
    writeFileSync(join(repo, 'scratch.txt'), 'mine\n');
    await expect(assertMergeable(repo, 'main', 'maestro/t-e')).resolves.toBeUndefined();
    writeFileSync(join(repo, '.git', 'info', 'exclude'), 'docs/\n');
    mkdirSync(join(repo, 'docs'));
    writeFileSync(join(repo, 'docs', 'e.md'), 'ignored\n');
    await expect(assertMergeable(repo, 'main', 'maestro/t-e')).rejects.toMatchObject({
      code: 'DIRTY_MAIN',
      message: `the main checkout ${repo} has git-ignored files where merging maestro/t-e puts its own (docs/e.md): git would overwrite or delete them without asking: move them aside`,
    });
    rmSync(join(repo, 'docs'), { recursive: true });
    writeFileSync(join(repo, 'e.txt'), 'my notes\n');
    await expect(assertMergeable(repo, 'main', 'maestro/t-e')).rejects.toMatchObject({
      code: 'DIRTY_MAIN',
      message: `the main checkout ${repo} has untracked files (e.txt) that merging maestro/t-e would overwrite: move or remove them`,
    });
    // The checks assertMainCheckout makes come first.
    writeFileSync(join(repo, 'README.md'), 'edited\n');
    await expect(assertMergeable(repo, 'main', 'maestro/t-e')).rejects.toMatchObject({ code: 'DIRTY_MAIN', message: expect.stringContaining('uncommitted changes (README.md)') });
  });
});

describe("the repository's commit hooks", () => {
  it('do not refuse the merge commit: a commit-msg hook (commitlint under husky, which an agent may have set up) is no conflict', async () => {
    const repo = repoWithBranch(true);
    // `npx husky init` sets core.hooksPath in the repository's config; commitlint refuses "Merge maestro/…".
    mkdirSync(join(repo, '.husky'));
    for (const hook of ['commit-msg', 'pre-merge-commit']) writeFileSync(join(repo, '.husky', hook), '#!/bin/sh\necho "subject may not be empty [subject-empty]" >&2\nexit 1\n', { mode: 0o755 });
    git(repo, 'config', 'core.hooksPath', '.husky');
    const out = await merge(repo);
    expect(out.fastForward).toBe(false);
    expect(git(repo, 'log', '-1', '--format=%s')).toBe('Merge maestro/t-e');
    expect(readFileSync(join(repo, 'e.txt'), 'utf8')).toBe('by the task\n');
  });
});

describe('committing what a run wrote', () => {
  it('commits in two git processes; nothing to commit is null; a merge under way with nothing staged is still committed', async () => {
    const repo = makeRepo({ 'README.md': '# r\n' });
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    const calls: string[][] = [];
    const unobserve = observeGit((c) => calls.push(c.args));
    const sha = await commitAll(repo, 'add a');
    expect(sha).toBe(git(repo, 'rev-parse', 'HEAD'));
    expect(git(repo, 'log', '-1', '--format=%s')).toBe('add a');
    // Staged and committed; the new HEAD read from main's ref file, no auto-maintenance child.
    expect(calls.map((a) => a.filter((x) => !x.startsWith('-')).slice(0, 2).join(' '))).toEqual(['add', 'maintenance.auto=false commit']);

    calls.length = 0;
    expect(await commitAll(repo, 'nothing')).toBeNull();
    unobserve();
    expect(calls.map((a) => a.filter((x) => !x.startsWith('-'))[0])).toEqual(['add', 'maintenance.auto=false', 'diff', 'rev-parse']);
    expect(git(repo, 'log', '-1', '--format=%s')).toBe('add a');

    // A conflict run's merge where the branch's side was kept everywhere: nothing staged, the merge must still be made.
    git(repo, 'checkout', '-q', '-b', 'side');
    writeFileSync(join(repo, 'a.txt'), 'side\n');
    git(repo, 'commit', '-q', '-am', 'side');
    git(repo, 'checkout', '-q', 'main');
    writeFileSync(join(repo, 'a.txt'), 'main\n');
    git(repo, 'commit', '-q', '-am', 'main');
    expect(() => git(repo, 'merge', 'side')).toThrow();
    writeFileSync(join(repo, 'a.txt'), 'main\n');
    const merged = await commitAll(repo, 'resolved');
    expect(merged).toBe(git(repo, 'rev-parse', 'HEAD'));
    expect(git(repo, 'rev-list', '--parents', '-1', 'HEAD').split(' ')).toHaveLength(3);
  });

  it("runs none of the repository's hooks: a prepare-commit-msg that refuses (which --no-verify does not skip) neither runs nor stops the commit", async () => {
    const repo = makeRepo({ 'README.md': '# r\n' });
    const before = git(repo, 'rev-parse', 'HEAD');
    const ran = join(repo, '..', `${basename(repo)}-hook-ran`);
    const hook = join(repo, '.git', 'hooks', 'prepare-commit-msg');
    writeFileSync(hook, `#!/bin/sh\ntouch ${ran}\necho "no commits today" >&2\nexit 1\n`);
    chmodSync(hook, 0o755);
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    const head = await commitAll(repo, 'add a');
    expect(head).not.toBe(before);
    expect(git(repo, 'show', '--name-only', '--format=', 'HEAD')).toBe('a.txt');
    expect(existsSync(ran)).toBe(false);
  });
});
