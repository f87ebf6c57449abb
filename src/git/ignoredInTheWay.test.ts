/**
 * Git-ignored files where a merge puts its own, on real git: a file, a folder a link takes the place of, a file where
 * the branch needs a folder; and none named for what a merge leaves alone (Maestro's own state, an ignored folder the
 * branch adds a different file in, a path main stopped tracking that the branch never touched).
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs } from '../../test/helpers/db.js';
import { git, makeRepo } from '../../test/helpers/repo.js';
import { observeGit } from './git.js';
import { ignoredInTheWay, ignoredInTheWayError } from './ignoredInTheWay.js';
import { assertMergeable, mergeIntoMain } from './merge.js';

afterEach(() => removeTempDirs());

/** Commits `change` on a new branch `name` from main and goes back to main; returns the branch's commit. */
function branch(repo: string, name: string, change: (dir: string) => void): string {
  git(repo, 'checkout', '-q', '-b', name, 'main');
  change(repo);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', name);
  const tip = git(repo, 'rev-parse', 'HEAD');
  git(repo, 'checkout', '-q', 'main');
  return tip;
}

/** Maestro's sessions as a daemon leaves them in the checkout: each folder ignores itself. */
function sessions(repo: string, n: number): void {
  for (let i = 1; i <= n; i++) {
    const dir = join(repo, '.workflow', 'sessions', `task-${i}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, '.gitignore'), '*\n');
    writeFileSync(join(dir, 'ledger.jsonl'), '{}\n');
  }
}

const head = (repo: string) => git(repo, 'rev-parse', 'HEAD');

describe('ignored files in the way of a merge', () => {
  it('a file the branch stops ignoring and adds: the person\'s is named, and a merge commit would have replaced it', async () => {
    const repo = makeRepo({ 'README.md': '# r\n', '.gitignore': 'secret.env\n' });
    const tip = branch(repo, 'maestro/t-a', (dir) => {
      writeFileSync(join(dir, '.gitignore'), '');
      writeFileSync(join(dir, 'secret.env'), 'SECRET=task\n');
    });
    writeFileSync(join(repo, 'README.md'), '# r, moved on\n');
    git(repo, 'commit', '-q', '-am', 'main moves');
    writeFileSync(join(repo, 'secret.env'), 'SECRET=xyz\n');
    const found = await ignoredInTheWay(repo, head(repo), [tip]);
    expect(found).toEqual(new Map([[tip, [{ path: 'secret.env', files: 1, folder: false }]]]));
    expect(ignoredInTheWayError({ repoPath: repo, branch: 'maestro/t-a', unchanged: 'main' }, found.get(tip)!).message).toBe(
      `the main checkout ${repo} has git-ignored files where merging maestro/t-a puts its own (secret.env): git would overwrite or delete them without asking; this merge changed nothing in main: move them aside`,
    );
    // What the check stands in front of: git's own merge commit writes over it, --no-overwrite-ignore or not.
    await mergeIntoMain({ repoPath: repo, branch: 'maestro/t-a', baseBranch: 'main', strategy: 'merge' });
    expect(readFileSync(join(repo, 'secret.env'), 'utf8')).toBe('SECRET=task\n');
  });

  it('a folder of ignored files a link takes the place of, named as Maestro\'s own when it is its sessions', async () => {
    const repo = makeRepo({ 'README.md': '# r\n' });
    const tip = branch(repo, 'maestro/t-b', (dir) => {
      mkdirSync(join(dir, '.workflow'));
      symlinkSync('/some/outside/dir', join(dir, '.workflow', 'sessions'));
    });
    sessions(repo, 3);
    const found = (await ignoredInTheWay(repo, head(repo), [tip])).get(tip)!;
    expect(found).toEqual([{ path: '.workflow/sessions', files: 6, folder: true }]);
    const message = ignoredInTheWayError({ repoPath: repo, branch: 'maestro/t-b' }, found).message;
    expect(message).toContain('puts its own (.workflow/sessions/ (a folder of 6 files))');
    expect(message).toContain(". .workflow/sessions is Maestro's own state on this machine (its knowledge sessions with their pending candidates, its search index): a task has no business replacing it, so cancel the task; if you mean it, move them aside");
  });

  it('an ignored file where the branch needs a folder, and the gate says so before the approval', async () => {
    const repo = makeRepo({ 'README.md': '# r\n', '.gitignore': 'build\n' });
    branch(repo, 'maestro/t-c', (dir) => {
      writeFileSync(join(dir, '.gitignore'), '');
      mkdirSync(join(dir, 'build'));
      writeFileSync(join(dir, 'build', 'out.txt'), 'by the task\n');
    });
    writeFileSync(join(repo, 'build'), 'my build log\n');
    const err = await assertMergeable(repo, 'main', 'maestro/t-c').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'DIRTY_MAIN', message: expect.stringContaining('git-ignored files where merging maestro/t-c puts its own (build)'), details: { ignored: ['build'] } });
  });

  it('names nothing a merge leaves alone, and reads a merge base only for a path found', async () => {
    const repo = makeRepo({ 'README.md': '# r\n', 'config.local': 'tracked once\n', '.gitignore': 'node_modules/\n.workflow/.maestro-index.db\nbuild/\n' });
    // A branch made before main stopped tracking config.local (and began ignoring it), and one that adds files.
    const old = branch(repo, 'maestro/t-old', (dir) => writeFileSync(join(dir, 'old.txt'), 'old\n'));
    git(repo, 'rm', '-q', '--cached', 'config.local');
    writeFileSync(join(repo, '.gitignore'), 'node_modules/\n.workflow/.maestro-index.db\nbuild/\nconfig.local\n');
    git(repo, 'commit', '-q', '-am', 'config.local is each machine\'s');
    const adds = branch(repo, 'maestro/t-adds', (dir) => {
      mkdirSync(join(dir, 'src'));
      writeFileSync(join(dir, 'src', 'a.ts'), 'export {};\n');
      mkdirSync(join(dir, 'build'));
      writeFileSync(join(dir, 'build', 'keep.txt'), 'kept\n');
      git(dir, 'add', '-f', 'build/keep.txt');
      writeFileSync(join(dir, 'README.md'), '# r, changed\n');
    });
    // Maestro's state, a person's ignored folders, and the file main no longer tracks.
    sessions(repo, 2);
    writeFileSync(join(repo, '.workflow', '.maestro-index.db'), 'db');
    mkdirSync(join(repo, 'node_modules', 'x'), { recursive: true });
    writeFileSync(join(repo, 'node_modules', 'x', 'index.js'), '');
    mkdirSync(join(repo, 'build'));
    writeFileSync(join(repo, 'build', 'out.js'), 'built\n');
    const calls: string[][] = [];
    const stop = observeGit((c) => calls.push(c.args));
    try {
      // Nothing stands where it adds its files: the diff-tree is all it costs.
      expect(await ignoredInTheWay(repo, head(repo), [adds])).toEqual(new Map());
      expect(calls.map((a) => a[0])).toEqual(['diff-tree']);
      calls.length = 0;
      expect(await ignoredInTheWay(repo, head(repo), [old, adds])).toEqual(new Map());
    } finally {
      stop();
    }
    // The diff-tree of both, the ls-files of config.local (on disk where old adds it), then old's diff from the merge base.
    expect(calls.map((a) => a[0])).toEqual(['diff-tree', 'ls-files', 'diff']);
    // One that changed config.local since would write it (a modify/delete conflict leaves its version there).
    git(repo, 'checkout', '-q', old);
    git(repo, 'checkout', '-q', '-b', 'maestro/t-edits');
    writeFileSync(join(repo, 'config.local'), 'edited by the task\n');
    git(repo, 'commit', '-q', '-am', 'edit config.local');
    const edits = head(repo);
    git(repo, 'checkout', '-q', 'main');
    writeFileSync(join(repo, 'config.local'), 'mine\n');
    expect(await ignoredInTheWay(repo, head(repo), [adds, edits, old])).toEqual(new Map([[edits, [{ path: 'config.local', files: 1, folder: false }]]]));
  });

  it('a name that is not UTF-8', async () => {
    const name = Buffer.from('n\xff.env', 'latin1');
    const repo = makeRepo({ 'README.md': '# r\n', '.gitignore': '*.env\n' });
    const tip = branch(repo, 'maestro/t-d', (dir) => {
      writeFileSync(join(dir, '.gitignore'), '');
      writeFileSync(Buffer.concat([Buffer.from(`${dir}/`), name]), 'task\n');
    });
    writeFileSync(Buffer.concat([Buffer.from(`${repo}/`), name]), 'mine\n');
    expect((await ignoredInTheWay(repo, head(repo), [tip])).get(tip)).toEqual([{ path: '"n\\377.env"', files: 1, folder: false }]);
  });

  it('a fast-forward over an ignored file is refused by git itself, main unchanged', async () => {
    const repo = makeRepo({ 'README.md': '# r\n', '.gitignore': 'secret.env\n' });
    branch(repo, 'maestro/t-e', (dir) => {
      writeFileSync(join(dir, '.gitignore'), '');
      writeFileSync(join(dir, 'secret.env'), 'SECRET=task\n');
    });
    writeFileSync(join(repo, 'secret.env'), 'SECRET=xyz\n');
    const before = head(repo);
    await expect(mergeIntoMain({ repoPath: repo, branch: 'maestro/t-e', baseBranch: 'main', strategy: 'merge' })).rejects.toMatchObject({ code: 'DIRTY_MAIN' });
    expect(readFileSync(join(repo, 'secret.env'), 'utf8')).toBe('SECRET=xyz\n');
    expect(head(repo)).toBe(before);
  });
});
