/**
 * SQLite's own error codes for a damaged file, a full disk and a file that
 * cannot be written, turned into catalogue errors that name the database
 * file and say what to do. Everything else passes through unchanged (a
 * constraint or a busy timeout is the caller's business).
 */
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
