/**
 * Nothing is deleted to make the demo, and a lost database is not taken for a
 * new one. An empty `maestro.db` in a used home once made the daemon re-create
 * the demo with `rm -rf`, taking the demo repository and its history with it.
 * Also: a damaged database is an error naming the file; an empty lock and a
 * dead owner's lock do not block a start.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { git } from '../helpers/repo.js';

describe('an emptied database and the demo', () => {
  let daemon: TestDaemon | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 2000 });
    daemon = null;
    removeTempDirs();
  });

  /** A used home: the demo made, a person's own commit on it, the daemon stopped. */
  async function usedHome(): Promise<{ home: string; repo: string; head: string }> {
    const home = tempDir('maestro-home-');
    const first = await startTestDaemon({ home }, { demo: true, noOrchestrator: true });
    const [project] = await first.store.projects.list();
    await first.stop({ graceMs: 0 });
    const repo = project!.repoPath;
    expect(repo).toBe(join(home, 'demo', 'greeter'));
    writeFileSync(join(repo, 'NOTES.md'), 'my own work\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'My own work');
    return { home, repo, head: git(repo, 'rev-parse', 'HEAD') };
  }

  it('a brand-new empty home gets the demo', async () => {
    const home = tempDir('maestro-home-');
    daemon = await startTestDaemon({ home }, { demo: true, noOrchestrator: true });
    const [project] = await daemon.store.projects.list();
    expect(project).toMatchObject({ name: 'demo', repoPath: join(home, 'demo', 'greeter') });
    expect(git(project!.repoPath, 'log', '--format=%s')).toBe('Start the greeter');
  });

  it('an empty database beside earlier work is refused with what to do, and nothing is deleted', async () => {
    const { home, repo, head } = await usedHome();
    const db = join(home, 'maestro.db');
    truncateSync(db, 0);
    for (const suffix of ['-wal', '-shm']) if (existsSync(db + suffix)) unlinkSync(db + suffix);
    await expect(startTestDaemon({ home }, { demo: true, noOrchestrator: true })).rejects.toMatchObject({
      code: 'DATABASE_EMPTY',
      message: expect.stringMatching(new RegExp(`^The database ${db} is empty \\(0 bytes\\), but ${home} holds earlier work \\(demo\\).*Restore ${db} from a backup; or, to start over on purpose, delete ${db}`)),
    });
    // The demo repository and its history are all there.
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(repo, 'log', '--format=%s')).toBe('My own work\nStart the greeter');
    expect(readdirSync(repo).sort()).toEqual(['.git', 'NOTES.md', 'README.md', 'package.json', 'src']);
    // Untouched, and refused again on the next try.
    expect(statSync(db).size).toBe(0);
    await expect(startTestDaemon({ home }, { demo: true, noOrchestrator: true })).rejects.toMatchObject({ code: 'DATABASE_EMPTY' });
    // A SQLite file with a header but no tables is the same loss.
    const headerOnly = new Database(db);
    headerOnly.pragma('journal_mode = WAL');
    headerOnly.close();
    expect(statSync(db).size).toBeGreaterThan(0);
    await expect(startTestDaemon({ home }, { demo: true, noOrchestrator: true })).rejects.toMatchObject({ code: 'DATABASE_EMPTY', message: expect.stringContaining(`${db} is empty (it has no tables)`) });
    // Deleting the file is starting over on purpose: the new demo goes to a new folder, the old one stays.
    unlinkSync(db);
    daemon = await startTestDaemon({ home }, { demo: true, noOrchestrator: true });
    const [project] = await daemon.store.projects.list();
    expect(project!.repoPath).toBe(join(home, 'demo', 'greeter-2'));
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(head);
  });

  it('a damaged database is an error naming the file, and nothing is deleted', async () => {
    const { home, repo, head } = await usedHome();
    const db = join(home, 'maestro.db');
    const garbage = Buffer.alloc(64 * 1024, 0x5a);
    writeFileSync(db, garbage);
    await expect(startTestDaemon({ home }, { demo: true, noOrchestrator: true })).rejects.toMatchObject({
      code: 'DATABASE_CORRUPT',
      message: expect.stringContaining(`The SQLite database ${db} is damaged`),
    });
    expect(statSync(db).size).toBe(garbage.length);
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(head);
  });
});

describe('the daemon lock at start', () => {
  let daemon: TestDaemon | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 2000 });
    daemon = null;
    removeTempDirs();
  });

  it('an empty lock (an older start on a full disk) does not block a start', async () => {
    const home = tempDir('maestro-home-');
    writeFileSync(join(home, 'daemon.lock'), '');
    daemon = await startTestDaemon({ home });
    expect(JSON.parse(readFileSync(join(home, 'daemon.lock'), 'utf8')).pid).toBe(process.pid);
  });

  it("a dead owner's lock does not block a start", async () => {
    const home = tempDir('maestro-home-');
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    writeFileSync(join(home, 'daemon.lock'), JSON.stringify({ pid: dead, host: 'x', startedAt: 0 }));
    daemon = await startTestDaemon({ home });
    expect(JSON.parse(readFileSync(join(home, 'daemon.lock'), 'utf8')).pid).toBe(process.pid);
  });
});
