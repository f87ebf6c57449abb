/**
 * Many processes against one database: migrations run exactly once, and
 * 5,000 tasks claimed by 8 processes are each claimed exactly once, none lost.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createStore } from '../../src/store/store.js';
import type { DBAdapter } from '../../src/store/db.js';
import { openDatabase } from '../../src/store/open.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { emptyPgDatabase, freshPostgres, freshSqlite, pgAvailable, removeTempDirs, tempDir } from '../helpers/db.js';
import { runClaimers } from './spawn.js';

const TASKS = 5000;
const PROCESSES = 8;

async function seed(db: DBAdapter, n: number): Promise<string> {
  const store = createStore(db);
  const p = await store.projects.create({ name: 'stress', repoPath: '/r' });
  // One transaction for the seed: the test is about claiming, not inserting.
  await db.transaction(async (tx) => {
    const now = Date.now();
    for (let i = 0; i < n; i++) {
      await tx.run(`INSERT INTO tasks (id, project_id, title, complexity, status, priority, created_at, updated_at) VALUES ($1, $2, $3, 'easy', 'ready', 1, $4, $4)`, [
        `t_${String(i).padStart(5, '0')}`, p.id, `task ${i}`, now + i,
      ]);
    }
  });
  return p.id;
}

async function claimAll(db: DBAdapter, url: string): Promise<void> {
  const project = await seed(db, TASKS);
  const results = await runClaimers(PROCESSES, (i) => ['claim', url, `owner-${i}`]);
  const won = results.flatMap((r) => r.won);
  expect(new Set(won).size).toBe(won.length); // nobody claimed a task twice
  expect(won.length).toBe(TASKS); // none lost
  // Each claimer warmed up on tasks of its own project first (claimer.ts).
  const rows = await db.all<{ attempt: number; claimed_by: string; status: string }>(`SELECT attempt, claimed_by, status FROM tasks WHERE project_id = $1`, [project]);
  expect(rows.length).toBe(TASKS);
  expect(rows.every((r) => Number(r.attempt) === 1 && r.status === 'queued')).toBe(true);
  const byOwner = new Map(results.map((r) => [r.owner, new Set(r.won)]));
  const stored = await db.all<{ id: string; claimed_by: string }>(`SELECT id, claimed_by FROM tasks WHERE project_id = $1`, [project]);
  for (const row of stored) expect(byOwner.get(row.claimed_by)?.has(row.id)).toBe(true);
  // More than one process really took part.
  expect(results.filter((r) => r.won.length > 0).length).toBeGreaterThan(1);
}

describe('multi-process store', () => {
  let db: DBAdapter | null = null;
  afterEach(async () => {
    await db?.close();
    db = null;
    removeTempDirs();
  });

  it('SQLite: ten processes migrate a fresh database exactly once', async () => {
    const url = `sqlite:${tempDir()}/fresh.db`;
    const results = await runClaimers<{ applied: number[] }>(10, () => ['migrate', url]);
    expect(results.flatMap((r) => r.applied).sort((a, b) => a - b)).toEqual(MIGRATIONS.map((m) => m.version));
    db = openDatabase(url);
    expect(await db.all(`SELECT version FROM schema_migrations ORDER BY version`)).toEqual(MIGRATIONS.map((m) => ({ version: m.version })));
  });

  it.skipIf(!pgAvailable())('PostgreSQL: ten processes migrate a fresh database exactly once', async () => {
    const url = await emptyPgDatabase();
    const results = await runClaimers<{ applied: number[] }>(10, () => ['migrate', url]);
    expect(results.flatMap((r) => r.applied).sort((a, b) => a - b)).toEqual(MIGRATIONS.map((m) => m.version));
    db = openDatabase(url);
    expect(await db.all(`SELECT version FROM schema_migrations ORDER BY version`)).toEqual(MIGRATIONS.map((m) => ({ version: m.version })));
  });

  it(`SQLite: ${PROCESSES} processes claim ${TASKS} tasks, each exactly once`, async () => {
    const fresh = await freshSqlite();
    db = fresh.db;
    await claimAll(db, fresh.url);
  });

  it.skipIf(!pgAvailable())(`PostgreSQL: ${PROCESSES} processes claim ${TASKS} tasks, each exactly once`, async () => {
    const fresh = await freshPostgres();
    db = fresh.db;
    await claimAll(db, fresh.url);
  });
});
