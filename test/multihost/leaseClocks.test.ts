/**
 * Leases on hosts whose clocks disagree, on one PostgreSQL: a task's claim, its failure backoff and a project's
 * merge lease are stamped and compared by the database's clock (src/store/ops/dbClock.ts), not by each daemon's. Before, a daemon whose
 * host ran 5 minutes ahead saw every other daemon's lease as expired and took their tasks and merge leases; one
 * running behind stamped leases that held for 5 minutes after its daemon died.
 *
 * Each daemon here is a store handle on the same database with its host's clock (as daemonClocks.test.ts skews one).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mergeLeaseHeldElsewhere, releaseMergeLease, takeMergeLease } from '../../src/store/ops/daemons.js';
import { openDatabase } from '../../src/store/open.js';
import { createStore, type Store } from '../../src/store/store.js';
import { freshPostgres, pgAvailable, removeTempDirs } from '../helpers/db.js';
import { PG_MISSING } from '../helpers/postgres.js';
import { budget } from '../helpers/budget.js';
import { poll } from '../helpers/wait.js';

if (!pgAvailable()) process.stderr.write(PG_MISSING);

const MINUTES_5 = 5 * 60_000;
const LEASE_MS = 60_000;
/** A backoff shorter than the host ahead's lead, longer than the test takes. */
const BACKOFF_MS = 2 * 60_000;
/** A lease (or backoff) that really ends while the test waits. */
const SHORT_MS = 300;

