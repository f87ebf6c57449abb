/**
 * One daemon per $MAESTRO_HOME. The lock is `daemon.lock`, created with
 * O_EXCL and holding the owner's pid. A lock whose pid is no longer alive is
 * stale; reclaiming it must not let two starting daemons both win, so the
 * reclaim itself is serialised by a second O_EXCL file, `daemon.lock.reclaim`:
 * only its holder may re-check the stale lock, remove it and create its own.
 * A reclaim file whose holder died is itself removed by whoever finds its pid
 * dead; that inner window is a few system calls long.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
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

function createExclusive(path: string, info: LockInfo): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    writeSync(fd, JSON.stringify(info));
  } finally {
    closeSync(fd);
  }
  return true;
}

function removeIfStale(path: string): void {
  const info = readLock(path);
  // An unreadable lock is one being written this instant, or garbage; only a dead pid is stale.
  if (info && !isPidAlive(info.pid)) {
    try {
      unlinkSync(path);
    } catch {
      // someone else removed it
    }
  }
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
        unlinkSync(reclaim);
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
      if (readLock(path)?.pid === pid) unlinkSync(path);
    },
  };
}
