/**
 * The daemon registry and the per-project merge lease, for several daemons on
 * one database. A name is held while its heartbeat is fresh; a second daemon
 * with a live name is refused at start. The merge lease is a compare-and-set
 * on one row: taken when free, expired, or already ours.
 */
import { DAEMON_ROW_LIMITS, daemonSettingsSchema, type DaemonSettings } from '../../core/daemonSettings.js';
import { MaestroError } from '../../core/errors.js';
import type { Queryable } from '../db.js';
import { dbNow } from './dbClock.js';

/**
 * The registry's clock, and the merge lease's: the database's on PostgreSQL (ops/dbClock.ts). The daemons' hosts may
 * disagree by minutes: a heartbeat stamped by its writer's clock and aged by the reader's said "heard in 5 minutes",
 * or "stale" of a live daemon; a merge lease taken by a host running behind held the project for minutes after its
 * daemon died, and one running ahead took a live daemon's lease in the middle of its merge.
 */
const registryNow = dbNow;

/**
 * A daemon is alive while heard from within this many of its leases (registerDaemon frees its name after that, a
 * train takes over what it owed: conflictHeldElsewhere, and the registry listing calls it stale).
 */
export const DAEMON_STALE_LEASES = 3;

/** A registry text as read back: at most its limit (and `…`); only a database writer can make it longer. */
function capped(column: 'name' | 'host' | 'home'): string {
  return `substr(${column}, 1, ${DAEMON_ROW_LIMITS[column] + 1}) AS ${column}`;
}

function cut(text: string, column: 'name' | 'host' | 'home'): string {
  return text.length > DAEMON_ROW_LIMITS[column] ? `${text.slice(0, DAEMON_ROW_LIMITS[column])}…` : text;
}

/** Refuses a registry row over its limits before it is written: every listing prints these columns. */
function assertRowFits(d: { name: string; host: string; home: string }): void {
  for (const column of ['name', 'host', 'home'] as const) {
    if (d[column].length > DAEMON_ROW_LIMITS[column]) {
      throw new MaestroError('CONFIG_INVALID', `This daemon's ${column} is ${d[column].length} characters long; the daemons registry takes at most ${DAEMON_ROW_LIMITS[column]} (${column === 'home' ? 'MAESTRO_HOME, --home' : column === 'name' ? 'MAESTRO_NAME, --name' : "the machine's host name"}).`, { details: { [column]: d[column].slice(0, 80) } });
    }
  }
}

/** `settings`: what it runs with, for the other daemons to compare (core/daemonSettings.ts); null for none. */
export async function registerDaemon(db: Queryable, d: { name: string; host: string; pid: number; home: string; now: number; staleMs: number; settings?: DaemonSettings | null }): Promise<void> {
  assertRowFits(d);
  const now = registryNow(db, '$5');
  const rows = await db.all<{ name: string }>(
    `INSERT INTO daemons (name, host, pid, home, started_at, heartbeat_at, settings) VALUES ($1, $2, $3, $4, ${now}, ${now}, $7)
     ON CONFLICT (name) DO UPDATE SET host = excluded.host, pid = excluded.pid, home = excluded.home, started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at, settings = excluded.settings
     WHERE daemons.heartbeat_at < ${now} - $6 OR (daemons.host = excluded.host AND daemons.home = excluded.home)
     RETURNING name`,
    [d.name, d.host, d.pid, d.home, d.now, d.staleMs, d.settings ? JSON.stringify(d.settings) : null],
  );
  if (rows.length) return;
  const other = await db.one<{ host: string; pid: number; home: string; heard_ms_ago: number }>(`SELECT ${capped('host')}, pid, ${capped('home')}, ${registryNow(db, '$2')} - heartbeat_at AS heard_ms_ago FROM daemons WHERE name = $1`, [d.name, d.now]);
  throw new MaestroError(
    'CONFIG_INVALID',
    `Another daemon named "${d.name}" is alive on this database (host ${cut(other?.host ?? '?', 'host')}, pid ${other?.pid}, home ${cut(other?.home ?? '?', 'home')}, last heartbeat ${Math.round(Math.max(0, Number(other?.heard_ms_ago ?? 0)) / 1000)} s ago). Give this one another name with --name or MAESTRO_NAME.`,
    { details: { name: d.name } },
  );
}

