/**
 * Git repositories inside a worktree that an agent made: a `git init` or `git clone`, or a `.git` file naming a
 * folder it wrote. Git runs the commands a repository's settings name (core.fsmonitor, a clean filter, hooks such as
 * post-index-change), and it goes into such a repository by itself: `status`, `add -A`, `commit` and `diff` in the
 * worktree start a `git status` inside every gitlink. The agent writes those settings inside its sandbox; git would
 * run them outside it, as the person, where the daemon's home and its token are (an audit read the token this
 * way, and wrote into the project's repository). So before Maestro runs git over a worktree an agent has written
 * to, each such repository's `.git` is moved out of the worktree, into the worktree's folder in the repository's
 * git folder (removed with the worktree); nothing in it runs, and its files stay where they are.
 *
 * Left alone: a `.git` file naming a folder inside the repository's own git folder, where git keeps a submodule
 * it populated (`git submodule update --init`): a sandboxed agent cannot write there.
 */
import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { MaestroError } from '../core/errors.js';
import { canonical, holds } from '../lib/paths.js';
import { git, removeTree } from './git.js';
import { gitdirPointer } from './onDisk.js';

/** Rounds of look-and-move: a repository set aside shows the ones inside it. */
const MAX_ROUNDS = 20;

/** Paths (from the worktree's root) of the repositories an agent made in it, found with one git process that runs nothing of theirs. */
export async function embeddedRepositories(worktree: string): Promise<string[]> {
  // Gitlinks in the index (`160000 <sha> <stage>\t<path>`) and untracked repositories (`<path>/`); neither listing
  // goes into them.
  const { stdout } = await git(worktree, ['-c', 'core.fsmonitor=false', 'ls-files', '--stage', '--others', '--exclude-standard', '-z']);
  const admin = gitdirPointer(worktree);
  const common = admin ? dirname(dirname(admin)) : join(worktree, '.git');
  const found = new Set<string>();
  for (const entry of stdout.split('\0')) {
    const rel = /^160000 [0-9a-f]+ \d\t(.+)$/s.exec(entry)?.[1] ?? (entry.endsWith('/') ? entry.slice(0, -1) : null);
    if (rel && agentMade(worktree, common, rel)) found.add(rel);
  }
  return [...found];
}

function agentMade(worktree: string, common: string, rel: string): boolean {
  const dir = join(worktree, rel);
  // Through a link (the folder or one above it) git goes into nothing; a folder that is not there holds nothing.
  if (canonical(dir) !== join(canonical(worktree), rel)) return false;
  const dotGit = lstatSync(join(dir, '.git'), { throwIfNoEntry: false });
  if (!dotGit) return false;
  if (!dotGit.isFile()) return true;
  // A `.git` file naming no folder, or one that is not there, is no repository git goes into.
  const named = /^gitdir: (.+)$/m.exec(readFileSync(join(dir, '.git'), 'utf8'))?.[1]?.trim();
  return named !== undefined && !holds(common, resolve(dir, named));
}

/**
 * Moves each agent-made repository's `.git` out of the worktree (see the file's comment); returns their paths. Call
 * it before git runs over a worktree an agent or a check has written to.
 */
export async function setAsideEmbeddedRepositories(worktree: string): Promise<string[]> {
  const moved: string[] = [];
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const found = await embeddedRepositories(worktree);
    if (!found.length) return moved;
    for (const rel of found) await disarm(worktree, rel);
    moved.push(...found);
  }
  throw new MaestroError('GIT_FAILED', `${worktree} holds git repositories nested more than ${MAX_ROUNDS} deep (${moved.slice(-3).join(', ')}); Maestro runs no git over it`, { details: { cwd: worktree, repositories: moved } });
}

async function disarm(worktree: string, rel: string): Promise<void> {
  const dotGit = join(worktree, rel, '.git');
  const admin = gitdirPointer(worktree);
  if (admin) {
    const to = join(admin, 'maestro-embedded', `${Date.now()}-${randomBytes(3).toString('hex')}-${rel.replace(/[^A-Za-z0-9._-]+/g, '_')}`);
    try {
      mkdirSync(dirname(to), { recursive: true });
      renameSync(dotGit, to);
      return;
    } catch {
      // Another file system, or the folder is not writable: removed instead, below.
    }
  }
  await removeTree(dotGit);
}
