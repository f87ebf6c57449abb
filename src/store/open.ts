/** Opens the store's database from a URL (`sqlite:<path>` or `postgres://…`) and migrates it. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { MaestroError } from '../core/errors.js';
import type { DBAdapter } from './db.js';
import { migrate } from './migrate.js';
import { openPostgres } from './postgres.js';
import { openSqlite } from './sqlite.js';

export function openDatabase(url: string): DBAdapter {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (!path) throw new MaestroError('CONFIG_INVALID', 'sqlite: URL needs a path, e.g. sqlite:/home/me/.maestro/maestro.db');
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    return openSqlite(path);
  }
  if (/^postgres(ql)?:\/\//.test(url)) return openPostgres(url);
  throw new MaestroError('CONFIG_INVALID', `Unknown database URL "${url}": use sqlite:<path> or postgres://…`);
}

/** Opens and migrates; closes the handle again if migration fails. */
export async function openMigratedDatabase(url: string): Promise<DBAdapter> {
  const db = openDatabase(url);
  try {
    await migrate(db);
    return db;
  } catch (err) {
    await db.close();
    throw err;
  }
}
