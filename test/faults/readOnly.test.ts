/**
 * A read-only home, on a real tmpfs remounted read-only (chmod does not stop
 * root). At start it is one clear error naming the home; while running it is
 * a health condition that pauses claiming and clears when the home is
 * writable again.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { HealthReport } from '../../src/daemon/health.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { until } from '../helpers/wait.js';
import { cleanEnv, cliJson } from '../cli/helpers.js';
import { mountTmpfs, requireTmpfs, type Tmpfs } from './tmpfs.js';

const mountable = requireTmpfs('faults: read-only home');

describe.skipIf(!mountable)('read-only home', () => {
  let daemon: TestDaemon | null = null;
  let disk: Tmpfs | null = null;
  afterEach(async () => {
    try {
      await daemon?.stop({ graceMs: 2000 });
    } finally {
      daemon = null;
      disk?.setReadOnly(false);
      disk?.unmount();
      disk = null;
      removeTempDirs();
    }
  });

  it('refuses to start with a clear error naming the home, and writes nothing', async () => {
    disk = mountTmpfs(8);
    const home = join(disk.dir, 'home');
    const first = await startTestDaemon({ home });
    await first.stop({ graceMs: 0 });
    const before = readdirSync(home).sort();
    disk.setReadOnly(true);
    await expect(startTestDaemon({ home })).rejects.toMatchObject({ code: 'HOME_READ_ONLY', message: expect.stringContaining(`The Maestro home ${home} is not writable (EROFS)`) });
    // A home that does not exist yet on a read-only disk: the same error, not an EROFS from mkdir.
    const missing = join(disk.dir, 'other');
    await expect(startTestDaemon({ home: missing })).rejects.toMatchObject({ code: 'HOME_READ_ONLY', message: expect.stringContaining(missing) });
    // maestro doctor says the same.
    const doctor = await cliJson<{ ok: boolean; checks: { name: string; status: string; detail: string }[] }>(['doctor', '--url', 'http://127.0.0.1:9'], cleanEnv({ MAESTRO_HOME: home }));
    expect(doctor.code).toBe(1);
    expect(doctor.body.checks.find((c) => c.name === 'home')).toEqual({ name: 'home', status: 'fail', detail: expect.stringContaining(`${home} is not writable (EROFS)`) });
    disk.setReadOnly(false);
    expect(readdirSync(home).sort()).toEqual(before);
  });

  it('a home that turns read-only while running is a health condition; claiming pauses and resumes', async () => {
    disk = mountTmpfs(8);
    const home = join(disk.dir, 'home');
    mkdirSync(home);
    // The database and the log live elsewhere: an open writable file would keep the remount from happening.
    daemon = await startTestDaemon({ home, database: `sqlite:${join(tempDir(), 'maestro.db')}` }, { healthProbeMs: 100, noOrchestrator: true });
    disk.setReadOnly(true);
    const report = await until(daemon.bus, async () => {
      const h = (await daemonRequest<HealthReport>(daemon!, 'GET', '/api/health')).body;
      return h.ok ? null : h;
    }, 'HOME_READ_ONLY on /api/health');
    expect(report.conditions).toEqual([expect.objectContaining({ code: 'HOME_READ_ONLY', message: expect.stringMatching(/is read-only/) })]);
    expect(daemon.health.claimPaused).toBe(true);
    disk.setReadOnly(false);
    await until(daemon.bus, async () => (await daemonRequest<HealthReport>(daemon!, 'GET', '/api/health')).body.ok, 'health ok once writable');
    expect(daemon.health.claimPaused).toBe(false);
  });
});
