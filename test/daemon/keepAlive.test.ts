/**
 * A daemon's heartbeat and its claims' leases (Orchestrator.keepAlive): the tick renews them before it takes back
 * expired claims, so a daemon back from a pause longer than its lease (a laptop asleep) keeps its own tasks; and
 * a tick soon after the last renewal writes neither (a tick runs on every task event, on every daemon).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/config.js';
import { Orchestrator } from '../../src/daemon/orchestrator.js';
import { Bus } from '../../src/lib/bus.js';
import { createStore, type Store } from '../../src/store/store.js';
import { freshSqlite, removeTempDirs } from '../helpers/db.js';

const LEASE_MS = 60_000;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  removeTempDirs();
});

async function heartbeatOf(store: Store, name: string): Promise<number> {
  const [row] = await store.db.all<{ heartbeat_at: number }>(`SELECT heartbeat_at FROM daemons WHERE name = $1`, [name]);
  return Number(row?.heartbeat_at);
}

it('a tick after a pause longer than the lease renews this daemon’s claims before it takes back expired ones; a tick soon after a renewal writes no heartbeat', async () => {
  let now = 1_000_000;
  const { db } = await freshSqlite();
  const store = createStore(db, () => now);
  cleanups.push(() => store.close());
  const home = mkdtempSync(join(tmpdir(), 'maestro-keepalive-'));
  // No slots: the tick claims and starts nothing, so only the leases and the heartbeat are at stake.
  const config = { ...resolveConfig({ home }, {}), name: 'd1', leaseMs: LEASE_MS, maxConcurrentRuns: 0 };
  const errors: Error[] = [];
  const orchestrator = new Orchestrator(store, new Bus(), config, { env: {}, onChange: () => {}, onError: (e) => errors.push(e) });
  cleanups.push(() => orchestrator.stop({ graceMs: 0 }));
  await orchestrator.register();
  const project = await store.projects.create({ name: 'p', repoPath: home });
  const task = await store.tasks.create({ projectId: project.id, title: 'held' });
  expect((await store.tasks.claim(task.id, 'd1', LEASE_MS)).won).toBe(true);

  await orchestrator.tick();
  const beat = await heartbeatOf(store, 'd1');
  expect(beat).toBe(now);
  now += 1000;
  await orchestrator.tick();
  expect(await heartbeatOf(store, 'd1')).toBe(beat); // a second later: nothing to renew yet

  now += 2 * LEASE_MS; // asleep: the lease and the timer's renewals all lapsed
  await orchestrator.tick();
  const after = await store.tasks.get(task.id);
  expect(after).toMatchObject({ status: 'queued', claimedBy: 'd1', leaseExpiresAt: now + LEASE_MS });
  expect(await heartbeatOf(store, 'd1')).toBe(now);
  expect(errors).toEqual([]);
});
