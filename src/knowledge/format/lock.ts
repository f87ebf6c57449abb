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
import { kernelLockTry } from '../../lib/kernelLock.js';
import { lockFileTry } from '../../lib/lockFile.js';
import { takenSoon, takenSync, type LockTry } from '../../lib/lockTry.js';
import { assertInRepo } from '../../lib/repoWrites.js';

const SECOND = 1000;
export const LOCK_TIMEOUT_MS = 10 * SECOND;
export const LOCK_STALE_MS = 60 * SECOND;
const RETRY_MS = 50;
const NAMESPACE_LOCK = '.maestro-corpus.lock';

export interface LockOptions {
  timeoutMs?: number;
}

/** The kernel lock file for a target: one per workflow folder (or per directory outside one). */
export function namespaceLockPath(target: string): string {
  const parts = target.split('/');
  const i = parts.lastIndexOf('.workflow');
  const base = i > 0 ? parts.slice(0, i + 1).join('/') : dirname(target);
  return join(base, NAMESPACE_LOCK);
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

/** Tries for the kernel lock of a `.workflow/` until the deadline; the refusal names the whole budget. */
function namespaceLockTry(path: string, deadline: number, budgetMs: number): LockTry {
  return kernelLockTry(path, deadline, () => new MaestroError('LOCK_TIMEOUT', `Timed out after ${budgetMs} ms waiting for the corpus lock ${path}; another writer holds it. Nothing was written: retry when it finishes (a crashed holder's lock is released with its process).`));
}

/** Tries for the compatibility lock file (src/lib/lockFile.ts), its folder made first, waiting for a live holder until the deadline. */
function fileLockTry(target: string, deadline: number): LockTry {
  mkdirSync(dirname(target), { recursive: true });
  const path = `${target}.lock`;
  return lockFileTry(path, { createdAt: Date.now() }, {
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
 * hold() for a taker that awaits between its tries (lib/lockTry.ts takenSoon): while it waits, a holder in this
 * process may take the lock (a synchronous one, which may also release it again, or another taker that awaits);
 * whenever one holds it at a try, this taker joins that hold instead of waiting on its own connection, which would
 * wait for this process's own lock until the deadline. Held or free, it is counted at once, without a promise.
 */
function holdSoon(key: string, tries: () => LockTry): (() => void) | Promise<() => void> {
  const joined = (): never => {
    throw new Error(`lock ${key}: joined a hold that is gone`);
  };
  if (held.has(key)) return hold(key, joined);
  return takenSoon(tries(), () => (held.has(key) ? hold(key, joined) : null), (release) => hold(key, () => release));
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
 * the event loop: session/store.ts createRunOffLoop, session/ops.ts finishRunOffLoop). Its locks are awaited too: while
 * another process (a CLI) holds one, the event loop serves requests between the tries, where a blocked thread froze
 * the daemon for up to the 10 s budget. The process holds the locks until `fn` settles, so other processes wait
 * as they would for withCorpusLock; this process's other writers, re-entrant, go on meanwhile, each synchronous (a
 * file read-modified-written without an await between, as withCorpusLock's holders do, and a file written off the
 * loop finished by any other write of it, lib/atomicWrite.ts settleWrite).
 */
export function withCorpusLockAsync<T>(targets: string[], fn: () => Promise<T>, opts: LockOptions = {}): Promise<T> {
  return heldSoon(() => lockPlan(targets, opts), fn);
}

/**
 * Runs `fn` holding the kernel lock of the `.workflow/` folder `workflowDir`, awaited as withCorpusLockAsync awaits
 * it: for the daemon's synchronous knowledge operations (a review's resolve or refresh, a promotion, the demo's
 * promotion after a run), whose targets are known only inside them. Their withCorpusLock calls then join this hold
 * instead of blocking the thread while a CLI holds the folder; the folder's lock is held from before `fn` starts until
 * it settles, so other processes see the operation whole.
 *
 * What stays synchronous: the lock files of the targets (`<target>.lock`, FORMATS §6), taken inside `fn`. Maestro
 * processes make one only while holding the folder's kernel lock, so once this process holds it none of theirs is
 * there (a dead holder's is reclaimed at once); only a foreign tool (maestro-flow) that holds one keeps the thread
 * waiting, for as long as that tool's write, at most the 10 s budget, as before. So is a target outside this folder
 * (another namespace), which the daemon's operations do not write.
 */
export function withWorkflowLockAsync<T>(workflowDir: string, fn: () => T | Promise<T>, opts: LockOptions = {}): Promise<T> {
  return heldSoon(() => lockPlan([join(workflowDir, NAMESPACE_LOCK)], opts, false), fn);
}

/** Takes `plan`'s locks awaiting a timer between tries, then holds them until `fn` settles. */
function heldSoon<T>(plan: () => LockPlan, fn: () => T | Promise<T>): Promise<T> {
  let locks: (() => void) | Promise<() => void>;
  try {
    locks = acquireLocksSoon(plan());
  } catch (err) {
    return Promise.reject(err);
  }
  // Locks taken at once (none held elsewhere): `fn` starts in the caller's synchronous stretch, as it always did.
  return typeof locks === 'function' ? holding(locks, fn) : locks.then((release) => holding(release, fn));
}

async function holding<T>(release: () => void, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } finally {
    release();
  }
}

type LockPlan = Array<{ key: string; tries: () => LockTry }>;

/**
 * The locks of `targets`, in the order they are taken: each `.workflow/`'s kernel lock, then each target's lock file
 * (none with `files: false`: withWorkflowLockAsync).
 */
function lockPlan(targets: string[], opts: LockOptions, files = true): LockPlan {
  const timeoutMs = opts.timeoutMs ?? LOCK_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  const sorted = [...new Set(targets)].sort();
  const namespaces = [...new Set(sorted.map(namespaceLockPath))].sort();
  for (const ns of namespaces) assertLockInRepo(ns);
  return [
    ...namespaces.map((ns) => ({ key: ns, tries: () => namespaceLockTry(ns, deadline, timeoutMs) })),
    ...(files ? sorted.map((t) => ({ key: `file:${t}`, tries: () => fileLockTry(t, deadline) })) : []),
  ];
}

/** The release of every lock taken so far, last first. */
function releaseAll(releases: Array<() => void>): () => void {
  return () => {
    for (const r of releases.reverse()) r();
  };
}

/** Takes (or counts once more) the locks of every target, the thread blocked while another process holds one; returns their release. */
function acquireCorpusLocks(targets: string[], opts: LockOptions): () => void {
  const releases: Array<() => void> = [];
  try {
    for (const lock of lockPlan(targets, opts)) releases.push(hold(lock.key, () => takenSync(lock.tries())));
  } catch (err) {
    releaseAll(releases)();
    throw err;
  }
  return releaseAll(releases);
}

/** acquireCorpusLocks for a plan, awaiting a timer between tries once one is busy: their release, at once when none was. */
function acquireLocksSoon(plan: LockPlan): (() => void) | Promise<() => void> {
  const releases: Array<() => void> = [];
  const fail = (err: unknown): never => {
    releaseAll(releases)();
    throw err;
  };
  const from = (first: number): (() => void) | Promise<() => void> => {
    for (let i = first; i < plan.length; i++) {
      const taken = holdSoon(plan[i]!.key, plan[i]!.tries);
      if (typeof taken !== 'function') {
        return taken.then((release) => {
          releases.push(release);
          return from(i + 1);
        });
      }
      releases.push(taken);
    }
    return releaseAll(releases);
  };
  try {
    const all = from(0);
    return typeof all === 'function' ? all : all.catch(fail);
  } catch (err) {
    return fail(err);
  }
}
