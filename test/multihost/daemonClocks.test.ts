/**
 * Daemons on hosts whose clocks disagree, on one PostgreSQL: `maestro daemons` ages each heartbeat by the database's
 * clock (now()), not by the asked daemon's clock against the writer's. Before, a daemon whose host ran 5 minutes behind
 * was listed "stale" (300 s) while it beat every few seconds, and one 5 minutes ahead "heard 0 s ago" however long
 * it had been silent; a task it held said the same in task show.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { DaemonList } from '../../src/api/wire/daemons.js';
import { beatDaemon, registerDaemon } from '../../src/store/ops/daemons.js';
import { openDatabase } from '../../src/store/open.js';
import { createStore } from '../../src/store/store.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { freshPostgres, pgAvailable, removeTempDirs } from '../helpers/db.js';
import { PG_MISSING } from '../helpers/postgres.js';
import { budget } from '../helpers/budget.js';
import { cli, cleanEnv } from '../cli/helpers.js';

if (!pgAvailable()) process.stderr.write(PG_MISSING);

const MINUTES_5 = 5 * 60_000;

describe.skipIf(!pgAvailable())('daemons whose clocks disagree, on one PostgreSQL', () => {
  const open: { stop: () => Promise<unknown> }[] = [];
  afterEach(async () => {
    for (const x of open.splice(0).reverse()) await x.stop();
    removeTempDirs();
  });

  it('lists a daemon whose host runs 5 minutes behind as live and just heard, and one 5 minutes ahead that went silent as silent', { timeout: budget(120_000) }, async () => {
    const { url, db } = await freshPostgres();
    await db.close();
    const d: TestDaemon = await startTestDaemon({ name: 'here', database: url }, { noOrchestrator: true });
    open.push(d);
    // Two other hosts' daemons (the lease of 60 s: stale after 180 s unheard), each writing with its own host's clock.
    const behind = createStore(openDatabase(url), () => Date.now() - MINUTES_5);
    const ahead = createStore(openDatabase(url), () => Date.now() + MINUTES_5);
    open.push({ stop: () => behind.close() }, { stop: () => ahead.close() });
    const settings = ((await (await d.fetch('/api/daemons')).json()) as DaemonList).settings;
    await registerDaemon(behind.db, { name: 'behind', host: 'slow-host', pid: 1, home: '/h/1', now: behind.clock(), staleMs: 180_000, settings });
    await registerDaemon(ahead.db, { name: 'ahead', host: 'fast-host', pid: 2, home: '/h/2', now: ahead.clock(), staleMs: 180_000, settings });
    await beatDaemon(behind.db, 'behind', behind.clock());
    // `ahead` went silent 4 minutes ago, by the database's clock (as if its last beat were then).
    await ahead.db.run(`UPDATE daemons SET heartbeat_at = heartbeat_at - $1 WHERE name = 'ahead'`, [4 * 60_000]);

    const list = (await (await d.fetch('/api/daemons')).json()) as DaemonList;
    const byName = Object.fromEntries(list.daemons.map((x) => [x.name, x]));
    expect(byName.behind).toMatchObject({ state: 'live' });
    expect(byName.behind!.lastHeardMsAgo).toBeLessThan(60_000);
    expect(byName.ahead).toMatchObject({ state: 'stale' });
    expect(byName.ahead!.lastHeardMsAgo).toBeGreaterThanOrEqual(4 * 60_000);
    expect(byName.ahead!.lastHeardMsAgo).toBeLessThan(5 * 60_000);
    // This daemon's clock and the database's are one machine's here: the skew is small, and not said.
    expect(Math.abs(list.clockSkewMs!)).toBeLessThan(60_000);

    const text = await cli(['daemons', '--url', d.url], cleanEnv({ MAESTRO_HOME: d.config.home }));
    expect(text.stderr).toBe('');
    expect(text.stdout).toMatch(/^behind +live +slow-host +1 +.* \d{1,2} s ago /m);
    expect(text.stdout).toMatch(/^ahead +stale +fast-host +2 +.* 2[45]\d s ago /m);
    expect(text.stdout).toContain('Stale: ahead (');
    expect(text.stdout).not.toContain("by the database's clock");
  });
});
