/**
 * Checks at start, before anything is written to the home: it must be
 * writable (a read-only home is a clear error naming it, not an EROFS from
 * deep inside), and an emptied database must not be taken for a new one.
 *
 * An emptied database — a 0-byte `maestro.db`, or one with no tables — beside
 * the data of earlier runs (runs/, worktrees/, clones/, demo/ …) means the
 * database was lost, not that this home is new: starting over on top of it
 * would re-create the demo and forget every task while their folders stay
 * behind. So it is refused with what to do. A database file that is missing
 * altogether is how a person starts over on purpose, and is allowed; nothing
 * that follows deletes a folder with content (the demo picks a free folder).
 */
import { chmodSync, mkdirSync, readdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { MaestroError } from '../core/errors.js';
import type { DBAdapter } from '../store/db.js';

/** What every start writes before or beside the database: not evidence of earlier work. */
function isStartupFile(name: string, dbName: string): boolean {
  return name === dbName || name.startsWith(`${dbName}-`) || name.startsWith('daemon.lock') || name === 'daemon.url' || name.startsWith('.maestro-probe') || ['logs', 'token', 'config.json'].includes(name);
}

function hasContent(path: string): boolean {
  try {
    const s = statSync(path);
    return s.isDirectory() ? readdirSync(path).length > 0 : true;
  } catch {
    return false;
  }
}

/** The entries of the home that hold earlier work (non-empty folders, other files). */
export function earlierData(home: string, dbPath: string): string[] {
  let names: string[];
  try {
    names = readdirSync(home);
  } catch {
    return [];
  }
  const dbName = resolve(dirname(dbPath)) === resolve(home) ? basename(dbPath) : '\0';
  return names.filter((n) => !isStartupFile(n, dbName) && hasContent(join(home, n))).sort();
}

/** The file of a `sqlite:` URL (null for PostgreSQL and `:memory:`). */
export function sqlitePath(url: string): string | null {
  const path = url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : '';
  return path && path !== ':memory:' ? path : null;
}

/** Size in bytes, or null when there is no such file. */
export function fileSize(path: string): number | null {
  try {
    return statSync(path).size;
  } catch {
    return null;
  }
}

/**
 * Creates the home (mode 0700) if needed and checks it can be written; either failure is one clear error
 * naming it. Returns a warning when an existing home was open to other users and has been closed.
 */
export function prepareHome(home: string): string | null {
  try {
    mkdirSync(home, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw homeWriteError(realMkdirError(err, home), home);
  }
  assertHomeWritable(home);
  return closeHome(home);
}

/**
 * Only the home's owner may enter it: it holds the database (every task, plan, transcript and diff), the
 * run folders (a run's job.json carries the project's provider `env`, API keys included) and the logs.
 * A home other users can enter is closed (0700), with a warning; one that belongs to another user is
 * left alone, and said.
 */
function closeHome(home: string): string | null {
  const st = statSync(home);
  const mode = (st.mode & 0o777).toString(8);
  if ((st.mode & 0o077) === 0) return null;
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) {
    return `The Maestro home ${home} belongs to another user (uid ${st.uid}) and others can enter it (mode ${mode}): its database, run files and logs may hold secrets. Use a home of your own.`;
  }
  chmodSync(home, 0o700);
  return `The Maestro home ${home} was open to other users (mode ${mode}); its database, run files and logs may hold secrets (a project's provider env), so it is now 0700.`;
}

/**
 * Node's recursive mkdir reports ENOENT on a read-only disk (it retries the
 * parent and forgets why); a plain mkdir of the first missing folder says EROFS.
 */
function realMkdirError(err: unknown, home: string): unknown {
  if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return err;
  let missing = home;
  while (dirname(missing) !== missing && fileSize(dirname(missing)) === null) missing = dirname(missing);
  try {
    mkdirSync(missing);
    return err;
  } catch (again) {
    return again;
  }
}

function homeWriteError(err: unknown, home: string): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') {
    return new MaestroError('HOME_READ_ONLY', `The Maestro home ${home} is not writable (${code}): Maestro keeps its database, lock, logs and worktrees there. Make it writable (remount it read-write), or point MAESTRO_HOME / --home at a writable folder.`, { cause: err, details: { path: home } });
  }
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new MaestroError('DISK_FULL', `No space left on the disk holding the Maestro home ${home}: free some space there and start again.`, { cause: err, details: { path: home } });
  }
  return err;
}

/** Writes and removes a small file in the home; a read-only home or a full disk is a clear error naming it. */
function assertHomeWritable(home: string): void {
  const probe = join(home, `.maestro-probe-${process.pid}`);
  try {
    writeFileSync(probe, 'maestro');
  } catch (err) {
    throw homeWriteError(err, home);
  } finally {
    try {
      unlinkSync(probe);
    } catch {
      // never written
    }
  }
}

function emptiedError(home: string, dbPath: string, what: string): MaestroError | null {
  const data = earlierData(home, dbPath);
  if (data.length === 0) return null;
  return new MaestroError(
    'DATABASE_EMPTY',
    `The database ${dbPath} ${what}, but ${home} holds earlier work (${data.join(', ')}): the database was lost, so Maestro will not start over on top of that work. ` +
      `Restore ${dbPath} from a backup; or, to start over on purpose, delete ${dbPath} (nothing else is deleted, the demo goes to a new folder).`,
    { details: { path: dbPath, data } },
  );
}

/**
 * Before opening: a 0-byte database beside earlier work is refused untouched
 * (opening it would write a header). Not when a write-ahead log beside it has
 * content: SQLite recovers the data from there.
 */
export function refuseEmptyDatabaseFile(home: string, dbPath: string): void {
  if (fileSize(dbPath) !== 0 || (fileSize(`${dbPath}-wal`) ?? 0) > 0) return;
  const err = emptiedError(home, dbPath, 'is empty (0 bytes)');
  if (err) throw err;
}

/** Before migrations: a database with no tables beside earlier work is refused, not re-initialised. A missing file is how a person starts over on purpose. */
export async function refuseEmptiedDatabase(db: DBAdapter, home: string, dbPath: string, existedBeforeOpen: boolean): Promise<void> {
  if (db.dialect !== 'sqlite' || !existedBeforeOpen) return;
  const row = await db.one<{ n: number }>(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'`);
  if ((row?.n ?? 0) > 0) return;
  const err = emptiedError(home, dbPath, 'is empty (it has no tables)');
  if (err) throw err;
}
