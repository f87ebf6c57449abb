import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { budget } from '../../test/helpers/budget.js';
import { diffStats, diffText, ownedMatcher } from './diff.js';
import { assertRepository, git, observeGit, trackedFiles } from './git.js';
import { assertMainCheckout, mergeInProgress, mergeIntoMain } from './merge.js';
import { detachedWorktree, ensureWorktree, listWorktrees, pruneOrphanWorktrees, SET_ASIDE_KEEP, SET_ASIDE_REFS, setAsideLeftovers } from './worktree.js';

let root: string;
let repo: string;
const sh = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

function commit(cwd: string, path: string, content: string): void {
  mkdirSync(join(cwd, path, '..'), { recursive: true });
  writeFileSync(join(cwd, path), content);
  sh(cwd, 'add', '--', path);
  sh(cwd, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', `edit ${path}`);
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'maestro-git-'));
  repo = join(root, 'repo');
  mkdirSync(repo);
  sh(repo, 'init', '-q', '-b', 'main');
  commit(repo, 'README.md', 'hi\n');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const spec = (taskId: string, version = 1) => ({ repoPath: repo, worktreeRoot: join(root, 'wt'), taskId, version, baseBranch: 'main' });

describe('git', () => {
  it('a failure quotes the end of what git said, not all of it', async () => {
    writeFileSync(join(repo, 'README.md'), `${'changed line\n'.repeat(20_000)}`);
    // --exit-code fails with the whole diff on stdout and nothing on stderr.
    const failed = await git(repo, ['diff', '--exit-code']).catch((e: Error) => e);
    expect(failed).toMatchObject({ code: 'GIT_FAILED' });
    expect((failed as Error).message.length).toBeLessThan(5_000);
    expect((failed as Error).message).toMatch(/^git diff --exit-code failed in .* \(exit 1\): … [\s\S]*\+changed line$/);
  });

  it('refuses a path that is not a repository, and a missing git binary, clearly', async () => {
    const plain = join(root, 'plain');
    mkdirSync(plain);
    await expect(assertRepository(plain)).rejects.toMatchObject({ code: 'NOT_A_REPOSITORY', message: `${plain} is not a git repository` });
    await expect(assertRepository(join(root, 'nope'))).rejects.toMatchObject({ code: 'NOT_A_REPOSITORY' });
    await expect(trackedFiles(plain)).rejects.toMatchObject({ code: 'NOT_A_REPOSITORY', message: `${plain} is not a git repository` });
    await expect(trackedFiles(join(root, 'nope'))).rejects.toMatchObject({ code: 'NOT_A_REPOSITORY' });
    // A worktree of a non-repository is refused as clearly, though the check is now the worktree listing itself.
    await expect(ensureWorktree({ ...spec('P'), repoPath: plain })).rejects.toMatchObject({ code: 'NOT_A_REPOSITORY', message: `${plain} is not a git repository` });
    await expect(detachedWorktree(join(root, 'nope'), join(root, 'wt'), 'P-plan', 'main')).rejects.toMatchObject({ code: 'NOT_A_REPOSITORY' });
    await expect(git(repo, ['status'], { gitBinary: join(root, 'no-git-here') })).rejects.toMatchObject({ code: 'GIT_MISSING' });
  });

  it('takes arguments literally: a hostile branch-like string is data, not a command', async () => {
    await expect(git(repo, ['rev-parse', '--verify', '--end-of-options', '$(touch pwned); main'])).rejects.toMatchObject({ code: 'GIT_FAILED' });
    expect(existsSync(join(repo, 'pwned'))).toBe(false);
  });

  it('makes one worktree per task version on maestro/<taskId>-v<version> and reuses it', async () => {
    const a = await ensureWorktree(spec('T7', 2));
    expect(a).toMatchObject({ path: join(root, 'wt', 'T7-v2'), branch: 'maestro/T7-v2', created: true, newBranch: true });
    const again = await ensureWorktree(spec('T7', 2));
    expect(again).toMatchObject({ created: false, newBranch: false });
    expect(sh(a.path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('maestro/T7-v2');
  });

  it('recreates a worktree whose folder vanished, or whose folder git never registered', async () => {
    const a = await ensureWorktree(spec('S'));
    commit(a.path, 's.txt', 's\n');
    rmSync(a.path, { recursive: true, force: true });
    const again = await ensureWorktree(spec('S'));
    // A new worktree on the old branch: it may have diverged, so divergence is measured for it.
    expect(again).toMatchObject({ created: true, newBranch: false });
    // The branch kept the work.
    expect(readFileSync(join(again.path, 's.txt'), 'utf8')).toBe('s\n');
    mkdirSync(join(root, 'wt', 'U-v1'), { recursive: true });
    writeFileSync(join(root, 'wt', 'U-v1', 'junk'), 'x');
    const u = await ensureWorktree(spec('U'));
    expect(u.created).toBe(true);
    expect(existsSync(join(u.path, 'junk'))).toBe(false);
  });

  it('removes orphaned worktrees at startup but keeps the ones in flight and their branches', async () => {
    const keep = await ensureWorktree(spec('A'));
    const orphan = await ensureWorktree(spec('B'));
    mkdirSync(join(root, 'wt', 'C-v1')); // a folder git never knew (a crash between mkdir and add)
    const planner = await detachedWorktree(repo, join(root, 'wt'), 'E-plan', 'main'); // a planner killed mid-run
    let asked: readonly string[] = [];
    const removed = await pruneOrphanWorktrees(repo, join(root, 'wt'), async (names) => {
      asked = names;
      return ['A-v1'];
    });
    expect([...asked].sort()).toEqual(['A-v1', 'B-v1', 'C-v1', 'E-plan']);
    expect(removed.sort()).toEqual([orphan.path, join(root, 'wt', 'C-v1'), planner].sort());
    expect(existsSync(keep.path)).toBe(true);
    expect(existsSync(orphan.path)).toBe(false);
    expect((await listWorktrees(repo)).map((w) => w.branch)).toEqual(['main', 'maestro/A-v1']);
    expect(sh(repo, 'branch', '--list', 'maestro/B-v1')).toContain('maestro/B-v1');
  });

  it('counts diff files and lines and the files outside ownedFiles', async () => {
    const wt = await ensureWorktree(spec('D'));
    commit(wt.path, 'src/a/x.ts', 'one\ntwo\n');
    commit(wt.path, 'docs/readme.md', 'doc\n');
    const stats = await diffStats(wt.path, 'main', 'HEAD', ['src/**/*.ts']);
    expect(stats).toEqual({ files: ['docs/readme.md', 'src/a/x.ts'], filesChanged: 2, linesAdded: 3, linesDeleted: 0, outsideOwned: ['docs/readme.md'], strayGitlinks: [], largeFiles: [] });
    // With a size limit: the files the change adds past it (8 bytes is past 5; 4 is not).
    expect((await diffStats(wt.path, 'main', 'HEAD', [], 5)).largeFiles).toEqual([{ path: 'src/a/x.ts', bytes: 8 }]);
  });

  it("cuts a long diff for the reviewers and names every file they did not see whole", async () => {
    const wt = await ensureWorktree(spec('C'));
    for (const name of ['a.ts', 'b.ts', 'c.ts', 'd.ts']) commit(wt.path, `src/${name}`, `${'x'.repeat(80)}\n`.repeat(3));
    const whole = await diffText(wt.path, 'main', 'HEAD');
    expect(whole).not.toContain('[diff cut');
    // Cut inside b.ts's change: b.ts is partly shown, c.ts and d.ts not at all.
    const at = whole.indexOf('diff --git a/src/b.ts') + 60;
    const cut = await diffText(wt.path, 'main', 'HEAD', at);
    expect(cut.startsWith(whole.slice(0, at))).toBe(true);
    expect(cut.slice(at)).toBe(`\n[diff cut at ${at} of ${whole.length} characters. Not shown above, in part or at all, the changes to: src/b.ts, src/c.ts, src/d.ts. Read those files in the working directory before your verdict: it must cover the whole change.]`);
  });

  it("shows the reviewers and the line limit a change whatever .gitattributes the task writes, as the base marks its own files", async () => {
    commit(repo, '.gitattributes', 'package-lock.json -diff\n');
    const wt = await ensureWorktree(spec('G'));
    commit(wt.path, '.gitattributes', '* -diff\n'); // the task's own: every file binary to git diff
    commit(wt.path, 'src/x.ts', 'evil()\n');
    commit(wt.path, 'package-lock.json', '{}\n');
    const shown = await diffText(wt.path, 'main', 'HEAD');
    expect(shown).toContain('+evil()');
    // -diff on the base: left out, its size said.
    expect(shown).toContain("diff --git a/package-lock.json b/package-lock.json\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..0967ef424bce6791893e9a57bb952f80fd536e93\n[The project's .gitattributes marks this text file -diff: its change (+1 −0 lines) is not shown here.");
    expect((await diffStats(wt.path, 'main', 'HEAD', [])).linesAdded).toBe(2);
    // Nor one the task keeps out of its commits, left in the worktree.
    const hidden = await ensureWorktree(spec('H'));
    commit(hidden.path, '.gitignore', '.gitattributes\n');
    writeFileSync(join(hidden.path, '.gitattributes'), '* -diff\n');
    commit(hidden.path, 'src/y.ts', 'sneaky()\n');
    expect(await diffText(hidden.path, 'main', 'HEAD')).toContain('+sneaky()');
  });

  it("reads the base's .gitattributes once per commit of it: again once main moved, as it says then", async () => {
    // Its own text: a commit of the same tree, parent, author and second as another test's is that very commit.
    commit(repo, '.gitattributes', '# read once per commit\npackage-lock.json -diff\n');
    const wt = await ensureWorktree(spec('A'));
    commit(wt.path, 'package-lock.json', '{}\n');
    const reads: string[][] = [];
    const unobserve = observeGit((c) => c.args.some((a) => a.endsWith(':.gitattributes')) && reads.push(c.args));
    try {
      expect(await diffText(wt.path, 'main', 'HEAD')).toContain('marks this text file -diff');
      expect((await diffStats(wt.path, 'main', 'HEAD', [])).linesAdded).toBe(0);
      expect(reads).toHaveLength(1);
      commit(repo, '.gitattributes', '*.bin -diff\n');
      expect(await diffText(wt.path, 'main', 'HEAD')).toContain('+{}');
      expect(reads).toHaveLength(2);
    } finally {
      unobserve();
    }
  });

  it('matches ownedFiles as paths, folders and globs', () => {
    const m = ownedMatcher(['src/', 'lib/*.ts', 'docs/**', 'README.md']);
    expect(['src/a/b.ts', 'lib/x.ts', 'docs/a/b/c.md', 'README.md'].every(m)).toBe(true);
    expect(['lib/a/x.ts', 'srcx/a.ts', 'README.md.bak', 'package.json'].some(m)).toBe(false);
    const deep = ownedMatcher(['src/**/*.ts', '**/test/?.md', 'a**b']);
    expect(['src/x.ts', 'src/a/b/x.ts', 'test/1.md', 'pkg/test/2.md', 'ab', 'a/x/b'].every(deep)).toBe(true);
    expect(['src/x.tsx', 'srcx.ts', 'test/12.md', 'test/a/1.md', 'a/x/bc'].some(deep)).toBe(false);
  });

  it('tells a change from ownedFiles whatever glob a task owns: one of many `**` is matched in one pass, not tried every way', async () => {
    // As a regular expression, `**a` fourteen times then `!` (a person's, or a planner's subtask) took hours for
    // one 40-character path (84 s at twelve): the worker's diff gate never ended, nor did its run. Matched in a
    // process of its own with a time limit, so a matcher that backtracks fails this test instead of holding the suite.
    const script = `
      const { ownedMatcher } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dirname, 'diff.ts')).href)});
      const path = 'a'.repeat(40);
      console.log(JSON.stringify([ownedMatcher(['${'**a'.repeat(14)}!'])(path), ownedMatcher(['${'**a'.repeat(14)}'])(path)]));`;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: budget(60_000), encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual([false, true]);
    const wt = await ensureWorktree(spec('R'));
    commit(wt.path, 'a'.repeat(40), 'x\n');
    expect((await diffStats(wt.path, 'main', 'HEAD', [`${'**a'.repeat(3)}!`])).outsideOwned).toEqual(['a'.repeat(40)]);
    expect((await diffStats(wt.path, 'main', 'HEAD', ['**a'.repeat(3)])).outsideOwned).toEqual([]);
  });
});

describe('mergeIntoMain', () => {
  it('fast-forwards main to a task branch', async () => {
    const wt = await ensureWorktree(spec('M'));
    commit(wt.path, 'f.txt', 'f\n');
    const calls: string[][] = [];
    const unobserve = observeGit((c) => calls.push(c.args));
    const out = await mergeIntoMain({ repoPath: repo, branch: wt.branch, baseBranch: 'main', strategy: 'merge' });
    unobserve();
    expect(out.fastForward).toBe(true);
    expect(out.sha).toBe(sh(repo, 'rev-parse', wt.branch));
    expect(readFileSync(join(repo, 'f.txt'), 'utf8')).toBe('f\n');
    // git said where it fast-forwarded to: HEAD is not read again.
    expect(calls.at(-1)).toContain('merge');
    // Abbreviations of any length (core.abbrev) are matched against the full commits.
    sh(repo, 'config', 'core.abbrev', '12');
    const again = await ensureWorktree(spec('M2'));
    commit(again.path, 'g.txt', 'g\n');
    const next = await mergeIntoMain({ repoPath: repo, branch: again.branch, baseBranch: 'main', strategy: 'merge' });
    expect(next).toMatchObject({ fastForward: true, sha: sh(repo, 'rev-parse', again.branch), previousSha: out.sha });
  });

  it('makes a merge commit when main moved, or refuses under ff-only', async () => {
    const wt = await ensureWorktree(spec('N'));
    commit(wt.path, 'n.txt', 'n\n');
    commit(repo, 'm.txt', 'm\n');
    await expect(mergeIntoMain({ repoPath: repo, branch: wt.branch, baseBranch: 'main', strategy: 'ff-only' })).rejects.toMatchObject({ code: 'NOT_FAST_FORWARD' });
    const out = await mergeIntoMain({ repoPath: repo, branch: wt.branch, baseBranch: 'main', strategy: 'merge', message: 'Merge task N' });
    expect(out.fastForward).toBe(false);
    expect(sh(repo, 'log', '-1', '--format=%P %s').split(' ')).toHaveLength(5);
    expect(sh(repo, 'log', '-1', '--format=%s')).toBe('Merge task N');
  });

  it('refuses a dirty main checkout and changes nothing', async () => {
    const wt = await ensureWorktree(spec('P'));
    commit(wt.path, 'p.txt', 'p\n');
    writeFileSync(join(repo, 'README.md'), 'local edit\n');
    const before = sh(repo, 'rev-parse', 'HEAD');
    await expect(mergeIntoMain({ repoPath: repo, branch: wt.branch, baseBranch: 'main', strategy: 'merge' })).rejects.toMatchObject({
      code: 'DIRTY_MAIN', message: expect.stringContaining('has uncommitted changes (README.md)'),
    });
    expect(sh(repo, 'rev-parse', 'HEAD')).toBe(before);
    expect(readFileSync(join(repo, 'README.md'), 'utf8')).toBe('local edit\n');
  });

  it('reads the main checkout in one git process: its branch whatever its upstream, another branch, a detached HEAD, an unborn branch, not a repository', async () => {
    const calls: string[][] = [];
    const unobserve = observeGit((c) => calls.push(c.args));
    await expect(assertMainCheckout(repo, 'main')).resolves.toBeUndefined();
    unobserve();
    expect(calls).toHaveLength(1);
    // A clone's main has an upstream: "## main...origin/main [ahead 1]".
    const clone = join(root, 'clone');
    sh(root, 'clone', '-q', repo, clone);
    commit(clone, 'ahead.txt', 'a\n');
    await expect(assertMainCheckout(clone, 'main')).resolves.toBeUndefined();
    sh(clone, 'checkout', '-q', '-b', 'side');
    await expect(assertMainCheckout(clone, 'main')).rejects.toMatchObject({ code: 'DIRTY_MAIN', message: expect.stringContaining(`is on side, not main`) });
    sh(clone, 'checkout', '-q', '--detach');
    await expect(assertMainCheckout(clone, 'main')).rejects.toMatchObject({ code: 'DIRTY_MAIN', message: expect.stringContaining('is on a detached HEAD, not main') });
    const unborn = join(root, 'unborn');
    mkdirSync(unborn);
    sh(unborn, 'init', '-q', '-b', 'trunk');
    await expect(assertMainCheckout(unborn, 'trunk')).resolves.toBeUndefined();
    const plain = join(root, 'plain');
    mkdirSync(plain);
    await expect(assertMainCheckout(plain, 'main')).rejects.toMatchObject({ code: 'NOT_A_REPOSITORY' });
    await expect(assertMainCheckout(join(root, 'missing'), 'main')).rejects.toMatchObject({ code: 'NOT_A_REPOSITORY' });
  });

  it('sets aside a merge a killed conflict run left half-done: forgotten, the files kept under a Maestro ref (not the stash list), the worktree clean', async () => {
    const wt = await ensureWorktree(spec('R'));
    commit(wt.path, 'README.md', 'from task\n');
    commit(repo, 'README.md', 'from main\n');
    // The conflict run's git stops with README.md unmerged; its agent had half resolved it when killed.
    expect(() => execFileSync('git', ['merge', 'main'], { cwd: wt.path, stdio: 'ignore' })).toThrow();
    writeFileSync(join(wt.path, 'README.md'), 'half resolved\n');
    writeFileSync(join(wt.path, 'notes.txt'), 'scratch\n');
    const aside = await setAsideLeftovers(wt.path, 'maestro: left by run r1');
    expect(aside.files).toEqual(['README.md', 'notes.txt']);
    expect(aside.ref).toMatch(/^refs\/maestro\/set-aside\//);
    expect(await mergeInProgress(wt.path)).toBe(false);
    expect(sh(wt.path, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(readFileSync(join(wt.path, 'README.md'), 'utf8')).toBe('from task\n');
    // Nothing was thrown away: the half-made resolution and the scratch file are under the ref.
    expect(sh(wt.path, 'log', '-1', '--format=%s', aside.ref!)).toContain('maestro: left by run r1');
    expect(sh(wt.path, 'show', `${aside.ref}:README.md`)).toBe('half resolved');
    expect(sh(wt.path, 'show', `${aside.ref}:notes.txt`)).toBe('scratch');
    // The person's stash list (shared with the main checkout) is untouched; `git stash apply <ref>` brings the files back.
    expect(sh(repo, 'stash', 'list')).toBe('');
    sh(wt.path, 'stash', 'apply', aside.ref!);
    expect(readFileSync(join(wt.path, 'notes.txt'), 'utf8')).toBe('scratch\n');
  });

  it('names what it sets aside as the files are named: spaces, a newline, past ASCII, not UTF-8, a rename', async () => {
    const wt = await ensureWorktree(spec('N'));
    commit(wt.path, 'old name.txt', 'renamed\n');
    // Read without -z, the names past ASCII or with a newline came C-quoted: `"\303\251t\303\251.txt"`, quotes included.
    const names = ['with space.txt', 'new\nline.txt', 'été.txt', 'dir ü/日本.md'];
    for (const name of names) {
      mkdirSync(join(wt.path, name, '..'), { recursive: true });
      writeFileSync(join(wt.path, name), `${name}\n`);
    }
    writeFileSync(Buffer.from([...Buffer.from(`${wt.path}/n`), 0xff, ...Buffer.from('.txt')]), 'not utf-8\n');
    sh(wt.path, 'mv', 'old name.txt', 'new name.txt');
    const aside = await setAsideLeftovers(wt.path, 'maestro: left by run r1');
    // The rename by both its names; a name that is not UTF-8 as the review's diff shows it.
    expect(aside.files.sort()).toEqual([...names, 'new name.txt', 'old name.txt', '"n\\377.txt"'].sort());
    expect(sh(wt.path, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    for (const name of names) expect(existsSync(join(wt.path, name))).toBe(false);
    expect(readFileSync(join(wt.path, 'old name.txt'), 'utf8')).toBe('renamed\n');
    // Each is under the ref, by its name.
    for (const name of names) expect(sh(wt.path, 'show', `${aside.ref}:${name}`)).toBe(name);
    expect(sh(wt.path, 'show', `${aside.ref}:new name.txt`)).toBe('renamed');
  });

  it('sets nothing aside, and does not fail, when only a submodule has files changed inside it', async () => {
    const lib = join(root, 'lib');
    mkdirSync(lib);
    sh(lib, 'init', '-q', '-b', 'main');
    commit(lib, 'l.txt', 'l\n');
    sh(repo, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, 'lib');
    sh(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'lib');
    const wt = await ensureWorktree(spec('S'));
    sh(wt.path, '-c', 'protocol.file.allow=always', 'submodule', 'update', '-q', '--init');
    writeFileSync(join(wt.path, 'lib', 'l.txt'), 'changed inside the submodule\n');
    expect(await setAsideLeftovers(wt.path, 'maestro: left by run r1')).toEqual({ files: [], ref: null });
    expect(readFileSync(join(wt.path, 'lib', 'l.txt'), 'utf8')).toBe('changed inside the submodule\n');
  });

  it('keeps the newest SET_ASIDE_KEEP set-aside refs of a repository', async () => {
    const wt = await ensureWorktree(spec('K'));
    const refs: string[] = [];
    for (let i = 0; i < SET_ASIDE_KEEP + 2; i++) {
      writeFileSync(join(wt.path, 'left.txt'), `left ${i}\n`);
      refs.push((await setAsideLeftovers(wt.path, `maestro: left ${i}`)).ref!);
    }
    const kept = sh(repo, 'for-each-ref', '--format=%(refname)', SET_ASIDE_REFS).split('\n');
    expect(kept).toHaveLength(SET_ASIDE_KEEP);
    expect(kept).toContain(refs.at(-1));
    expect(kept).not.toContain(refs[0]);
  });

  it('aborts a conflicting merge and leaves main as it was', async () => {
    const wt = await ensureWorktree(spec('Q'));
    commit(wt.path, 'README.md', 'from task\n');
    commit(repo, 'README.md', 'from main\n');
    const before = sh(repo, 'rev-parse', 'HEAD');
    await expect(mergeIntoMain({ repoPath: repo, branch: wt.branch, baseBranch: 'main', strategy: 'merge' })).rejects.toMatchObject({ code: 'MERGE_CONFLICT' });
    expect(sh(repo, 'rev-parse', 'HEAD')).toBe(before);
    expect(sh(repo, 'status', '--porcelain')).toBe('');
  });
});