export async function beatDaemon(db: Queryable, name: string, now: number): Promise<void> {
  await db.run(`UPDATE daemons SET heartbeat_at = ${registryNow(db, '$1')} WHERE name = $2`, [now, name]);
}

/** How long ago (by the registry's clock) the daemon of that name beat its heartbeat; null when none of that name runs (a stop takes its name off). */
export async function daemonLastHeard(db: Queryable, name: string, now: number): Promise<number | null> {
  const row = await db.one<{ heard_ms_ago: number }>(`SELECT ${registryNow(db, '$2')} - heartbeat_at AS heard_ms_ago FROM daemons WHERE name = $1`, [name, now]);
  return row ? Math.max(0, Number(row.heard_ms_ago)) : null;
}

/** A daemon of the registry, with its settings as read back (null: none stored, or `unreadable` says why not). */
export interface RegisteredDaemon {
  name: string;
  host: string;
  pid: number;
  home: string;
  startedAt: number;
  heartbeatAt: number;
  /** How long ago it beat its heartbeat, by the registry's clock (registryNow): never another host's clock against this one's. */
  heardMsAgo: number;
  /** Its runs with status running (a worker of its own at work). */
  runsInFlight: number;
  settings: DaemonSettings | null;
  /** Why the stored settings were not taken (not JSON, or not of core/daemonSettings.ts's shape); null when they were, or none were stored. */
  unreadable: string | null;
}

/**
 * The daemons heard from in the last `withinMs`, by name, with their runs in flight, their name, host and home cut to their limits (a
 * megabyte written there by hand is not read whole); and the registry's clock now (`now`, the database's on
 * PostgreSQL), so that the caller can say how far its own clock is from it.
 */
export async function listDaemons(db: Queryable, opts: { now: number; withinMs: number }): Promise<{ now: number; daemons: RegisteredDaemon[] }> {
  const now = registryNow(db, '$1');
  const clock = await db.one<{ now: number }>(`SELECT ${now} AS now`, [opts.now]);
  const rows = await db.all<{ name: string; host: string; pid: number; home: string; started_at: number; heartbeat_at: number; heard_ms_ago: number; settings: string | null }>(
    `SELECT ${capped('name')}, ${capped('host')}, pid, ${capped('home')}, started_at, heartbeat_at, ${now} - heartbeat_at AS heard_ms_ago, settings FROM daemons WHERE heartbeat_at >= ${now} - $2 ORDER BY name`,
    [opts.now, opts.withinMs],
  );
  // One pass over the runs for all daemons (no index on status: the listing is asked for by a person, not a loop).
  const inFlight = new Map((await db.all<{ owner: string; n: number }>(`SELECT owner, COUNT(*) AS n FROM runs WHERE status = 'running' AND owner IS NOT NULL GROUP BY owner`)).map((r) => [r.owner, Number(r.n)]));
  const daemons = rows.map((r) => ({
    name: cut(r.name, 'name'),
    host: cut(r.host, 'host'),
    pid: Number(r.pid),
    home: cut(r.home, 'home'),
    startedAt: Number(r.started_at),
    heartbeatAt: Number(r.heartbeat_at),
    heardMsAgo: Math.max(0, Number(r.heard_ms_ago)),
    runsInFlight: inFlight.get(r.name) ?? 0,
    ...readSettings(r.settings),
  }));
  return { now: Number(clock?.now ?? opts.now), daemons };
}

/**
 * The registered daemons of those names, stale or not, with what a task's detail says of them (host, home, settings):
 * rows by name only, no count of runs (the detail is read at every look at a task; `listDaemons` is a person's listing).
 */
export async function daemonsNamed(db: Queryable, names: readonly string[]): Promise<Map<string, Pick<RegisteredDaemon, 'host' | 'home' | 'settings' | 'unreadable'>>> {
  const unique = [...new Set(names)];
  if (!unique.length) return new Map();
  const rows = await db.all<{ name: string; host: string; home: string; settings: string | null }>(
    `SELECT name, ${capped('host')}, ${capped('home')}, settings FROM daemons WHERE name IN (${unique.map((_, i) => `$${i + 1}`).join(', ')})`,
    unique,
  );
  return new Map(rows.map((r) => [r.name, { host: cut(r.host, 'host'), home: cut(r.home, 'home'), ...readSettings(r.settings) }]));
}

