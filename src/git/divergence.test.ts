import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { syncWithBase } from './divergence.js';
import { startMerge } from './merge.js';
import { ensureWorktree } from './worktree.js';

let root: string;
let repo: string;
const sh = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

function commit(cwd: string, path: string, content: string): string {
  writeFileSync(join(cwd, path), content);
  sh(cwd, 'add', '--', path);
  sh(cwd, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', `add ${path}`);
  return sh(cwd, 'rev-parse', 'HEAD');
}

const files = (cwd: string, rev: string) => new Set(sh(cwd, 'ls-tree', '-r', '--name-only', rev).split('\n'));

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'maestro-divergence-'));
  repo = join(root, 'repo');
  mkdirSync(repo);
  sh(repo, 'init', '-q', '-b', 'main');
  commit(repo, 'README.md', 'hi\n');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('syncWithBase', () => {
  // A daemon fetches or pushes its clone's origin/main while a worker brings it into a task branch.
  // The merge must be of one main: a tree from the main it read first under a parent read later
  // would undo, on the task branch, whatever main gained in between (seen as another task's file
  // in the diff gate, and a revert of that task had it been merged).
  it('merges one main even while main moves: every file of the merged main is in the merge', async () => {
    const wt = await ensureWorktree({ repoPath: repo, worktreeRoot: join(root, 'wt'), taskId: 'T', version: 1, baseBranch: 'main' });
    commit(wt.path, 'task.txt', 'mine\n');
    const start = sh(repo, 'rev-parse', 'main');
    const ahead: string[] = [];
    for (let i = 0; i < 150; i++) ahead.push(commit(repo, `main-${i}.txt`, `${i}\n`));
    sh(repo, 'update-ref', 'refs/heads/main', start);
    // main moves one commit at a time, as fast as git can, while the branch keeps taking it in.
    const mover = spawn('sh', ['-c', ahead.map((sha) => `git update-ref refs/heads/main ${sha}; sleep 0.005`).join('\n')], { cwd: repo, stdio: 'ignore' });
    const moved = new Promise<void>((resolve) => mover.on('exit', () => resolve()));
    let running = true;
    void moved.then(() => (running = false));
    let merges = 0;
    while (running || merges === 0) {
      const outcome = await syncWithBase(wt.path, 'main');
      if (outcome.kind !== 'merged') continue;
      merges++;
      const [, , theirs] = sh(wt.path, 'rev-list', '--parents', '-n', '1', 'HEAD').split(' ');
      const merged = files(wt.path, 'HEAD');
      const missing = [...files(wt.path, theirs!)].filter((f) => !merged.has(f));
      expect(missing, `merge ${merges} lost what its second parent has`).toEqual([]);
      expect(merged.has('task.txt')).toBe(true);
    }
    await moved;
    expect(merges).toBeGreaterThan(1);
  });

  it('names a conflicted file past ASCII as it is on disk, where a conflict run checks it for markers', async () => {
    commit(repo, 'ünï.txt', 'base\n');
    const wt = await ensureWorktree({ repoPath: repo, worktreeRoot: join(root, 'wt'), taskId: 'T', version: 1, baseBranch: 'main' });
    commit(wt.path, 'ünï.txt', 'mine\n');
    commit(repo, 'ünï.txt', 'theirs\n');
    expect(await syncWithBase(wt.path, 'main')).toEqual({ kind: 'conflict', conflictedFiles: ['ünï.txt'] });
    expect(await startMerge(wt.path, 'main')).toEqual({ clean: false, conflictedFiles: ['ünï.txt'] });
  });
});
