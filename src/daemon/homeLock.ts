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
import { readHomeDaemonUrl } from '../config/home.js';
import { MaestroError } from '../core/errors.js';
import { acquireLockFile, isStaleLock, readLockFile, type LockRecord } from '../lib/lockFile.js';

const LOCK_NAME = 'daemon.lock';

export interface LockInfo {
  pid: number;
  host: string;
  startedAt: number;
}

export interface HomeLock {
  readonly path: string;
  release(): void;
}

/**
 * Says where the running daemon answers (a second `npm start` mostly wants its board) and how to stop it: "Stop it"
 * alone left a person looking for how. `maestro stop` and `kill` only for a daemon on this host.
 */
function inUse(home: string, path: string, holder: LockRecord): MaestroError {
  const startedAt = typeof holder.startedAt === 'number' ? new Date(holder.startedAt).toISOString() : 'at an unknown time';
  const url = readHomeDaemonUrl(home);
  const serves = url ? ` It answers at ${url} (the CLI finds it from the home).` : '';
  const kill = holder.host === hostname() ? ` (maestro stop, Ctrl-C in its terminal, or kill ${holder.pid}: each lets its running stages finish)` : ` (on ${holder.host}: maestro stop there)`;
  return new MaestroError('HOME_IN_USE', `Another Maestro daemon (pid ${holder.pid}, started ${startedAt}) already uses ${home}.${serves} To start this one, stop that one first${kill}, or use another MAESTRO_HOME.`, { details: { lock: path, pid: holder.pid } });
}

/**
 * The HOME_IN_USE a start on `home` would meet now (a live daemon holds its lock), else null; reads only,
 * creates nothing. A start that finds its port taken asks it first: the holder is then the likely user of the port.
 */
export function homeInUse(home: string): MaestroError | null {
  const path = join(home, LOCK_NAME);
  const holder = readLockFile(path);
  return holder && holder !== 'unparseable' && !isStaleLock(path, holder, 0) ? inUse(home, path, holder) : null;
}

export function acquireHomeLock(home: string, pid = process.pid): HomeLock {
  const path = join(home, LOCK_NAME);
  const release = acquireLockFile(path, { pid, host: hostname(), startedAt: Date.now() }, {
    what: 'the daemon lock',
    deadline: 0,
    unparseableStaleMs: 0,
    busy: (holder) => (holder && holder !== 'unparseable' ? inUse(home, path, holder) : new MaestroError('CONFIG_INVALID', `Could not take the daemon lock ${path}; remove it if no daemon runs.`)),
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