describe.skipIf(!pgAvailable())('leases of daemons whose clocks disagree, on one PostgreSQL', () => {
  const open: Store[] = [];
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
    removeTempDirs();
  });

  /** `here` runs on the database's host's time; `ahead` on a host whose clock runs 5 minutes ahead. */
  async function twoHosts() {
    const { url, db } = await freshPostgres();
    await db.close();
    const here = createStore(openDatabase(url));
    const ahead = createStore(openDatabase(url), () => Date.now() + MINUTES_5);
    open.push(here, ahead);
    const project = await here.projects.create({ name: 'demo', repoPath: '/repos/demo' });
    return { here, ahead, project };
  }

  it('a claim within its lease is not expired by a daemon 5 minutes ahead; a lease that ran out is, from either host', { timeout: budget(120_000) }, async () => {
    const { here, ahead, project } = await twoHosts();
    const held = await here.tasks.create({ projectId: project.id, title: 'held by here' });
    expect(await here.tasks.claim(held.id, 'here', LEASE_MS)).toEqual({ won: true, attempt: 1 });

    // `ahead` expires (and would take over) what it thinks is past due: nothing is.
    expect(await ahead.tasks.expireClaims({ owner: 'ahead', leaseMs: LEASE_MS })).toEqual([]);
    expect(await here.tasks.get(held.id)).toMatchObject({ status: 'queued', claimedBy: 'here', attempt: 1 });
    // Its holder's fence still holds, and its lease, seen from the host ahead, ends in about a minute.
    expect(await here.tasks.heartbeat({ id: held.id, owner: 'here', attempt: 1 }, LEASE_MS)).toBe(true);
    expect(await here.tasks.advance({ id: held.id, owner: 'here', attempt: 1 }, 'queued', 'executing')).toBe(true);
    const left = await ahead.tasks.leaseEndsIn(held.id);
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(LEASE_MS);

    // A lease that really ran out is expired by the host ahead…
    const short = await here.tasks.create({ projectId: project.id, title: 'short lease by here' });
    await here.tasks.claim(short.id, 'here', SHORT_MS);
    await poll(async () => (await ahead.tasks.expireClaims({ owner: 'ahead', leaseMs: LEASE_MS })).includes(short.id), 'the host ahead expires a lease that ran out', 30_000);
    // Leases the host ahead stamps (its scheduler's claim, its renewals) end a lease from now, seen from here.
    const byAhead = await here.tasks.create({ projectId: project.id, title: 'held by ahead' });
    expect(await ahead.tasks.claimBest({ ranked: [{ id: byAhead.id, projectId: project.id }], owner: 'ahead', leaseMs: LEASE_MS, max: 1 })).toMatchObject([{ id: byAhead.id, attempt: 1 }]);
    expect(await here.tasks.leaseEndsIn(byAhead.id)).toBeLessThanOrEqual(LEASE_MS);
    expect(await ahead.tasks.renewOwnedLeases('ahead', LEASE_MS)).toBe(1);
    expect(await ahead.tasks.heartbeat({ id: byAhead.id, owner: 'ahead', attempt: 1 }, LEASE_MS)).toBe(true);
    expect(await here.tasks.leaseEndsIn(byAhead.id)).toBeLessThanOrEqual(LEASE_MS);
    // …and one the host ahead took runs out for the other host when it ends (not 5 minutes later).
    const fromAhead = await here.tasks.create({ projectId: project.id, title: 'short lease by ahead' });
    await ahead.tasks.claimBest({ ranked: [{ id: fromAhead.id, projectId: project.id }], owner: 'ahead', leaseMs: SHORT_MS, max: 1 });
    await poll(async () => (await here.tasks.expireClaims({ owner: 'here', leaseMs: LEASE_MS })).includes(fromAhead.id), 'here expires the lease the host ahead let run out', 30_000);
    expect(await here.tasks.get(fromAhead.id)).toMatchObject({ status: 'ready', claimedBy: null, lastRunError: 'lease expired: the claimer stopped heartbeating' });
    expect(await here.tasks.get(held.id)).toMatchObject({ status: 'executing', claimedBy: 'here', attempt: 1 });
  });

  it('a backoff is kept by a daemon 5 minutes ahead; one that ended is over for either host', { timeout: budget(120_000) }, async () => {
    const { here, ahead, project } = await twoHosts();
    const one = (s: Store, id: string) => s.tasks.claimBest({ ranked: [{ id, projectId: project.id }], owner: s === here ? 'here' : 'ahead', leaseMs: LEASE_MS, max: 1 });
    const claimableBy = async (s: Store) => ({ tasks: (await s.tasks.claimable()).map((t) => t.id), stamps: (await s.tasks.claimableStamps()).map((t) => t.id) });
    const failed = await here.tasks.create({ projectId: project.id, title: 'failed by here' });
    await here.tasks.claim(failed.id, 'here', LEASE_MS);
    expect(await here.tasks.fail({ id: failed.id, owner: 'here', attempt: 1 }, 'boom', BACKOFF_MS)).toBe(true);

    // The host ahead sees its backoff on every path a scheduler takes: not listed, not claimed.
    expect(await claimableBy(ahead)).toEqual({ tasks: [], stamps: [] });
    expect(await one(ahead, failed.id)).toEqual([]);
    expect(await ahead.tasks.claim(failed.id, 'ahead', LEASE_MS)).toEqual({ won: false, attempt: 0 });
    expect(await here.tasks.get(failed.id)).toMatchObject({ status: 'ready', claimedBy: null, attempt: 1, lastRunError: 'boom' });

    // A short backoff the host ahead stamps ends for the other host when it ends (not 5 minutes later)…
    const byAhead = await here.tasks.create({ projectId: project.id, title: 'failed by ahead' });
    await ahead.tasks.claim(byAhead.id, 'ahead', LEASE_MS);
    expect(await ahead.tasks.fail({ id: byAhead.id, owner: 'ahead', attempt: 1 }, 'boom', SHORT_MS)).toBe(true);
    await poll(async () => (await claimableBy(here)).stamps.includes(byAhead.id), 'here sees the backoff the host ahead stamped end', 30_000);
    expect(await claimableBy(here)).toEqual({ tasks: [byAhead.id], stamps: [byAhead.id] });
    expect(await one(here, byAhead.id)).toMatchObject([{ id: byAhead.id, attempt: 2 }]);
    // …and the first one's, once it has really ended, for the host ahead.
    await here.db.run(`UPDATE tasks SET next_eligible_at = next_eligible_at - $1 WHERE id = $2`, [BACKOFF_MS, failed.id]);
    expect(await ahead.tasks.claim(failed.id, 'ahead', LEASE_MS)).toEqual({ won: true, attempt: 2 });
  });

  it("a merge lease within its time is not taken by a daemon 5 minutes ahead; one that ran out is, from either host", { timeout: budget(120_000) }, async () => {
    const { here, ahead, project } = await twoHosts();
    const lease = (s: Store, owner: string, leaseMs: number) => takeMergeLease(s.db, { projectId: project.id, owner, now: s.clock(), leaseMs });

    expect(await lease(here, 'here', LEASE_MS)).toBe(true);
    expect(await lease(ahead, 'ahead', LEASE_MS)).toBe(false);
    expect(await mergeLeaseHeldElsewhere(ahead.db, { projectId: project.id, owner: 'ahead', now: ahead.clock() })).toBe(true);
    expect(await here.db.all(`SELECT owner FROM merge_locks`)).toEqual([{ owner: 'here' }]);
    await releaseMergeLease(here.db, project.id, 'here');

    // The host ahead takes a short lease: when it runs out, here takes the project's merges (not 5 minutes later).
    expect(await lease(ahead, 'ahead', SHORT_MS)).toBe(true);
    await poll(() => lease(here, 'here', LEASE_MS), 'here takes the merge lease the host ahead let run out', 30_000);
    // And here's, let run out, is the host ahead's.
    await releaseMergeLease(here.db, project.id, 'here');
    expect(await lease(here, 'here', SHORT_MS)).toBe(true);
    await poll(() => lease(ahead, 'ahead', LEASE_MS), 'the host ahead takes a merge lease that ran out', 30_000);
    expect(await mergeLeaseHeldElsewhere(here.db, { projectId: project.id, owner: 'here', now: here.clock() })).toBe(true);
  });
});
