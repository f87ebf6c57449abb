/**
 * A fetch into a daemon's clone of a shared remote, past what other processes leave half-written in it (worktrees
 * being added by workers), and the check of what it brought (the project's base branch).
 */
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { MaestroError } from '../core/errors.js';
import { git } from '../git/git.js';
import { NO_AUTO_MAINTENANCE } from '../git/maintenance.js';
import { refTips } from '../git/merge.js';
import { halfAddedWorktree, type HalfAdded } from '../git/worktree.js';

/** How long a fetch waits out worktrees being added, and how old a half-added one must be to count as abandoned. */
const FETCH_PATIENCE_MS = 30_000;
export const ABANDONED_WORKTREE_MS = 10_000;

/**
 * `git fetch` checks connectivity against every worktree's HEAD. A worker
 * adding a worktree writes git's record of it one file at a time, and a fetch
 * that reads the record in between fails: "failed to read
 * .git/worktrees/<x>/commondir" while that file is still empty, "bad object
 * worktrees/<x>/HEAD" while HEAD is still the placeholder (the null id) that
 * git points at the branch last (both seen in bench:multihost, three daemons
 * on two cores). Worktrees are made by worker processes, so no lock of this
 * daemon covers them: the fetch is tried again a moment later, for up to
 * FETCH_PATIENCE_MS (a loaded machine can hold an add that long). A worker
 * killed in the middle of an add (a run stopped when its lease is lost)
 * leaves the half-written record for good, and every fetch of this clone
 * would fail: one older than ABANDONED_WORKTREE_MS is dropped (git forgets
 * that worktree; the run that needs it makes it again, see ensureWorktree).
 * Without git's auto-maintenance, a process per fetch (two per task): `sync` runs it at its pace (maintenance.ts).
 */
export async function fetchFromRemote(clone: string, args: string[], stallMs: number): Promise<void> {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      await git(clone, [...NO_AUTO_MAINTENANCE, 'fetch', '-q', '--progress', ...args], { stallMs });
      return;
    } catch (err) {
      const message = (err as Error).message;
      const half = halfAddedWorktree(message);
      if (half && UNFINISHED[half.file] && Date.now() - started <= FETCH_PATIENCE_MS) {
        if (dropAbandonedWorktree(clone, half)) continue;
      } else if (!REFS_MOVED.test(message) || attempt >= REFS_MOVED_TRIES) throw err;
      await new Promise((r) => setTimeout(r, Math.min(100 * attempt, 1000)));
    }
  }
}

/**
 * The remote refused what it had just listed: "upload-pack: not our ref 0000…". A push that deleted the refs a
 * fetch asked for (another daemon's train takes its merged branches off the remote) landed between the remote's
 * list of refs and the fetch's request (the multihost suite, 200 tasks: a task sent to a person for it). The next
 * fetch lists the refs again.
 */
const REFS_MOVED = /upload-pack: not our ref/;
const REFS_MOVED_TRIES = 4;

/** What each file holds until `git worktree add` finishes writing it (a fetch meets only these two). */
const UNFINISHED: Partial<Record<HalfAdded['file'], RegExp>> = { HEAD: /^0{40}\s*$/, commondir: /^\s*$/ };

/** Removes git's record of a worktree whose file is still unfinished and older than ABANDONED_WORKTREE_MS. */
function dropAbandonedWorktree(clone: string, { name, file }: HalfAdded): boolean {
  const admin = join(clone, '.git', 'worktrees', name);
  try {
    const path = join(admin, file);
    if (!UNFINISHED[file]!.test(readFileSync(path, 'utf8')) || Date.now() - statSync(path).mtimeMs < ABANDONED_WORKTREE_MS) return false;
  } catch {
    return false; // gone or finished meanwhile: the next try tells
  }
  rmSync(admin, { recursive: true, force: true });
  return true;
}

/** Maestro's task branches (executor/protocol/job.ts branchName): the only branches besides the base a clone needs. */
const TASK_BRANCHES = 'maestro/';

/**
 * A clone's sync: the remote's base branch and Maestro's task branches, not every branch of the remote. A team's
 * repository may hold thousands of branches of its own, and `git fetch origin` brought every push to any of them
 * before each run; with these refspecs git asks the remote for these refs alone (protocol v2's ref prefixes).
 * False when the remote has no base branch (git: "couldn't find remote ref"), for noBaseBranch to name.
 */
export async function fetchForSync(clone: string, base: string, stallMs: number): Promise<boolean> {
  const refspecs = [`+refs/heads/${base}:refs/remotes/origin/${base}`, `+refs/heads/${TASK_BRANCHES}*:refs/remotes/origin/${TASK_BRANCHES}*`];
  try {
    await fetchFromRemote(clone, ['origin', ...refspecs], stallMs);
    return true;
  } catch (err) {
    if (/couldn't find remote ref refs\/heads\//i.test((err as Error).message)) return false;
    throw err;
  }
}

/**
 * The remote has no base branch: a remote whose work is on another branch (`master`) is named with its branches
 * (as this clone knows them; task branches left out, at most 20) and the setting that changes it. Registration
 * checks it (api/routes/projects.ts), but not a network remote that did not answer then, nor a branch deleted since.
 */
export async function noBaseBranch(clone: string, remote: string, base: string): Promise<MaestroError> {
  const known = [...(await refTips(clone, 'refs/remotes/origin/')).keys()].map((r) => r.slice('refs/remotes/origin/'.length));
  const branches = known.filter((b) => b !== 'HEAD' && b !== base && !b.startsWith(TASK_BRANCHES));
  const listed = branches.length > 20 ? `${branches.slice(0, 20).join(', ')} and ${branches.length - 20} more` : branches.join(', ') || 'none, no commit yet';
  return new MaestroError('BAD_INPUT', `the shared remote ${remote} has no branch ${base} (its branches: ${listed}): name the branch its tasks start from and merge into (maestro project config set baseBranch <branch>)`);
}
