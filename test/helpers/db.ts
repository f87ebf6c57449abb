/**
 * Real databases for tests. SQLite: a fresh file per test, copied from a
 * template migrated once per worker. PostgreSQL: a fresh database per test,
 * created from a migrated template database on the cluster globalSetup
 * started (`inject('pgUrl')`).
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import type { DBAdapter } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { openPostgres } from '../../src/store/postgres.js';
import { openSqlite } from '../../src/store/sqlite.js';

let sqliteTemplate: string | null = null;
const tempDirs: string[] = [];

/** A folder removed by removeTempDirs; in the system's temporary folder unless `parent` says where. */
export function tempDir(prefix = 'maestro-test-', parent = tmpdir()): string {
  const dir = mkdtempSync(join(parent, prefix));
  tempDirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const d of tempDirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

async function sqliteTemplatePath(): Promise<string> {
  if (sqliteTemplate) return sqliteTemplate;
  // Not in tempDirs: the template lives as long as the worker.
  const path = join(mkdtempSync(join(tmpdir(), 'maestro-tmpl-')), 'template.db');
  const db = openSqlite(path);
  await migrate(db);
  // Fold the WAL into the main file so a plain copy carries the whole schema.
  await db.run('PRAGMA wal_checkpoint(TRUNCATE)');
  await db.close();
  sqliteTemplate = path;
  return path;
}

/** A migrated SQLite database in a new file; returns the adapter and the file's path. */
export async function freshSqlite(): Promise<{ db: DBAdapter; path: string; url: string }> {
  const path = join(tempDir(), 'maestro.db');
  copyFileSync(await sqliteTemplatePath(), path);
  return { db: openSqlite(path), path, url: `sqlite:${path}` };
}

let pgTemplate: string | null = null;

export function pgAvailable(): boolean {
  return inject('pgUrl') !== null;
}

function dbUrl(base: string, name: string): string {
  const u = new URL(base);
  u.pathname = `/${name}`;
  return u.toString();
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: inject('pgUrl')! });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** An empty (unmigrated) PostgreSQL database; returns its URL. */
export async function emptyPgDatabase(): Promise<string> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  return dbUrl(inject('pgUrl')!, name);
}

/** A migrated PostgreSQL database of its own, made from a template. */
export async function freshPostgres(): Promise<{ db: DBAdapter; url: string }> {
  if (!pgTemplate) {
    const name = `tmpl_${randomBytes(6).toString('hex')}`;
    await adminQuery(`CREATE DATABASE ${name}`);
    const db = openPostgres(dbUrl(inject('pgUrl')!, name), { max: 1 });
    await migrate(db);
    await db.close();
    pgTemplate = name;
  }
  const name = `t_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name} TEMPLATE ${pgTemplate}`);
  const url = dbUrl(inject('pgUrl')!, name);
  return { db: openPostgres(url), url };
}
