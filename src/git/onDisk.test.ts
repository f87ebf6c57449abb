/**
 * git's files read without git, on real repositories: where HEAD is, in a main checkout and in a linked worktree,
 * and null (git is asked) whenever the files do not settle it.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../../test/helpers/db.js';
import { git, makeRepo } from '../../test/helpers/repo.js';
import { headSha, observeGit } from './git.js';
import { tipsOf } from './merge.js';
import { headCommit, nameOnDisk, readRef, registeredAt } from './onDisk.js';

afterEach(() => removeTempDirs());

describe('where HEAD is, read from git\'s files', () => {
  it('in a main checkout and a linked worktree on a branch, and detached', () => {
    const repo = makeRepo();
    expect(headCommit(repo)).toBe(git(repo, 'rev-parse', 'HEAD'));
    const wt = join(tempDir('maestro-ondisk-'), 'wt');
    git(repo, 'worktree', 'add', '-q', '-b', 'task', wt);
    git(wt, 'commit', '-q', '--allow-empty', '-m', 'on task');
    expect(headCommit(wt)).toBe(git(wt, 'rev-parse', 'HEAD'));
    expect(headCommit(wt)).not.toBe(headCommit(repo));
    git(wt, 'checkout', '-q', '--detach', 'HEAD~1');
    expect(headCommit(wt)).toBe(git(repo, 'rev-parse', 'main'));
  });

  it('a packed branch is read from packed-refs; a reftable repository, or none, is left to git: headSha asks it', async () => {
    const repo = makeRepo();
    const sha = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'pack-refs', '--all');
    expect(headCommit(repo)).toBe(sha);
    mkdirSync(join(repo, '.git', 'reftable'));
    expect(headCommit(repo)).toBeNull();
    const calls: string[][] = [];
    const unobserve = observeGit((c) => calls.push(c.args));
    expect(await headSha(repo)).toBe(sha);
    unobserve();
    expect(calls).toEqual([['rev-parse', 'HEAD']]);
    expect(headCommit(tempDir('maestro-plain-'))).toBeNull();
  });

  it('registrations: none, one whose folder is gone, and a repository whose .git is a file (null: git lists them)', () => {
    const repo = makeRepo();
    const root = tempDir('maestro-ondisk-');
    expect(registeredAt(repo, join(root, 'wt'))).toBe(false);
    git(repo, 'worktree', 'add', '-q', '--detach', join(root, 'wt'));
    expect(registeredAt(repo, join(root, 'wt'))).toBe(true);
    expect(registeredAt(repo, join(root, 'other'))).toBe(false);
    const separate = tempDir('maestro-sep-');
    git(separate, 'init', '-q', '-b', 'main', '--separate-git-dir', join(tempDir('maestro-gitdir-'), 'g.git'));
    expect(registeredAt(separate, join(root, 'wt'))).toBeNull();
    expect(registeredAt(tempDir('maestro-plain-'), join(root, 'wt'))).toBeNull();
  });

  it('refs: loose, packed, a loose one newer than its packed line, missing; a reftable repository is left to git', async () => {
    const repo = makeRepo();
    const gitDir = join(repo, '.git');
    const first = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'branch', 'kept');
    git(repo, 'pack-refs', '--all');
    git(repo, 'commit', '-q', '--allow-empty', '-m', 'second');
    const second = git(repo, 'rev-parse', 'HEAD');
    expect(readRef(gitDir, 'refs/heads/main')).toBe(second); // loose, written by the commit over the packed line
    expect(readRef(gitDir, 'refs/heads/kept')).toBe(first); // packed only
    expect(readRef(gitDir, 'refs/heads/none')).toBeNull();
    expect(readRef(gitDir, 'refs/heads/main/deeper')).toBeNull();
    expect(readRef(join(tempDir('maestro-plain-'), '.git'), 'refs/heads/main')).toBeUndefined(); // no git dir: git decides

    const calls: string[][] = [];
    const unobserve = observeGit((c) => calls.push(c.args));
    const tips = await tipsOf(repo, ['refs/heads/main', 'refs/heads/kept', 'refs/heads/none']);
    expect(Object.fromEntries(tips)).toEqual({ 'refs/heads/main': second, 'refs/heads/kept': first });
    expect(calls).toEqual([]);
    mkdirSync(join(gitDir, 'reftable'));
    expect(readRef(gitDir, 'refs/heads/main')).toBeUndefined();
    expect(Object.fromEntries(await tipsOf(repo, ['refs/heads/main', 'refs/heads/none']))).toEqual({ 'refs/heads/main': second });
    unobserve();
    expect(calls.map((a) => a[0])).toEqual(['for-each-ref']);
  });
});

describe('a short name read from git\'s files as git reads it', () => {
  it('a branch, loose or packed, a remote-tracking branch, a tag before a branch of its name; git is asked for the rest', () => {
    const repo = makeRepo();
    const common = join(repo, '.git');
    git(repo, 'commit', '-q', '--allow-empty', '-m', 'two');
    git(repo, 'update-ref', 'refs/remotes/origin/main', 'HEAD~1');
    git(repo, 'branch', 'v1', 'HEAD~1');
    git(repo, 'tag', 'v1', 'HEAD');
    for (const name of ['main', 'origin/main', 'v1']) expect(nameOnDisk(common, name)).toBe(git(repo, 'rev-parse', name));
    git(repo, 'pack-refs', '--all');
    for (const name of ['main', 'origin/main', 'v1']) expect(nameOnDisk(common, name)).toBe(git(repo, 'rev-parse', name));
    const sha = git(repo, 'rev-parse', 'HEAD');
    expect(nameOnDisk(common, sha)).toBe(sha);
    for (const name of ['HEAD', 'main~1', 'main^', 'nothing', 'a..b', '@{u}']) expect(nameOnDisk(common, name)).toBeUndefined();
  });
});
