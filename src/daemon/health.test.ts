import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MaestroError } from '../core/errors.js';
import { removeTempDirs, tempDir } from '../../test/helpers/db.js';
import { conditionOf, HealthMonitor, type HealthReport } from './health.js';
import { LogFile } from './logSink.js';

afterEach(() => removeTempDirs());

describe('HealthMonitor', () => {
  it('classifies node, SQLite and catalogue errors; anything else is not a condition', () => {
    expect(conditionOf(Object.assign(new Error('x'), { code: 'ENOSPC' }))).toBe('DISK_FULL');
    expect(conditionOf(Object.assign(new Error('x'), { code: 'SQLITE_FULL' }))).toBe('DISK_FULL');
    expect(conditionOf(new MaestroError('DISK_FULL', 'x'))).toBe('DISK_FULL');
    expect(conditionOf(Object.assign(new Error('x'), { code: 'EROFS' }))).toBe('HOME_READ_ONLY');
    expect(conditionOf(Object.assign(new Error('x'), { code: 'EACCES' }))).toBeNull();
    expect(conditionOf(null)).toBeNull();
  });

  it('a noticed fault pauses claiming once per disk; the probe clears it when the folder takes writes, and leaves no file', () => {
    const home = tempDir();
    const reports: HealthReport[] = [];
    const monitor = new HealthMonitor({ dirs: [home], probeMs: 60_000, now: () => 42, onChange: (r) => reports.push(r) });
    const full = Object.assign(new Error('no space'), { code: 'ENOSPC', path: join(home, 'logs', 'daemon.log') });
    expect(monitor.notice(full)).toBe(true);
    expect(monitor.notice(full)).toBe(true);
    expect(monitor.notice(new Error('other'))).toBe(false);
    expect(monitor.claimPaused).toBe(true);
    expect(reports).toEqual([{ ok: false, conditions: [{ code: 'DISK_FULL', path: join(home, 'logs', 'daemon.log'), message: expect.stringContaining('No space left'), since: 42 }] }]);
    monitor.probe();
    expect(monitor.claimPaused).toBe(false);
    expect(reports.at(-1)).toEqual({ ok: true, conditions: [] });
    expect(readdirSync(home)).toEqual([]);
  });

  it('an unreachable shared remote is a condition of its own: reported once per change, and it pauses no claiming', () => {
    const reports: HealthReport[] = [];
    const monitor = new HealthMonitor({ dirs: [tempDir()], probeMs: 60_000, now: () => 7, onChange: (r) => reports.push(r) });
    monitor.remote('p1', { path: '/srv/git/web.git', message: 'The shared remote /srv/git/web.git of project web cannot be reached: …' });
    monitor.remote('p1', { path: '/srv/git/web.git', message: 'said again' });
    expect(monitor.claimPaused).toBe(false);
    expect(reports).toEqual([{ ok: false, conditions: [{ code: 'REMOTE_UNREACHABLE', path: '/srv/git/web.git', message: expect.stringContaining('cannot be reached'), since: 7, projectId: 'p1' }] }]);
    monitor.probe(); // the probe decides the disk's conditions only
    expect(monitor.report().conditions).toHaveLength(1);
    monitor.remote('p1', null);
    monitor.remote('p1', null);
    expect(reports).toHaveLength(2);
    expect(reports[1]).toEqual({ ok: true, conditions: [] });
  });

  it("a project's missing folder is one too, said with the whole list at each tick: reported once per change, pausing no claiming", () => {
    const reports: HealthReport[] = [];
    let now = 7;
    const monitor = new HealthMonitor({ dirs: [tempDir()], probeMs: 60_000, now: () => now, onChange: (r) => reports.push(r) });
    const gone = { projectId: 'p1', path: '/home/me/web', message: 'The folder /home/me/web of project web is gone (moved or deleted): …' };
    monitor.projectFolders([]);
    monitor.projectFolders([gone]);
    now = 8;
    monitor.projectFolders([gone]);
    expect(monitor.claimPaused).toBe(false);
    expect(reports).toEqual([{ ok: false, conditions: [{ code: 'PROJECT_FOLDER_MISSING', path: '/home/me/web', message: gone.message, since: 7, projectId: 'p1' }] }]);
    // Another one goes missing: the first keeps its time; then both are back.
    monitor.projectFolders([gone, { ...gone, projectId: 'p2', path: '/home/me/api', message: 'The folder /home/me/api …' }]);
    expect(reports.at(-1)!.conditions.map((c) => [c.path, c.since])).toEqual([['/home/me/web', 7], ['/home/me/api', 8]]);
    monitor.projectFolders([]);
    monitor.projectFolders([]);
    expect(reports).toHaveLength(3);
    expect(reports[2]).toEqual({ ok: true, conditions: [] });
  });
});

describe('LogFile', () => {
  it.skipIf(!existsSync('/dev/full'))('reports a failed write (ENOSPC on /dev/full) instead of emitting an error, and keeps taking lines', async () => {
    const faults: string[] = [];
    const errors: Error[] = [];
    const file = new LogFile('/dev/full', (err) => faults.push(err.code ?? ''));
    file.on('error', (err) => errors.push(err));
    file.write('one\n');
    file.write('two\n');
    await new Promise<void>((resolve) => file.end(resolve));
    expect(faults).toEqual(['ENOSPC', 'ENOSPC']);
    expect(errors).toEqual([]);
  });
});