/** The settings column checked against the schema: a row written by another version, or by hand, may not fit. */
export function readSettings(text: string | null): { settings: DaemonSettings | null; unreadable: string | null } {
  if (text === null) return { settings: null, unreadable: null };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { settings: null, unreadable: 'not JSON' };
  }
  const parsed = daemonSettingsSchema.safeParse(value);
  if (parsed.success) return { settings: parsed.data, unreadable: null };
  return { settings: null, unreadable: parsed.error.issues.map((i) => `${i.path.join('.') || 'settings'}: ${i.message}`).join('; ') };
}

export async function unregisterDaemon(db: Queryable, name: string): Promise<void> {
  await db.run(`DELETE FROM daemons WHERE name = $1`, [name]);
}

export async function takeMergeLease(db: Queryable, opts: { projectId: string; owner: string; now: number; leaseMs: number }): Promise<boolean> {
  const rows = await db.all<{ owner: string }>(
    `INSERT INTO merge_locks (project_id, owner, expires_at) VALUES ($1, $2, ${registryNow(db, '$4')} + $3)
     ON CONFLICT (project_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
     WHERE merge_locks.expires_at < ${registryNow(db, '$4')} OR merge_locks.owner = excluded.owner
     RETURNING owner`,
    [opts.projectId, opts.owner, opts.leaseMs, opts.now],
  );
  return rows[0]?.owner === opts.owner;
}

/** Whether another daemon holds the project's merge lease now (a read: takeMergeLease writes even when it fails). */
export async function mergeLeaseHeldElsewhere(db: Queryable, opts: { projectId: string; owner: string; now: number }): Promise<boolean> {
  return !!(await db.one(`SELECT 1 AS yes FROM merge_locks WHERE project_id = $1 AND owner <> $2 AND expires_at >= ${registryNow(db, '$3')}`, [opts.projectId, opts.owner, opts.now]));
}

export async function releaseMergeLease(db: Queryable, projectId: string, owner: string): Promise<void> {
  await db.run(`DELETE FROM merge_locks WHERE project_id = $1 AND owner = $2`, [projectId, owner]);
}

/**
 * Whether another daemon, still alive, found the task's latest merge conflict (or that its merge must be checked,
 * daemon/mergeQueue.ts) and has not started its conflict run (merge check) yet (it waits for its merge lease to be
 * released, or for a free slot). The task's events say it: the `merge.conflict` (`merge.check`) that daemon recorded under the lease, and no `run.started` or status change after it (event
 * ids, not clocks: the daemons' hosts may disagree on the time). A daemon that died owes nothing. The event's type
 * when one is owed, else null.
 */
export async function conflictHeldElsewhere(db: Queryable, opts: { taskId: string; me: string; now: number; staleMs: number }): Promise<'merge.conflict' | 'merge.check' | null> {
  const found = await db.one<{ id: number | string; type: 'merge.conflict' | 'merge.check'; payload: string }>(`SELECT id, type, payload FROM events WHERE task_id = $1 AND type IN ('merge.conflict', 'merge.check') ORDER BY id DESC LIMIT 1`, [opts.taskId]);
  if (!found) return null;
  const owner = (JSON.parse(found.payload) as { owner?: unknown }).owner;
  if (typeof owner !== 'string' || owner === opts.me) return null;
  // Its run started, or the task moved on (a person was asked instead, then retried it): nothing is owed.
  const after = await db.one(`SELECT 1 AS yes FROM events WHERE task_id = $1 AND type IN ('run.started', 'task.status') AND id > $2 LIMIT 1`, [opts.taskId, found.id]);
  if (after) return null;
  return (await daemonAlive(db, { name: owner, now: opts.now, staleMs: opts.staleMs })) ? found.type : null;
}

/**
 * Whether the daemon of that name is alive: registered, and heard from within `staleMs` by the registry's clock. A
 * stop takes its name off; a kill -9 leaves its heartbeat to go stale. What another daemon's train owes is taken
 * over once this says no (conflictHeldElsewhere).
 */
export async function daemonAlive(db: Queryable, opts: { name: string; now: number; staleMs: number }): Promise<boolean> {
  return !!(await db.one(`SELECT 1 AS yes FROM daemons WHERE name = $1 AND heartbeat_at >= ${registryNow(db, '$2')} - $3`, [opts.name, opts.now, opts.staleMs]));
}
