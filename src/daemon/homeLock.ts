/**
 * One daemon per $MAESTRO_HOME. The lock is `daemon.lock`, holding the owner's
 * pid. It becomes visible already complete: the content is written to a
 * private temp file first, which is then hard-linked to `daemon.lock` (link
 * fails with EEXIST like O_EXCL, but the file it publishes is never empty). So
 * a lock that is empty or unreadable is never one being written: it is debris
 * (an older version's start on a full disk left 0-byte locks that blocked
 * every later start) and is reclaimed like a lock whose pid is dead. (On a
 * file system without hard links the lock is created with O_EXCL and written
 * at once, and removed again if that write fails.)
 *
 * Reclaiming must not let two starting daemons both win, so the reclaim itself
 * is serialised by a second file, `daemon.lock.reclaim`, made the same way:
 * only its holder may re-check the stale lock, remove it and create its own.
 * A reclaim file whose holder died is itself removed by whoever finds it
 * stale; that inner window is a few system calls long.
 */
import { closeSync, linkSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { MaestroError } from '../core/errors.js';
import { isPidAlive } from '../lib/processes.js';

export interface LockInfo {
  pid: number;
  host: string;
  startedAt: number;
}

function readLock(path: string): LockInfo | null {
  try {
    const info = JSON.parse(readFileSync(path, 'utf8')) as LockInfo;
    return typeof info.pid === 'number' ? info : null;
  } catch {
    return null;
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

/** A full disk while writing the lock is a clear error, and leaves nothing behind. */
function lockWriteError(err: unknown, path: string): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new MaestroError('DISK_FULL', `No space left to write the daemon lock ${path}: free some space on that disk and start again.`, { cause: err, details: { path } });
  }
  if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') {
    return new MaestroError('HOME_READ_ONLY', `Cannot write the daemon lock ${path} (${code}): the Maestro home must be writable. Make it writable, or point MAESTRO_HOME at a writable folder.`, { cause: err, details: { path } });
  }
  return err;
}

function writeNew(path: string, content: string): void {
  const fd = openSync(path, 'wx', 0o644);
  try {
    writeSync(fd, content);
  } catch (err) {
    closeSync(fd);
    unlinkQuietly(path);
    throw err;
  }
  closeSync(fd);
}

/** File systems without hard links (FAT, some network mounts) answer link() with one of these. */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/** Creates `path` holding `info`, complete, unless it exists. */
function createExclusive(path: string, info: LockInfo): boolean {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeNew(tmp, JSON.stringify(info));
    try {
      linkSync(tmp, path);
    } catch (err) {
      if (!NO_HARD_LINKS.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
      // No hard links here: O_EXCL with the content written at once (a window of one write call).
      writeNew(path, JSON.stringify(info));
    }
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw lockWriteError(err, path);
  } finally {
    unlinkQuietly(tmp);
  }
}

/** Empty, garbage, or owned by a dead pid. */
function isStale(path: string): boolean {
  const info = readLock(path);
  return !info || !isPidAlive(info.pid);
}

function removeIfStale(path: string): void {
  if (isStale(path)) unlinkQuietly(path);
}

export interface HomeLock {
  readonly path: string;
  release(): void;
}

export function acquireHomeLock(home: string, pid = process.pid): HomeLock {
  const path = join(home, 'daemon.lock');
  const reclaim = `${path}.reclaim`;
  const mine: LockInfo = { pid, host: hostname(), startedAt: Date.now() };
  for (let tries = 0; tries < 50; tries++) {
    if (createExclusive(path, mine)) return heldLock(path, pid);
    const holder = readLock(path);
    if (holder && isPidAlive(holder.pid)) {
      throw new MaestroError('CONFIG_INVALID', `Another Maestro daemon (pid ${holder.pid}, started ${new Date(holder.startedAt).toISOString()}) already uses ${home}. Stop it, or use another MAESTRO_HOME.`, {
        details: { lock: path, pid: holder.pid },
      });
    }
    if (createExclusive(reclaim, mine)) {
      try {
        removeIfStale(path);
        if (createExclusive(path, mine)) return heldLock(path, pid);
      } finally {
        unlinkQuietly(reclaim);
      }
    } else {
      removeIfStale(reclaim);
    }
    // Somebody else is reclaiming; spin briefly (a few system calls).
    const until = Date.now() + 5;
    while (Date.now() < until) {
      // busy wait: this is start-up, once
    }
  }
  throw new MaestroError('CONFIG_INVALID', `Could not take the daemon lock ${path}; remove it if no daemon runs.`);
}

function heldLock(path: string, pid: number): HomeLock {
  let released = false;
  return {
    path,
    release() {
      if (released) return;
      released = true;
      if (readLock(path)?.pid === pid) unlinkQuietly(path);
    },
  };
}
