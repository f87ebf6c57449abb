/**
 * SQLite's own error codes for a damaged file, a full disk and a file that
 * cannot be written, turned into catalogue errors that name the database
 * file and say what to do. Everything else passes through unchanged (a
 * constraint or a busy timeout is the caller's business).
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { MaestroError } from '../core/errors.js';

export function sqliteFault(err: unknown, path: string): MaestroError | null {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string') return null;
  const why = (err as Error).message;
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') {
    return new MaestroError('DATABASE_CORRUPT', `The SQLite database ${path} is damaged (${why}). Stop the daemon, move the file aside and restore it from a backup; \`maestro doctor\` checks it.`, { cause: err, details: { path } });
  }
  if (code === 'SQLITE_FULL') {
    return new MaestroError('DISK_FULL', `The disk holding the database ${path} is full (${why}): free some space; Maestro carries on once there is room.`, { cause: err, details: { path } });
  }
  if (code.startsWith('SQLITE_READONLY')) {
    return new MaestroError('HOME_READ_ONLY', `The database ${path} cannot be written (${why}): make it and its folder writable.`, { cause: err, details: { path } });
  }
  return null;
}

/** Rethrows a SQLite fault as its catalogue error (telling `onFault` first), anything else as it is. */
export function rethrowSqlite(err: unknown, path: string, onFault?: (fault: MaestroError) => void): never {
  const fault = sqliteFault(err, path);
  if (!fault) throw err;
  onFault?.(fault);
  throw fault;
}

export type SqliteFileState =
  | { state: 'missing' }
  | { state: 'empty' }
  | { state: 'ok' }
  /** Not a SQLite file at all, or quick_check found damage. */
  | { state: 'damaged'; detail: string }
  /** Could not be read or checked (permissions, a read-only folder without the WAL index). */
  | { state: 'unchecked'; detail: string };

const HEADER = 'SQLite format 3\0';

/**
 * Looks at a SQLite file without changing it: its header, then PRAGMA
 * quick_check on a read-only handle (safe beside a running daemon in WAL mode).
 */
export function inspectSqliteFile(path: string): SqliteFileState {
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    return { state: 'missing' };
  }
  if (size === 0) return { state: 'empty' };
  const head = Buffer.alloc(HEADER.length);
  try {
    const fd = openSync(path, 'r');
    try {
      readSync(fd, head, 0, head.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    return { state: 'unchecked', detail: (err as Error).message };
  }
  if (head.toString('latin1') !== HEADER) return { state: 'damaged', detail: 'it does not start with the SQLite header: not a SQLite database' };
  let db: Database.Database | null = null;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const rows = db.pragma('quick_check(5)') as { quick_check: string }[];
    const problems = rows.map((r) => r.quick_check).filter((r) => r !== 'ok');
    return problems.length ? { state: 'damaged', detail: `quick_check: ${problems.join('; ')}` } : { state: 'ok' };
  } catch (err) {
    return sqliteFault(err, path)?.code === 'DATABASE_CORRUPT' ? { state: 'damaged', detail: (err as Error).message } : { state: 'unchecked', detail: (err as Error).message };
  } finally {
    db?.close();
  }
}
