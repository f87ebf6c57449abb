/**
 * GET /api/daemons and `maestro daemons` on a lone SQLite daemon: it lists itself with its settings; a registry row
 * whose settings column does not fit the schema (written by another version, or by hand) is listed as unreadable,
 * never taken as settings, and one from before migration 011 as not known; the route is behind the Host, Origin and
 * token checks of every route.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { DaemonList } from '../../src/api/wire/daemons.js';
import { MAESTRO_VERSION } from '../../src/core/daemonSettings.js';
import { registerDaemon } from '../../src/store/ops/daemons.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { removeTempDirs } from '../helpers/db.js';
import { cleanEnv, cli } from '../cli/helpers.js';
import { expectRefusal, send } from '../security/raw.js';
import { makeRepo } from '../helpers/repo.js';

describe('the daemons of a database', () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop();
    d = null;
    removeTempDirs();
  });

  it('lists this daemon with its settings, says which rows it could not read, and asks for the token, a loopback Host and no foreign Origin', async () => {
    d = await startTestDaemon({ name: 'laptop' }, { noOrchestrator: true });
    const now = d.store.clock();
    const row = (name: string, settings: string | null) => d!.store.db.run(`INSERT INTO daemons (name, host, pid, home, started_at, heartbeat_at, settings) VALUES ($1, 'old-host', 7, '/homes/x', $2, $2, $3)`, [name, now, settings]);
    await row('from-before', null);
    await row('hand-written', JSON.stringify({ version: '0.1.0', leaseMs: 'a minute' }));
    await row('not-json', '{"version":');

    const res = await d.fetch('/api/daemons');
    expect(res.status).toBe(200);
    const list = (await res.json()) as DaemonList;
    expect(list.self).toBe('laptop');
    expect(list.daemons.map((x) => [x.name, x.self, x.settings === null, x.unreadable])).toEqual([
      ['from-before', false, true, null],
      ['hand-written', false, true, expect.stringContaining('leaseMs')],
      ['laptop', true, false, null],
      ['not-json', false, true, 'not JSON'],
    ]);
    expect(list.daemons.find((x) => x.self)!.settings).toEqual({ ...list.settings, version: MAESTRO_VERSION });

    const text = await cli(['daemons', '--url', d.url], cleanEnv({ MAESTRO_HOME: d.config.home }));
    expect(text.stderr).toBe('');
    expect(text.stdout).toMatch(/^laptop \(this one\) +live /m);
    expect(text.stdout).toMatch(/^from-before +live +old-host +7 +.* \? +\? +\? +\?$/m);
    expect(text.stdout).toContain('from-before: settings not known (a Maestro from before daemons registered them).');
    expect(text.stdout).toMatch(/^hand-written: its stored settings could not be read \(.*leaseMs.*\)\.$/m);
    expect(text.stdout).toContain('not-json: its stored settings could not be read (not JSON).');

    expectRefusal(await send(d.port, { path: '/api/daemons' }), 401, 'UNAUTHORIZED', 'without a token');
    const bearer = { authorization: `Bearer ${d.token}` };
    expectRefusal(await send(d.port, { path: '/api/daemons', headers: { ...bearer, host: 'evil.example' } }), 403, 'FORBIDDEN', 'a rebinding Host');
    expectRefusal(await send(d.port, { path: '/api/daemons', headers: { ...bearer, origin: 'http://evil.example' } }), 403, 'FORBIDDEN', 'a foreign Origin');
  });

  it("prints another daemon's settings as one line each, and takes none longer than a version is", async () => {
    d = await startTestDaemon({ name: 'laptop' }, { noOrchestrator: true });
    const now = d.store.clock();
    const mine = ((await (await d.fetch('/api/daemons')).json()) as DaemonList).settings;
    const row = (name: string, settings: object) => d!.store.db.run(`INSERT INTO daemons (name, host, pid, home, started_at, heartbeat_at, settings) VALUES ($1, 'h', 7, '/homes/x', $2, $2, $3)`, [name, now, JSON.stringify(settings)]);
    // A row another daemon (or anyone with the database) wrote: a version that runs over lines, one a megabyte long.
    await row('liar', { ...mine, version: '9.9\nStale: laptop (no heartbeat for three leases)' });
    await row('huge', { ...mine, version: 'x'.repeat(1 << 20) });

    const text = await cli(['daemons', '--url', d.url], cleanEnv({ MAESTRO_HOME: d.config.home }));
    expect(text.stderr).toBe('');
    expect(text.stdout).not.toMatch(/^Stale: laptop/m);
    expect(text.stdout).toContain('liar differs from laptop (marked !): version 9.9\\u{a}Stale: laptop (no heartbeat for three leases)');
    expect(text.stdout).toMatch(/^huge: its stored settings could not be read \(version: .*\)\.$/m);
    expect(text.stdout.length).toBeLessThan(10_000);
  });

  it('cuts and escapes a name, host and home written larger than a daemon writes them, and refuses to register them', async () => {
    d = await startTestDaemon({ name: 'laptop' }, { noOrchestrator: true });
    const now = d.store.clock();
    // Written by hand (anyone with the database): a megabyte each, with a terminal escape that would clear the screen.
    const big = (c: string) => `\u001b[2J${c.repeat(1 << 20)}`;
    await d.store.db.run(`INSERT INTO daemons (name, host, pid, home, started_at, heartbeat_at, settings) VALUES ($1, $2, 7, $3, $4, $4, NULL)`, [big('n'), big('h'), big('/'), now]);

    const res = await d.fetch('/api/daemons');
    const body = await res.text();
    expect(body.length).toBeLessThan(20_000);
    const other = (JSON.parse(body) as DaemonList).daemons.find((x) => !x.self)!;
    expect([other.name.length, other.host.length, other.home.length]).toEqual([201, 256, 4097]);
    expect(other.name.endsWith('n…')).toBe(true);

    const text = await cli(['daemons', '--url', d.url], cleanEnv({ MAESTRO_HOME: d.config.home }));
    expect(text.stderr).toBe('');
    expect(text.stdout.length).toBeLessThan(20_000);
    expect(text.stdout).not.toContain('\u001b');
    expect(text.stdout).toContain('\\u{1b}[2Jnnn');

    for (const [column, value] of [['name', 'n'.repeat(201)], ['host', 'h'.repeat(256)], ['home', '/'.repeat(4097)]] as const) {
      const row = { name: 'fine', host: 'fine-host', pid: 1, home: '/homes/fine', now, staleMs: 180_000, [column]: value };
      await expect(registerDaemon(d.store.db, row)).rejects.toThrow(new RegExp(`^This daemon's ${column} is ${value.length} characters long; the daemons registry takes at most ${value.length - 1} `));
    }
    expect(await d.store.db.one(`SELECT name FROM daemons WHERE name = 'fine' OR length(name) > 1000 AND host = 'fine-host'`)).toBeUndefined();
  });

  it("names the daemon holding a task on one line in task show, whatever name it registered with", async () => {
    d = await startTestDaemon({ name: 'laptop' }, { noOrchestrator: true });
    const project = await d.store.projects.create({ name: 'held', repoPath: makeRepo() });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'held elsewhere', complexity: 'easy' });
    // A second daemon started with --name "build-1\nstatus: done" (any text up to 200 characters) claimed it.
    const name = `build-1\nstatus: done\nIt runs on daemon laptop.`;
    await d.store.db.run(`UPDATE tasks SET status = 'executing', claimed_by = $1, claimed_at = $2, attempt = 1, lease_expires_at = $3 WHERE id = $4`, [name, d.store.clock(), d.store.clock() + 60_000, task.id]);

    const shown = await cli(['task', 'show', task.id, '--url', d.url], cleanEnv({ MAESTRO_HOME: d.config.home }));
    expect(shown.stderr).toBe('');
    expect(shown.stdout).toContain('It runs on daemon build-1\\u{a}status: done\\u{a}It runs on daemon laptop., which has stopped.');
    expect(shown.stdout).not.toMatch(/^status: done$/m);
  });
});
