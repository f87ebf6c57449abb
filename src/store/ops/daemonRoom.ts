/**
 * Which other live daemons have a run slot free, as the registry shows them: for a busy daemon's expiry to leave a
 * takeover to one of them (ops/claim.ts expireClaims) rather than take a task it cannot start.
 *
 * A daemon's load is its runs with status running plus the tasks it holds in flight with no run (each waits for one
 * of its slots: a task taken over by a busy daemon, a stage between runs); its room is its maxConcurrentRuns less its
 * reserved conflict slots, from the settings it registered (migration 011). A daemon with no readable settings (an
 * earlier version) is not counted: nothing says it has room. Live: heard from within `withinMs`, by the registry's
 * clock (the database's on PostgreSQL).
 */
import { IN_FLIGHT_STATUSES } from '../../core/status.js';
import type { Queryable } from '../db.js';
import { dbNow } from './dbClock.js';
import { readSettings } from './daemons.js';

/** Statuses in which a claimed task holds (or waits for) one of its daemon's run slots; merging runs under the merge lease. */
const HOLDING = IN_FLIGHT_STATUSES.filter((s) => s !== 'merging')
  .map((s) => `'${s}'`)
  .join(', ');

/** The names of the daemons other than `me` heard from within `withinMs` that have a run slot free. */
export async function daemonsWithRoom(q: Queryable, opts: { me: string; now: number; withinMs: number }): Promise<string[]> {
  const live = await q.all<{ name: string; settings: string | null }>(
    `SELECT name, settings FROM daemons WHERE name <> $1 AND heartbeat_at >= ${dbNow(q, '$2')} - $3`,
    [opts.me, opts.now, opts.withinMs],
  );
  if (!live.length) return [];
  const names = live.map((d) => d.name);
  const marks = names.map((_, i) => `$${i + 1}`).join(', ');
  const loads = await q.all<{ owner: string; n: number }>(
    `SELECT owner, COUNT(*) AS n FROM (
       SELECT owner FROM runs WHERE status = 'running' AND owner IN (${marks})
       UNION ALL
       SELECT claimed_by AS owner FROM tasks WHERE claimed_by IN (${marks}) AND status IN (${HOLDING})
         AND NOT EXISTS (SELECT 1 FROM runs WHERE runs.task_id = tasks.id AND runs.status = 'running')
     ) held GROUP BY owner`,
    names,
  );
  const load = new Map(loads.map((r) => [r.owner, Number(r.n)]));
  return live.flatMap((d) => {
    const { settings } = readSettings(d.settings);
    return settings && settings.maxConcurrentRuns - settings.reservedConflictSlots - (load.get(d.name) ?? 0) > 0 ? [d.name] : [];
  });
}
