/**
 * A lock taken by tries (lib/kernelLock.ts, lib/lockFile.ts): each try takes it or says how long to wait before the
 * next. A CLI waits with its thread blocked (`takenSync`); the daemon awaits a timer between tries (`takenSoon`), so its
 * event loop serves requests while another process holds the lock (knowledge/format/lock.ts withCorpusLockAsync).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { sleepSync } from './sleepSync.js';

export interface LockTry {
  /** One try: the lock's release, or the milliseconds to wait before the next try (0: at once). Throws once the deadline has passed. */
  next(): (() => void) | number;
  /** Gives up trying (the lock is not taken): frees what the tries held open. */
  abandon(): void;
}

/** Tries until the lock is taken, the thread blocked between tries. */
export function takenSync(t: LockTry): () => void {
  for (;;) {
    const r = t.next();
    if (typeof r === 'function') return r;
    if (r > 0) sleepSync(r);
  }
}

/**
 * Tries until the lock is taken, awaiting a timer between tries; a lock taken at the first try is given at once, not
 * through a promise, so an uncontended caller goes on in the same synchronous stretch, as with takenSync. A caller in
 * this process may hold the lock meanwhile (a re-entrant holder): `join()`, asked before each try, then gives its
 * share of that hold and the tries stop; otherwise `own(release)` is given the lock once a try takes it. Each runs in
 * the same synchronous stretch as the check or try before it, so no other code of this process sees the lock taken
 * and not yet recorded.
 */
export function takenSoon<R>(t: LockTry, join: () => R | null, own: (release: () => void) => R): R | Promise<R> {
  const joined = join();
  if (joined !== null) {
    t.abandon();
    return joined;
  }
  const r = t.next();
  if (typeof r === 'function') return own(r);
  return delay(r).then(() => takenSoon(t, join, own));
}
