/**
 * The cross-process lock that guards every corpus read-modify-write.
 *
 * Two layers, because a lock file alone cannot reclaim a stale owner safely:
 * with O_EXCL files, two waiters that both see a dead owner can both delete
 * and re-create the lock, and the slower one then deletes the faster one's
 * fresh lock — two owners. So:
 *
 * 1. A kernel lock (src/lib/kernelLock.ts) on a file next to the corpus
 *    (`.maestro-corpus.lock`). The kernel drops it when the holder dies,
 *    so there is no stale state to reclaim and mutual exclusion among Maestro
 *    processes never depends on timing.
 * 2. Under it, the compatibility lock file `<target>.lock` of FORMATS §6
 *    (`{pid, token, createdAt}`, published complete) so the tool the formats
 *    come from also waits for us. It is the one lock file of src/lib/lockFile.ts
 *    (the daemon's home lock is another): stale when its pid is dead, or when
 *    unparseable and older than 60 s. Its reclaim runs only while holding the
 *    kernel lock, so at most one Maestro process reclaims at a time.
 */
import { mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { MaestroError } from '../../core/errors.js';
import { acquireKernelLock } from '../../lib/kernelLock.js';
import { acquireLockFile } from '../../lib/lockFile.js';
import { assertInRepo } from '../../lib/repoWrites.js';

const SECOND = 1000;
export const LOCK_TIMEOUT_MS = 10 * SECOND;
export const LOCK_STALE_MS = 60 * SECOND;
const RETRY_MS = 50;

export interface LockOptions {
  timeoutMs?: number;
}

/** The kernel lock file for a target: one per workflow folder (or per directory outside one). */
export function namespaceLockPath(target: string): string {
  const parts = target.split('/');
  const i = parts.lastIndexOf('.workflow');
  const base = i > 0 ? parts.slice(0, i + 1).join('/') : dirname(target);
  return join(base, '.maestro-corpus.lock');
}

/**
 * A lock in a project's `.workflow/` is made in the project (lib/repoWrites.ts): a `.workflow` that links out of
 * it is refused before any lock file is made there. Every writer refuses it before it locks (root.ts
 * assertInsideRoot, session/store.ts); this holds for one that would not.
 */
function assertLockInRepo(lockPath: string): void {
  const base = dirname(lockPath);
  if (basename(base) === '.workflow') assertInRepo(dirname(base), base, { target: lockPath });
}

/** `timeoutMs`: what is left of the caller's budget; `budgetMs`: the whole budget, which the refusal names. */
function acquireNamespaceLock(path: string, timeoutMs: number, budgetMs: number): () => void {
  return acquireKernelLock(path, Date.now() + timeoutMs, () => new MaestroError('LOCK_TIMEOUT', `Timed out after ${budgetMs} ms waiting for the corpus lock ${path}; another writer holds it. Nothing was written: retry when it finishes (a crashed holder's lock is released with its process).`));
}

/** The compatibility lock file (src/lib/lockFile.ts): waits for a live holder until the deadline. */
function acquireFileLock(target: string, deadline: number): () => void {
  const path = `${target}.lock`;
  return acquireLockFile(path, { createdAt: Date.now() }, {
    what: 'the corpus lock file',
    deadline,
    unparseableStaleMs: LOCK_STALE_MS,
    retryMs: RETRY_MS,
    busy: (holder) =>
      new MaestroError('LOCK_TIMEOUT', `Timed out waiting for ${path} (held by pid ${holder && holder !== 'unparseable' ? holder.pid : '?'}). Nothing was written: check that process, or retry once it exits (a dead owner's lock is reclaimed; an unreadable one after ${LOCK_STALE_MS / SECOND} s).`),
  });
}

// This process's locks, each with its count of holders and its release. Process-wide on purpose: a lock is held by
// a process (the kernel lock by its connection, the lock file by its pid), and a nested take must not open a second
// connection that would wait on the first. Released by whichever holder is last, not the one that took it: holders
// that await (withCorpusLockAsync) may finish in any order.
const held = new Map<string, { holders: number; release: () => void }>();

/** One more holder of lock `key`, taken by `take` when this process holds it not yet; returns this holder's release. */
function hold(key: string, take: () => () => void): () => void {
  let lock = held.get(key);
  if (!lock) {
    lock = { holders: 0, release: take() };
    held.set(key, lock);
  }
  lock.holders++;
  const mine = lock;
  return () => {
    if (--mine.holders > 0) return;
    held.delete(key);
    mine.release();
  };
}

/**
 * Runs `fn` holding the locks of every target (taken in sorted order, so two
 * writers of the same pair cannot deadlock). Re-entrant within a process.
 */
export function withCorpusLock<T>(targets: string[], fn: () => T, opts: LockOptions = {}): T {
  const release = acquireCorpusLocks(targets, opts);
  try {
    return fn();
  } finally {
    release();
  }
}

/**
 * withCorpusLock for a holder that awaits (the daemon's run start and end write their files with their fsyncs off
 * the event loop: session/store.ts createRunOffLoop, session/ops.ts finishRunOffLoop). The process holds the locks until `fn` settles, so other processes wait
 * as they would for withCorpusLock; this process's other writers, re-entrant, go on meanwhile, each synchronous (a
 * file read-modified-written without an await between, as withCorpusLock's holders do, and a file written off the
 * loop finished by any other write of it, lib/atomicWrite.ts settleWrite).
 */
export async function withCorpusLockAsync<T>(targets: string[], fn: () => Promise<T>, opts: LockOptions = {}): Promise<T> {
  const release = acquireCorpusLocks(targets, opts);
  try {
    return await fn();
  } finally {
    release();
  }
}

/** Takes (or counts once more) the locks of every target; returns their release. */
function acquireCorpusLocks(targets: string[], opts: LockOptions): () => void {
  const timeoutMs = opts.timeoutMs ?? LOCK_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  const sorted = [...new Set(targets)].sort();
  const namespaces = [...new Set(sorted.map(namespaceLockPath))].sort();
  for (const ns of namespaces) assertLockInRepo(ns);
  const releases: Array<() => void> = [];
  const release = () => {
    for (const r of releases.reverse()) r();
  };
  try {
    for (const ns of namespaces) releases.push(hold(ns, () => acquireNamespaceLock(ns, Math.max(1, deadline - Date.now()), timeoutMs)));
    for (const t of sorted) {
      releases.push(
        hold(`file:${t}`, () => {
          mkdirSync(dirname(t), { recursive: true });
          return acquireFileLock(t, deadline);
        }),
      );
    }
  } catch (err) {
    release();
    throw err;
  }
  return release;
}
