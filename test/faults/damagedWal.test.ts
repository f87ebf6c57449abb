/**
 * A damaged SQLite write-ahead log at start. SQLite skips a log whose header does not check out (and reads a
 * log cut short up to its last whole frame) without a word, then deletes it when the daemon stops: a log
 * with a damaged header read as an empty database, and the refusal that followed deleted the log, the only
 * copy of what it held. Now a damaged header is refused with the log untouched, and a torn log is kept
 * as found beside a warning.
 */
import { copyFileSync, existsSync, readdirSync, readFileSync, statSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { freePort } from '../helpers/postgres.js';
import { cleanEnv, cliJson } from '../cli/helpers.js';

describe('a damaged write-ahead log at start', () => {
  let daemon: TestDaemon | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 2000 });
    daemon = null;
    removeTempDirs();
  });

  /**
   * A home as a kill -9 leaves it: the database and its log as they were while the daemon ran, with the
   * tasks `titles` made one transaction each, in the log only (not yet in maestro.db).
   */
  async function killedHome(titles: string[], database?: string): Promise<{ home: string; db: string; wal: string }> {
    const home = tempDir('maestro-home-');
    const d = await startTestDaemon(database ? { home, database } : { home }, { demo: true, noOrchestrator: true });
    const [project] = await d.store.projects.list();
    for (const title of titles) await d.store.tasks.create({ projectId: project!.id, title, complexity: 'easy' });
    const { db, wal } = await killed(d, database ? database.slice('sqlite:'.length) : join(home, 'maestro.db'));
    // The premise: maestro.db alone does not hold the tasks; only the log does.
    const alone = join(tempDir('maestro-alone-'), 'maestro.db');
    copyFileSync(db, alone);
    const without = new Database(alone, { readonly: true });
    try {
      const has = without.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE name = 'tasks'`).get() as { n: number };
      if (has.n) expect(without.prepare('SELECT title FROM tasks').all()).toEqual([]);
    } finally {
      without.close();
    }
    return { home, db, wal };
  }

  /** Stops `d` and leaves its database and log as they were while it ran, as a kill -9 does (a clean stop deletes the log). */
  async function killed(d: TestDaemon, db: string): Promise<{ db: string; wal: string }> {
    const wal = `${db}-wal`;
    const snap = tempDir('maestro-snap-');
    copyFileSync(db, join(snap, 'maestro.db'));
    copyFileSync(wal, join(snap, 'maestro.db-wal'));
    await d.stop({ graceMs: 0 });
    copyFileSync(join(snap, 'maestro.db'), db);
    copyFileSync(join(snap, 'maestro.db-wal'), wal);
    if (existsSync(`${db}-shm`)) unlinkSync(`${db}-shm`);
    return { db, wal };
  }

  const titles = async (d: TestDaemon) => (await d.store.tasks.list({})).map((t) => t.title).sort();

  it('a log whose header is damaged is refused, naming it, and left as it was: put right, every task in it is back', async () => {
    const { home, db, wal } = await killedHome(['Kept in the log']);
    const before = readFileSync(wal);
    const dbBefore = readFileSync(db);
    writeFileSync(wal, Buffer.concat([Buffer.from('garbage!'), before.subarray(8)]));
    await expect(startTestDaemon({ home }, { demo: true, noOrchestrator: true })).rejects.toMatchObject({
      code: 'DATABASE_CORRUPT',
      message: expect.stringContaining(`The write-ahead log ${wal} of the SQLite database ${db} is damaged: it does not start with the WAL magic number (found 0x67617262)`),
    });
    expect(readFileSync(wal).subarray(8)).toEqual(before.subarray(8));
    expect(readFileSync(db)).toEqual(dbBefore);
    // The evidence was kept: with its header put right, the log gives the task back.
    writeFileSync(wal, before);
    daemon = await startTestDaemon({ home }, { demo: true, noOrchestrator: true });
    expect(await titles(daemon)).toContain('Kept in the log');
  });

  it('a log cut short in its last frame is copied aside as found, with a warning naming both, and every whole transaction is kept', async () => {
    const { home, wal } = await killedHome(['Committed first', 'Cut short']);
    truncateSync(wal, statSync(wal).size - 100);
    const torn = readFileSync(wal);
    daemon = await startTestDaemon({ home }, { demo: true, noOrchestrator: true });
    const copies = readdirSync(home).filter((n) => n.startsWith('maestro.db-wal.torn-'));
    expect(copies).toHaveLength(1);
    expect(readFileSync(join(home, copies[0]!))).toEqual(torn);
    expect(daemon.logs.join('')).toContain(`The write-ahead log ${wal} ends `);
    expect(daemon.logs.join('')).toContain(`A copy of the log as found is at ${join(home, copies[0]!)}.`);
    const now = await titles(daemon);
    expect(now).toContain('Committed first');
    expect(now).not.toContain('Cut short'); // its commit frame was the one cut
    // The log now ends on a whole frame: killed again, the next start has nothing to warn of or copy.
    await killed(daemon, join(home, 'maestro.db'));
    daemon = await startTestDaemon({ home }, { demo: true, noOrchestrator: true });
    expect(readdirSync(home).filter((n) => n.startsWith('maestro.db-wal.torn-'))).toEqual(copies);
    expect(daemon.logs.join('')).not.toContain('The write-ahead log');
    expect(await titles(daemon)).toContain('Committed first');
  });

  it('a torn log of a database outside the home is copied and warned of, but not cut: another daemon may be writing it', async () => {
    const dir = tempDir('maestro-shared-');
    const { home, wal } = await killedHome(['Committed first', 'Cut short'], `sqlite:${join(dir, 'maestro.db')}`);
    truncateSync(wal, statSync(wal).size - 100);
    const torn = readFileSync(wal);
    daemon = await startTestDaemon({ home, database: `sqlite:${join(dir, 'maestro.db')}` }, { demo: true, noOrchestrator: true });
    const copies = readdirSync(dir).filter((n) => n.startsWith('maestro.db-wal.torn-'));
    expect(copies).toHaveLength(1);
    expect(daemon.logs.join('')).toContain(`The write-ahead log ${wal} ends `);
    expect(await titles(daemon)).toContain('Committed first');
    // The home lock keeps only the home's own database to this daemon: the log's torn end is left where it was.
    expect(statSync(wal).size).toBeGreaterThanOrEqual(torn.length);
  });

  it('maestro doctor fails on a log whose header is damaged and warns of a torn one, saying what to do, and changes neither', async () => {
    const { home, db, wal } = await killedHome(['Kept in the log']);
    const good = readFileSync(wal);
    const dbBefore = readFileSync(db);
    const env = cleanEnv({ MAESTRO_HOME: home, MAESTRO_PORT: String(await freePort()) });
    const doctor = async () => (await cliJson<{ ok: boolean; checks: { name: string; status: string; detail: string }[] }>(['doctor'], env)).body;
    // No copy made, nothing moved aside (the -shm index SQLite makes for doctor's read-only quick_check is no change of the log).
    const files = () => readdirSync(home).filter((f) => f.startsWith('maestro.db') && f !== 'maestro.db-shm').sort();
    const filesBefore = files();

    writeFileSync(wal, Buffer.concat([Buffer.from('garbage!'), good.subarray(8)]));
    const damaged = await doctor();
    expect(damaged.ok).toBe(false);
    expect(damaged.checks.find((c) => c.name === 'database log')).toEqual({
      name: 'database log',
      status: 'fail',
      detail: expect.stringMatching(new RegExp(`^The write-ahead log ${wal} of the SQLite database ${db} is damaged: it does not start with the WAL magic number.*the daemon does not start.*mv ${wal} ${wal}\\.damaged`)),
    });
    expect(readFileSync(wal).subarray(8)).toEqual(good.subarray(8));

    writeFileSync(wal, good);
    truncateSync(wal, good.length - 100);
    const torn = await doctor();
    expect(torn.checks.find((c) => c.name === 'database log')).toEqual({ name: 'database log', status: 'warn', detail: expect.stringContaining(`The write-ahead log ${wal} ends`) });
    expect(readFileSync(wal)).toEqual(good.subarray(0, good.length - 100));
    expect(files()).toEqual(filesBefore);
    expect(readFileSync(db)).toEqual(dbBefore);

    // Nothing the log holds was lost to doctor's look: put right, it gives the task back.
    writeFileSync(wal, good);
    daemon = await startTestDaemon({ home }, { demo: true, noOrchestrator: true });
    expect(await titles(daemon)).toContain('Kept in the log');
  });
});
