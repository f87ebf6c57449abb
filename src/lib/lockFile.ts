/**
 * The one lock file, used by the daemon's home lock (`daemon.lock`) and by the
 * corpus lock's compatibility file (`<target>.lock`, FORMATS §6).
 *
 * A lock is a file holding `{pid, token, …}` as JSON. It becomes visible
 * already complete: the content is written to a private temp file, which is
 * then hard-linked to the lock's name (link fails with EEXIST like O_EXCL, but
 * the file it publishes is never empty). On a file system without hard links
 * it is created with O_EXCL and written at once, and removed again if that
 * write fails.
 *
 * A holder is stale when its pid is dead, or when its file is unparseable and
 * older than `unparseableStaleMs` (0 for the home lock, where only debris is
 * ever unparseable; 60 s for a corpus lock, which another tool may be writing
 * with O_EXCL right now). Reclaiming must not let two waiters both win, so the
 * reclaim itself is serialised by a second file, `<lock>.reclaim`, made the
 * same way: only its holder may re-check the stale lock, remove it and create
 * its own. A reclaim file whose holder died is removed by whoever finds it
 * stale; that inner window is a few system calls long.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { closeSync, linkSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { MaestroError } from '../core/errors.js';
import { isPidAlive } from './processes.js';
import { takenSync, type LockTry } from './lockTry.js';

export interface LockRecord {
  pid: number;
  token?: string;
  [field: string]: unknown;
}

/** What a lock file holds: a record, something unparseable, or nothing (no file). */
export type LockHolder = LockRecord | 'unparseable' | null;

export interface LockFileOptions {
  /** When to stop waiting for a live holder (epoch ms); a past deadline means "do not wait". */
  deadline: number;
  /** How old an unparseable lock file must be to count as stale. */
  unparseableStaleMs: number;
  /** The error for a live holder once the deadline has passed. */
  busy: (holder: LockHolder) => Error;
  /** Names the lock in disk-full and read-only errors, e.g. "the daemon lock". */
  what: string;
  /** Pause between tries while a live holder keeps it (default 50 ms). */
  retryMs?: number;
}

export function readLockFile(path: string): LockHolder {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  try {
    const rec = JSON.parse(text) as LockRecord;
    return rec && typeof rec.pid === 'number' ? rec : 'unparseable';
  } catch {
    return 'unparseable';
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

/** A full disk or a read-only folder while writing the lock is a clear error, and leaves nothing behind. */
function lockWriteError(err: unknown, path: string, what: string): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new MaestroError('DISK_FULL', `No space left to write ${what} ${path}: free some space on that disk and try again.`, { cause: err, details: { path } });
  }
  if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') {
    return new MaestroError('HOME_READ_ONLY', `Cannot write ${what} ${path} (${code}): its folder must be writable. Make it writable, or (for the home) point MAESTRO_HOME at a writable folder.`, { cause: err, details: { path } });
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

/** Creates `path` holding `rec`, complete, unless it exists (false). */
export function createLockFile(path: string, rec: LockRecord, what = 'the lock'): boolean {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeNew(tmp, JSON.stringify(rec));
    try {
      linkSync(tmp, path);
    } catch (err) {
      if (!NO_HARD_LINKS.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
      // No hard links here: O_EXCL with the content written at once (a window of one write call).
      writeNew(path, JSON.stringify(rec));
    }
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw lockWriteError(err, path, what);
  } finally {
    unlinkQuietly(tmp);
  }
}

/** Dead pid, or unparseable (an empty file included) for longer than `unparseableStaleMs`. A vanished file is not stale: it is free. */
export function isStaleLock(path: string, holder: LockHolder, unparseableStaleMs: number): boolean {
  if (holder === null) return false;
  if (holder !== 'unparseable') return !isPidAlive(holder.pid);
  if (unparseableStaleMs <= 0) return true;
  try {
    return Date.now() - statSync(path).mtimeMs > unparseableStaleMs;
  } catch {
    return false;
  }
}

function removeIfStale(path: string, unparseableStaleMs: number): void {
  if (isStaleLock(path, readLockFile(path), unparseableStaleMs)) unlinkQuietly(path);
}

/** Reclaim rounds lost to other reclaimers before giving up: each is a few system calls. */
const MAX_RECLAIM_ROUNDS = 50;

/**
 * Tries for the lock file at `path` for this process: each try takes it (its release, which removes the file only
 * while it is still ours: same pid and token) or gives the pause before the next, `retryMs` while a live holder keeps
 * it; once the deadline has passed it throws `opts.busy`.
 */
export function lockFileTry(path: string, fields: Omit<LockRecord, 'pid' | 'token'> & { pid?: number }, opts: LockFileOptions): LockTry {
  const mine: LockRecord = { ...fields, pid: fields.pid ?? process.pid, token: randomUUID() };
  const release = () => {
    const rec = readLockFile(path);
    if (rec && rec !== 'unparseable' && rec.pid === mine.pid && rec.token === mine.token) unlinkQuietly(path);
  };
  const reclaim = `${path}.reclaim`;
  let reclaimRounds = 0;
  const next = () => {
    if (createLockFile(path, mine, opts.what)) return release;
    const holder = readLockFile(path);
    if (holder === null) return 0; // released between our try and our read
    if (!isStaleLock(path, holder, opts.unparseableStaleMs)) {
      if (Date.now() >= opts.deadline) throw opts.busy(holder);
      return opts.retryMs ?? 50;
    }
    if (createLockFile(reclaim, mine, opts.what)) {
      try {
        removeIfStale(path, opts.unparseableStaleMs);
        if (createLockFile(path, mine, opts.what)) return release;
      } finally {
        unlinkQuietly(reclaim);
      }
    } else {
      removeIfStale(reclaim, 0);
    }
    if (++reclaimRounds > MAX_RECLAIM_ROUNDS) throw opts.busy(readLockFile(path));
    // Somebody else is reclaiming: a few system calls; try again almost at once.
    return 1 + Math.floor(Math.random() * 4);
  };
  return { next, abandon: () => {} };
}

/** Takes the lock file at `path` for this process, waiting (the thread blocked) for a live holder until the deadline; returns its release. */
export function acquireLockFile(path: string, fields: Omit<LockRecord, 'pid' | 'token'> & { pid?: number }, opts: LockFileOptions): () => void {
  return takenSync(lockFileTry(path, fields, opts));
}
