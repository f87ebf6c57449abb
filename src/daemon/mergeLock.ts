/**
 * A main checkout whose index is locked when a merge comes (REPO_LOCKED, git/indexLock.ts). A person's git, or an
 * editor's that refreshes its view every few seconds, holds `.git/index.lock` for a moment; parking the task for the
 * person at once made them run `task retry` for nothing. So the merge is tried again at each tick for up to
 * LOCK_WAIT_MS, said once (`merge.locked`); a lock older than that is no git at work (one that crashed left it), and
 * one still there after it is not momentary: either is the person's to clear, as before (needs_attention).
 */
import type { MaestroError } from '../core/errors.js';
import { lockAgeMs as ageOf } from '../git/indexLock.js';

/** How long a merge waits for a main checkout's index.lock to go. */
export const LOCK_WAIT_MS = 30_000;

/** What to do with a task whose merge found the checkout locked: wait (said the first time), or give it to the person. */
export type LockVerdict = 'wait, first' | 'wait' | 'give up';

/** How long ago the lock a REPO_LOCKED names was taken (0 when it names none or it is gone). */
function lockAgeMs(err: MaestroError, now: number): number {
  const lock = typeof err.details?.lock === 'string' ? err.details.lock : null;
  return lock ? (ageOf(lock, now) ?? 0) : 0;
}

/** Whether the lock a REPO_LOCKED names may be a git at work: younger than LOCK_WAIT_MS (a merge waits for it). */
export function momentaryLock(err: MaestroError, now = Date.now()): boolean {
  return lockAgeMs(err, now) < LOCK_WAIT_MS;
}

export class LockWaits {
  /** Since when each task has found the checkout locked (wall clock, as the lock file's time). */
  private readonly since = new Map<string, number>();

  constructor(private readonly waitMs = LOCK_WAIT_MS) {}

  judge(taskId: string, err: MaestroError, now = Date.now()): LockVerdict {
    const since = this.since.get(taskId);
    if (lockAgeMs(err, now) >= this.waitMs || now - (since ?? now) >= this.waitMs) {
      this.since.delete(taskId);
      return 'give up';
    }
    if (since !== undefined) return 'wait';
    this.since.set(taskId, now);
    return 'wait, first';
  }

  /** Forgets the tasks not in `merging` (merged, or moved on): a later lock starts a new wait. */
  keepOnly(merging: ReadonlySet<string>): void {
    for (const id of this.since.keys()) if (!merging.has(id)) this.since.delete(id);
  }
}
