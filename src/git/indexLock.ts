/**
 * A checkout whose index git cannot write: its index.lock exists, because a git process is at work there (a
 * person's `git commit`, an editor's git) or one that crashed left the file. `git merge` then exits 1 as it does
 * for a conflict: "error: Unable to write index.", with MERGE_HEAD left behind though nothing was merged (git
 * 2.39), or, for a fast-forward, "error: Unable to create '<git dir>/index.lock': File exists.". That is no
 * conflict: a conflict run, which costs model calls, could do nothing about it. It is the person's to clear, so
 * it is REPO_LOCKED, naming the file and what to do.
 */
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { MaestroError } from '../core/errors.js';
import { git } from './git.js';
import { gitdirPointer } from './onDisk.js';

/** Where git locks `checkout`'s index: `.git/index.lock`, or in the admin folder a linked worktree's `.git` file names. */
export function indexLockOf(checkout: string): string {
  return join(gitdirPointer(checkout) ?? join(checkout, '.git'), 'index.lock');
}

/** How long ago `lock` was taken (its file's time), or null when it is not there. */
export function lockAgeMs(lock: string, now = Date.now()): number | null {
  const st = statSync(lock, { throwIfNoEntry: false });
  return st ? now - st.mtimeMs : null;
}

/** Whether git (LC_ALL=C) said it could not write the index: the merge did not start, whatever its exit code. */
export function indexNotWritten(said: string): boolean {
  return /Unable to write index|Unable to create '.*index\.lock': File exists/.test(said);
}

/**
 * The lock file in the way, from what git said: the one it names, or `checkout`'s when it said only that the index
 * could not be written and that file is there. Null when it is not (gone since, or the index could not be written
 * for another reason: a full disk, a read-only folder).
 */
export function lockInTheWay(checkout: string, said: string): string | null {
  const named = /Unable to create '(.*index\.lock)': File exists/.exec(said)?.[1];
  if (named) return resolve(checkout, named);
  const lock = indexLockOf(checkout);
  return existsSync(lock) ? lock : null;
}

/**
 * REPO_LOCKED: `what` (e.g. "the main checkout") at `checkout` cannot be written while `lock` exists, and what to do.
 * `unchanged`: what the refused merge left as it was, when one was tried.
 */
export function repoLocked(what: string, checkout: string, lock: string, unchanged?: string): MaestroError {
  const left = unchanged ? `; ${unchanged}` : '';
  return new MaestroError('REPO_LOCKED', `${what} ${checkout} is locked: ${lock} exists (a git process is running there, or one that crashed left it), so git cannot write its index${left}: make sure no git process is running in ${checkout}, then remove ${lock}`, {
    details: { checkout, lock },
  });
}

/**
 * Why a merge in `checkout` did not start when git could not write the index (indexNotWritten): REPO_LOCKED naming
 * the lock, or GIT_FAILED quoting git when no lock is there. Git leaves MERGE_HEAD behind all the same (exit 1), and
 * the checkout would look mid-merge once the lock is gone, refusing the next merge; `merge --quit` forgets it without
 * the index (`--abort` needs the lock). `unchanged`: what was left as it was, as the person reads it.
 */
export async function unwrittenIndex(where: { what: string; checkout: string; unchanged: string }, said: string): Promise<MaestroError> {
  const { what, checkout, unchanged } = where;
  await git(checkout, ['merge', '--quit'], { okCodes: [128] });
  const lock = lockInTheWay(checkout, said);
  if (lock) return repoLocked(what, checkout, lock, unchanged);
  const errors = said.split('\n').filter((line) => /^(error|fatal): /.test(line));
  return new MaestroError('GIT_FAILED', `git could not write the index of ${what} ${checkout}; ${unchanged}: ${errors.join(' ')}`, { details: { checkout } });
}

/** REPO_LOCKED when `checkout`'s index.lock exists: nothing can be merged into it now. */
export function assertUnlocked(what: string, checkout: string): void {
  const lock = indexLockOf(checkout);
  if (existsSync(lock)) throw repoLocked(what, checkout, lock);
}
