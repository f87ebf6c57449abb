/** Opens the store's database from a URL (`sqlite:<path>` or `postgres://…`) and migrates it. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { MaestroError } from '../core/errors.js';
import type { DBAdapter } from './db.js';
import { migrate } from './migrate.js';
import { openPostgres } from './postgres.js';
import { openSqlite } from './sqlite.js';

export interface OpenOptions {
  /** Told of a damaged file, a full disk or a read-only file (SQLite); the daemon turns them into health conditions. */
  onFault?: (fault: MaestroError) => void;
  /** Runs on the opened database before migrations (the daemon refuses an emptied database beside old data). */
  beforeMigrate?: (db: DBAdapter) => Promise<void>;
}

export function openDatabase(url: string, options: OpenOptions = {}): DBAdapter {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (!path) throw new MaestroError('CONFIG_INVALID', 'sqlite: URL needs a path, e.g. sqlite:/home/me/.maestro/maestro.db');
    // Folders made here are the owner's alone, as the home is (0700): the database holds every task, transcript and key.
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    return openSqlite(path, { onFault: options.onFault });
  }
  if (/^postgres(ql)?:\/\//.test(url)) return openPostgres(url);
  throw new MaestroError('CONFIG_INVALID', `Unknown database URL "${url}": use sqlite:<path> or postgres://…`);
}

/** Opens and migrates; closes the handle again if migration fails. */
export async function openMigratedDatabase(url: string, options: OpenOptions = {}): Promise<DBAdapter> {
  const db = openDatabase(url, options);
  try {
    await options.beforeMigrate?.(db);
    await migrate(db);
    return db;
  } catch (err) {
    await db.close();
    throw err;
  }
}
