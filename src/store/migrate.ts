/**
 * Applies pending migrations exactly once, however many processes start at
 * the same moment against a fresh database. SQLite: the whole check-and-apply
 * runs in one BEGIN IMMEDIATE transaction, so the second process waits and
 * then sees the work done. PostgreSQL: a transaction-scoped advisory lock taken
 * before anything else, including the CREATE TABLE IF NOT EXISTS that would
 * otherwise race on the catalog.
 */
import { MaestroError } from '../core/errors.js';
import type { DBAdapter, Dialect, Queryable } from './db.js';
import { LATEST_SCHEMA_VERSION, MIGRATIONS, type Migration } from './migrations/index.js';

/** An arbitrary constant naming Maestro's migration lock in pg_advisory_xact_lock. */
const PG_MIGRATION_LOCK = 727_274_001;

function statementsFor(m: Migration, dialect: Dialect): string[] {
  const serial = dialect === 'sqlite' ? 'INTEGER PRIMARY KEY AUTOINCREMENT' : 'BIGSERIAL PRIMARY KEY';
  return [...m.statements, ...((dialect === 'sqlite' ? m.sqlite : m.postgres) ?? [])].map((s) => s.replaceAll('{{serial}}', serial));
}

export interface MigrateResult {
  applied: number[];
  version: number;
}

export async function currentSchemaVersion(db: Queryable): Promise<number> {
  const exists =
    db.dialect === 'sqlite'
      ? await db.one(`SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`)
      : await db.one(`SELECT 1 AS x FROM information_schema.tables WHERE table_name = 'schema_migrations' AND table_schema = current_schema()`);
  if (!exists) return 0;
  const row = await db.one<{ v: number | null }>(`SELECT MAX(version) AS v FROM schema_migrations`);
  return Number(row?.v ?? 0);
}

export async function migrate(db: DBAdapter, now: () => number = Date.now): Promise<MigrateResult> {
  return db.transaction(async (tx) => {
    if (tx.dialect === 'postgres') await tx.all(`SELECT pg_advisory_xact_lock(${PG_MIGRATION_LOCK})`);
    await tx.run(`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`);
    const current = await currentSchemaVersion(tx);
    if (current > LATEST_SCHEMA_VERSION) {
      throw new MaestroError(
        'SCHEMA_TOO_NEW',
        `The database ${db.name} has schema version ${current}, newer than this Maestro knows (${LATEST_SCHEMA_VERSION}). Upgrade Maestro; nothing was changed.`,
        { details: { current, known: LATEST_SCHEMA_VERSION } },
      );
    }
    const applied: number[] = [];
    for (const m of MIGRATIONS) {
      if (m.version <= current) continue;
      for (const sql of statementsFor(m, tx.dialect)) await tx.run(sql);
      await tx.run(`INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`, [m.version, m.name, now()]);
      applied.push(m.version);
    }
    return { applied, version: Math.max(current, ...applied) };
  });
}
