/**
 * One daemon per $MAESTRO_HOME: the lock file `daemon.lock` (src/lib/lockFile.ts),
 * holding the owner's pid, host and start time. It is published complete, so
 * a lock that is empty or unreadable is never one being written: it is debris
 * (an older version's start on a full disk left 0-byte locks that blocked
 * every later start) and is reclaimed at once, like a lock whose pid is dead.
 * A live holder is not waited for: the second daemon is refused.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { MaestroError } from '../core/errors.js';
import { acquireLockFile } from '../lib/lockFile.js';

export interface LockInfo {
  pid: number;
  host: string;
  startedAt: number;
}

export interface HomeLock {
  readonly path: string;
  release(): void;
}

export function acquireHomeLock(home: string, pid = process.pid): HomeLock {
  const path = join(home, 'daemon.lock');
  const release = acquireLockFile(path, { pid, host: hostname(), startedAt: Date.now() }, {
    what: 'the daemon lock',
    deadline: 0,
    unparseableStaleMs: 0,
    busy: (holder) => {
      if (holder && holder !== 'unparseable') {
        const startedAt = typeof holder.startedAt === 'number' ? new Date(holder.startedAt).toISOString() : 'at an unknown time';
        return new MaestroError('HOME_IN_USE', `Another Maestro daemon (pid ${holder.pid}, started ${startedAt}) already uses ${home}. Stop it, or use another MAESTRO_HOME.`, { details: { lock: path, pid: holder.pid } });
      }
      return new MaestroError('CONFIG_INVALID', `Could not take the daemon lock ${path}; remove it if no daemon runs.`);
    },
  });
  let released = false;
  return {
    path,
    release() {
      if (released) return;
      released = true;
      release();
    },
  };
}
